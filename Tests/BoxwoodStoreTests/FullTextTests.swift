import Testing
import Foundation
@testable import BoxwoodStore
@testable import BoxwoodFullText

/// Fixed-expectation tests of the full-text index API: matching, order, replacement, filters, removal,
/// transactions and bad input.
@Suite struct FullTextTests {
    let ft = ValueBoxFullTextTable(id: 41)

    /// The (collectionId, itemId) pairs a query returns, in order.
    private func match(_ box: ValueBox, _ query: String, collection: String? = nil, tags: String? = nil,
                       table: ValueBoxFullTextTable? = nil) throws -> [String] {
        var out: [String] = []
        try box.fullTextMatch(table ?? ft, collectionId: collection, query: query, tags: tags) { _, item in
            out.append(item)
            return true
        }
        return out
    }

    /// Every key and value of the engine tables behind full-text tables (negative ids).
    private func internalBytes(_ box: ValueBox) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        let meta = try FullTextTables(ft).meta.id  // the layout entry holds no text
        for table in try box.allTables() where table.id < 0 && table.id != meta {
            for (key, value) in try box.allEntries(table) { out.append(key); out.append(value) }
        }
        return out
    }

    private func containsBytes(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<$0 + needle.count]) == needle }
    }

    @Test func findsWordsPrefixesAndPhrases() throws {
        try withTemporaryBox("fts-basic") { box, _ in
            try box.begin()
            try box.fullTextSet(ft, collectionId: "p1", itemId: "p1a0b1", contents: "Crème Brûlée for dessert", tags: "")
            try box.fullTextSet(ft, collectionId: "p1", itemId: "p1a0b2", contents: "Привет, мир! 🎉", tags: "")
            try box.fullTextSet(ft, collectionId: "p2", itemId: "p2a0b1", contents: "東京タワーへ行く", tags: "")
            try box.commit()
            #expect(try match(box, "creme") == ["p1a0b1"])
            #expect(try match(box, "CRÈME brul*") == ["p1a0b1"])
            #expect(try match(box, "\"creme brulee\"") == ["p1a0b1"])
            #expect(try match(box, "\"brulee creme\"").isEmpty)
            #expect(try match(box, "\"creme for\"").isEmpty)
            #expect(try match(box, "creme dessert") == ["p1a0b1"])
            #expect(try match(box, "creme missing").isEmpty)
            #expect(try match(box, "ПРИВЕТ") == ["p1a0b2"])
            #expect(try match(box, "мир*") == ["p1a0b2"])
            #expect(try match(box, "🎉") == ["p1a0b2"])
            #expect(try match(box, "タワー") == ["p2a0b1"])
            #expect(try match(box, "京タ*") == ["p2a0b1"])
            #expect(try match(box, "タ東").isEmpty)
            // Postbox's sanitised query form.
            #expect(try match(box, "Crème  Brû*") == ["p1a0b1"])
            #expect(try match(box, "").isEmpty)
            #expect(try match(box, "  ,;  ").isEmpty)
        }
    }

    @Test func newestFirstAndReplaceInsteadOfDuplicate() throws {
        try withTemporaryBox("fts-order") { box, _ in
            try box.begin()
            for n in 1...5 { try box.fullTextSet(ft, collectionId: "p1", itemId: "m\(n)", contents: "hello number \(n)", tags: "") }
            try box.commit()
            #expect(try match(box, "hello") == ["m5", "m4", "m3", "m2", "m1"])
            try box.begin()
            try box.fullTextSet(ft, collectionId: "p1", itemId: "m2", contents: "hello again, edited", tags: "")
            try box.commit()
            #expect(try match(box, "hello") == ["m2", "m5", "m4", "m3", "m1"])
            #expect(try match(box, "number 2").isEmpty)
            #expect(try match(box, "edited") == ["m2"])
            // The callback stops the query.
            var seen: [String] = []
            try box.fullTextMatch(ft, collectionId: nil, query: "hello", tags: nil) { _, item in seen.append(item); return seen.count < 2 }
            #expect(seen == ["m2", "m5"])
        }
    }

    @Test func collectionAndTagFilters() throws {
        try withTemporaryBox("fts-filters") { box, _ in
            try box.begin()
            try box.fullTextSet(ft, collectionId: "p1", itemId: "a", contents: "photo of the beach", tags: "t1 t4")
            try box.fullTextSet(ft, collectionId: "p2", itemId: "b", contents: "beach day", tags: "t4")
            try box.fullTextSet(ft, collectionId: "p1", itemId: "c", contents: "the beach again", tags: "t2")
            try box.commit()
            #expect(try match(box, "beach") == ["c", "b", "a"])
            #expect(try match(box, "beach", collection: "p1") == ["c", "a"])
            #expect(try match(box, "beach", collection: "p3").isEmpty)
            #expect(try match(box, "beach", collection: "p1", tags: "t4") == ["a"])
            #expect(try match(box, "beach", tags: "t4") == ["b", "a"])
            #expect(try match(box, "beach", tags: "t1 t4") == ["a"])
            #expect(try match(box, "beach", tags: "T2") == ["c"])
            #expect(try match(box, "beach", tags: "t9").isEmpty)
            #expect(try match(box, "beach", tags: "") == ["c", "b", "a"])
            // Other full-text tables are separate.
            #expect(try match(box, "beach", table: ValueBoxFullTextTable(id: 42)).isEmpty)
            let collections = try box.fullTextCollections(ft, query: "beach")
            #expect(collections == ["p1", "p2", "p1"])
        }
    }

    @Test func removeLeavesNothingOfTheText() throws {
        try withTemporaryBox("fts-remove") { box, _ in
            try box.begin()
            try box.fullTextSet(ft, collectionId: "p1", itemId: "secret", contents: "zyxwvutsecret password42 ok", tags: "t7")
            try box.fullTextSet(ft, collectionId: "p1", itemId: "other", contents: "ok fine", tags: "t7")
            try box.commit()
            #expect(try match(box, "zyxwvutsecret") == ["secret"])
            try box.begin()
            try box.fullTextRemove(ft, itemId: "secret", secure: true)
            try box.fullTextRemove(ft, itemId: "never-indexed", secure: true)
            try box.commit()
            #expect(try match(box, "zyxwvutsecret").isEmpty)
            #expect(try match(box, "ok") == ["other"])
            for bytes in try internalBytes(box) {
                #expect(!containsBytes(bytes, Array("zyxwvutsecret".utf8)))
                #expect(!containsBytes(bytes, Array("password42".utf8)))
                #expect(!containsBytes(bytes, Array("secret".utf8)))
            }
            try box.begin()
            try box.fullTextRemove(ft, itemId: "other", secure: false)
            try box.commit()
            #expect(try internalBytes(box).isEmpty)
        }
    }

    /// The transaction's WAL record shows what the engine was asked to do: `fullTextRemove` (with the list changes
    /// it buffers) makes only
    /// `remove` operations, one per entry of the item, each carrying the caller's `secure` flag.
    @Test func secureFlagReachesEveryEngineRemove() throws {
        try withTemporaryBox("fts-secure") { box, _ in
            try box.begin()
            try box.fullTextSet(ft, collectionId: "p1", itemId: "a", contents: "one two two three", tags: "t1 t2")
            try box.commit()
            for secure in [true, false] {
                try box.begin()
                try box.fullTextRemove(ft, itemId: "a", secure: secure)
                // The list entries go when the transaction's list changes are written: a query writes them.
                try box.fullTextMatch(ft, collectionId: nil, query: "one", tags: nil) { _, _ in
                    Issue.record("a removed item was found")
                    return true
                }
                var removes = 0
                let record = box.record.bytes
                var reader = ByteReader(start: record.memory + WriteAheadLog.recordHeaderSize, count: record.count - WriteAheadLog.recordHeaderSize)
                while !reader.isAtEnd {
                    guard let operation = try? reader.operation() else { Issue.record("malformed WAL operation"); break }
                    if case let .remove(table, _, flag) = operation {
                        #expect(table < 0)
                        #expect(flag == secure)
                        removes += 1
                    } else {
                        Issue.record("fullTextRemove logged \(operation)")
                    }
                }
                // Postings one, two, three; tags t1, t2; the collection, item and document entries.
                #expect(removes == 8)
                box.abort()
            }
        }
    }

    @Test func writesNeedATransactionAndAbortRollsBack() throws {
        try withTemporaryBox("fts-txn") { box, path in
            expectError("noActiveTransaction") { try box.fullTextSet(ft, collectionId: "p", itemId: "i", contents: "x", tags: "") }
            expectError("noActiveTransaction") { try box.fullTextRemove(ft, itemId: "i", secure: false) }
            try box.begin()
            try box.fullTextSet(ft, collectionId: "p", itemId: "kept", contents: "apple", tags: "")
            try box.commit()
            try box.begin()
            try box.fullTextSet(ft, collectionId: "p", itemId: "dropped", contents: "apple pie", tags: "")
            try box.fullTextRemove(ft, itemId: "kept", secure: false)
            #expect(try match(box, "apple") == ["dropped"])
            box.abort()
            #expect(try match(box, "apple") == ["kept"])
            try box.close()
            let reopened = try ValueBox(path: path)
            #expect(try match(reopened, "apple") == ["kept"])
            try reopened.close()
        }
    }

    @Test func invalidTableIdsThrow() throws {
        try withTemporaryBox("fts-ids") { box, _ in
            try box.begin()
            for id in [Int32(-1), ValueBoxFullTextTable.idLimit, Int32.max, Int32.min] {
                let table = ValueBoxFullTextTable(id: id)
                expectError("invalidFullTextTable") { try box.fullTextSet(table, collectionId: "", itemId: "i", contents: "x", tags: "") }
                expectError("invalidFullTextTable") { try box.fullTextRemove(table, itemId: "i", secure: false) }
                expectError("invalidFullTextTable") { try box.fullTextMatch(table, collectionId: nil, query: "x", tags: nil) { _, _ in true } }
            }
            let highest = ValueBoxFullTextTable(id: ValueBoxFullTextTable.idLimit - 1)
            try box.fullTextSet(highest, collectionId: "", itemId: "i", contents: "x", tags: "")
            try box.commit()
            #expect(try match(box, "x", table: highest) == ["i"])
            #expect(try box.allTables().allSatisfy { $0.id < 0 && $0.id >= -(1 << 30) })
        }
    }

    @Test func badInput() throws {
        try withTemporaryBox("fts-bad") { box, _ in
            try box.begin()
            // Empty strings everywhere.
            try box.fullTextSet(ft, collectionId: "", itemId: "", contents: "", tags: "")
            try box.fullTextSet(ft, collectionId: "", itemId: "punct", contents: "!!! ... ---", tags: "   ")
            // A 100 KB document.
            var words: [String] = []
            var size = 0
            var n = 0
            while size < 100_000 {
                let word = "w\(n % 5000)x"
                words.append(word)
                size += word.utf8.count + 1
                n += 1
            }
            words.append("needleatend")
            try box.fullTextSet(ft, collectionId: "big", itemId: "big", contents: words.joined(separator: " "), tags: "")
            // An item id longer than the largest key, and a collection id too long for its key.
            let longId = String(repeating: "i", count: ValueBox.maxKeySize + 1)
            let error = expectError("keyTooLarge") { try box.fullTextSet(ft, collectionId: "p", itemId: longId, contents: "lost", tags: "") }
            #expect(error == .keyTooLarge(length: ValueBox.maxKeySize + 1, limit: ValueBox.maxKeySize))
            expectError("keyTooLarge") {
                try box.fullTextSet(ft, collectionId: String(repeating: "c", count: ValueBox.maxKeySize), itemId: "c", contents: "lost", tags: "")
            }
            try box.fullTextRemove(ft, itemId: longId, secure: true)
            // A 2,000-character word is cut, the same way in the text and in the query.
            let longWord = String(repeating: "ab", count: 1000)
            try box.fullTextSet(ft, collectionId: "p", itemId: "long-word", contents: longWord, tags: "")
            try box.commit()

            #expect(try match(box, "lost").isEmpty)
            #expect(try match(box, "needleatend") == ["big"])
            #expect(try match(box, "\"w4998x w4999x w0x\"") == ["big"])
            #expect(try match(box, "w1234x needleat*") == ["big"])
            #expect(try match(box, longWord) == ["long-word"])
            #expect(try match(box, String(longWord.prefix(300)) + "*") == ["long-word"])
            #expect(try match(box, "x", collection: String(repeating: "c", count: 5000)).isEmpty)
            try box.begin()
            try box.fullTextRemove(ft, itemId: "", secure: false)
            try box.fullTextRemove(ft, itemId: "punct", secure: false)
            try box.fullTextRemove(ft, itemId: "big", secure: true)
            try box.fullTextRemove(ft, itemId: "long-word", secure: true)
            try box.commit()
            #expect(try match(box, "needleatend").isEmpty)
            #expect(try internalBytes(box).isEmpty)
        }
    }
}

extension ValueBox {
    /// The collection ids of a query's matches, in order.
    func fullTextCollections(_ table: ValueBoxFullTextTable, query: String) throws -> [String] {
        var out: [String] = []
        try fullTextMatch(table, collectionId: nil, query: query, tags: nil) { collection, _ in out.append(collection); return true }
        return out
    }
}
