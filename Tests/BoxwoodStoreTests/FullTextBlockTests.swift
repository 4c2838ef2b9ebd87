import Testing
import Foundation
@_spi(EngineTables) @testable import BoxwoodStore
@testable import BoxwoodFullText

/// One block of a posting list as stored: its list prefix, the docIds of its entries and its value's length.
struct FullTextStoredBlock {
    let prefix: [UInt8]
    let docIds: [UInt64]
    let valueBytes: Int
}

extension ValueBox {
    /// Writes raw bytes (for tests that forge engine-table entries).
    func set(_ table: ValueBoxTable, key: ValueBoxKey, byteArray: [UInt8]) throws {
        try byteArray.withUnsafeBytes { try set(table, key: key, bytes: $0) }
    }

    /// Every block of the lists in engine table `part` (postings, tags or collections) of a full-text table,
    /// in key order, after checking the block invariants: each value decodes, its docIds ascend, a block
    /// longer than `maxBytes` holds one entry, and the blocks of one list do not overlap.
    func fullTextBlocks(_ table: ValueBoxFullTextTable, _ part: FullTextPart, maxBytes: Int = FullTextPostingBlock.maxBytes) throws -> [FullTextStoredBlock] {
        let tables = try FullTextTables(table)
        var blocks: [FullTextStoredBlock] = []
        for (key, value) in try allEntries(tables.table(part)) {
            let first = key.withUnsafeBytes { FullTextKeys.docId(atEndOf: $0) }
            var docIds: [UInt64] = []
            try value.withUnsafeBytes { value in
                var reader = FullTextPostingBlock.Reader(firstDocId: first, value: value, hasPositions: part == .postings)
                while try reader.next() { docIds.append(reader.docId) }
            }
            let block = FullTextStoredBlock(prefix: Array(key.dropLast(8)), docIds: docIds, valueBytes: value.count)
            #expect(docIds.first == first)
            #expect(zip(docIds, docIds.dropFirst()).allSatisfy { $0 < $1 })
            #expect(value.count <= maxBytes || docIds.count == 1, "a block of \(value.count) bytes holds \(docIds.count) entries")
            if let previous = blocks.last, previous.prefix == block.prefix {
                #expect(previous.docIds.last! < first, "blocks of one list overlap")
            }
            blocks.append(block)
        }
        return blocks
    }
}

/// The posting-list blocks (layout 2): splits, removal from any block, what a secure removal logs, the layout
/// check and corrupt blocks.
@Suite struct FullTextBlockTests {
    let ft = ValueBoxFullTextTable(id: 41)

    private func match(_ box: ValueBox, _ query: String, collection: String? = nil) throws -> [String] {
        var out: [String] = []
        try box.fullTextMatch(ft, collectionId: collection, query: query, tags: nil) { _, item in
            out.append(item)
            return true
        }
        return out
    }

    @Test func listsSplitIntoBlocksAndShrinkOnRemoval() throws {
        try FullTextPostingBlock.$maxBytes.withValue(24) {
            try withTemporaryBox("fts-blocks") { box, _ in
                // 60 documents with "common" (three commits, so the last block is extended across commits),
                // every third with "third".
                for batch in 0..<3 {
                    try box.begin()
                    for n in (batch * 20)..<(batch * 20 + 20) {
                        try box.fullTextSet(ft, collectionId: "c", itemId: "m\(n)", contents: "common word\(n)" + (n % 3 == 0 ? " third" : ""), tags: "t1")
                    }
                    try box.commit()
                }
                let all = (0..<60).reversed().map { "m\($0)" }
                #expect(try match(box, "common") == all)
                let commonBlocks = try box.fullTextBlocks(ft, .postings, maxBytes: 24).filter { $0.prefix == Array("common".utf8) + [0] }
                #expect(commonBlocks.count > 3)
                #expect(commonBlocks.flatMap(\.docIds) == Array(1...60))
                #expect(try box.fullTextBlocks(ft, .collections, maxBytes: 24).count > 1)
                #expect(try box.fullTextBlocks(ft, .tags, maxBytes: 24).count > 1)

                // Remove the first entry of a middle block (the block is re-keyed), an entry inside another,
                // and every entry of a third block.
                let middle = commonBlocks[commonBlocks.count / 2]
                let inside = commonBlocks[1]
                let emptied = commonBlocks[commonBlocks.count - 2]
                var removed = Set([middle.docIds[0], inside.docIds[1]])
                removed.formUnion(emptied.docIds)
                try box.begin()
                for docId in removed { try box.fullTextRemove(ft, itemId: "m\(docId - 1)", secure: docId % 2 == 0) }
                try box.commit()
                let left = all.filter { !removed.contains(UInt64($0.dropFirst())! + 1) }
                #expect(try match(box, "common") == left)
                #expect(try match(box, "common", collection: "c") == left)
                #expect(try match(box, "third") == left.filter { Int($0.dropFirst())! % 3 == 0 })
                let after = try box.fullTextBlocks(ft, .postings, maxBytes: 24).filter { $0.prefix == Array("common".utf8) + [0] }
                #expect(after.flatMap(\.docIds) == (1...60).filter { !removed.contains($0) })
                #expect(after.count == commonBlocks.count - 1)

                // New documents append to the last block again; a replacement moves the item to the end.
                try box.begin()
                try box.fullTextSet(ft, collectionId: "c", itemId: "m5", contents: "common again", tags: "")
                try box.fullTextSet(ft, collectionId: "c", itemId: "new", contents: "common", tags: "")
                #expect(try match(box, "common").prefix(3) == ["new", "m5", left[0]])
                try box.commit()
                #expect(try match(box, "common").prefix(3) == ["new", "m5", left[0]])
                _ = try box.fullTextBlocks(ft, .postings, maxBytes: 24)
            }
        }
    }

    /// A secure removal rewrites the blocks it shares with other documents: each rewrite removes the old block
    /// with `secure: true` first, so the engine scrubs the old bytes; a normal removal just overwrites.
    @Test func secureRemovalRemovesEveryOldBlockSecurely() throws {
        try withTemporaryBox("fts-secure-blocks") { box, _ in
            try box.begin()
            try box.fullTextSet(ft, collectionId: "p1", itemId: "b", contents: "two four", tags: "t2")
            try box.fullTextSet(ft, collectionId: "p1", itemId: "a", contents: "one two two three", tags: "t1 t2")
            try box.commit()
            for secure in [true, false] {
                try box.begin()
                try box.fullTextRemove(ft, itemId: "a", secure: secure)
                // The list entries go when the transaction's list changes are written: a query writes them.
                #expect(try match(box, "four") == ["b"])
                var removes = 0, sets = 0
                var securelyRemoved = Set<[UInt8]>()
                let record = box.record.bytes
                var reader = ByteReader(start: record.memory + WriteAheadLog.recordHeaderSize, count: record.count - WriteAheadLog.recordHeaderSize)
                while !reader.isAtEnd {
                    guard let operation = try? reader.operation() else { Issue.record("malformed WAL operation"); break }
                    switch operation {
                    case let .remove(table, key, flag):
                        #expect(table < 0)
                        #expect(flag == secure)
                        if flag { securelyRemoved.insert(Array(key)) }
                        removes += 1
                    case let .set(table, _, key, _):
                        #expect(table < 0)
                        if secure { #expect(securelyRemoved.contains(Array(key)), "a block was rewritten without a secure removal") }
                        sets += 1
                    default:
                        Issue.record("fullTextRemove logged \(operation)")
                    }
                }
                // Lists only "a" is in: one, three, t1; shared ones: two, t2, collection p1; then the document
                // and the item. Securely, each shared block is removed and written again.
                #expect(removes == (secure ? 8 : 5))
                #expect(sets == 3)
                #expect(try match(box, "two") == ["b"])
                box.abort()
            }
        }
    }

    /// An index written before blocks (layout 1: no layout entry, one key per posting) is refused with a typed
    /// error, never read as blocks; `fullTextReset` clears it for a rebuild. So is an unknown layout.
    @Test func otherLayoutsAreRefused() throws {
        try withTemporaryBox("fts-layout") { box, path in
            let tables = try FullTextTables(ft)
            // A layout-1 document: its record, item, collection key and one posting `hello ‖ 0 ‖ docId` → [0].
            var docKey = ValueBoxKey(length: 8)
            docKey.setUInt64(0, value: 1)
            try box.begin()
            try box.set(tables.documents, key: docKey, byteArray: [2, 0x70, 0x31, 1, 0x61, 0, 1, 5] + Array("hello".utf8) + [1, 0])
            try box.set(tables.items, key: ValueBoxKey("a"), byteArray: [0, 0, 0, 0, 0, 0, 0, 1])
            try box.set(tables.postings, key: ValueBoxKey(Array("hello".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 1]), byteArray: [0])
            try box.commit()
            let error = expectError("fullTextLayoutMismatch") { _ = try match(box, "hello") }
            #expect(error == .fullTextLayoutMismatch(path: path, id: 41, found: 1, supported: 3))
            try box.begin()
            expectError("fullTextLayoutMismatch") { try box.fullTextSet(ft, collectionId: "p1", itemId: "b", contents: "hello", tags: "") }
            expectError("fullTextLayoutMismatch") { try box.fullTextRemove(ft, itemId: "a", secure: true) }
            try box.fullTextReset(ft)
            try box.fullTextSet(ft, collectionId: "p1", itemId: "a", contents: "hello", tags: "")
            try box.commit()
            #expect(try match(box, "hello") == ["a"])

            // Layout 2 (posting blocks, every record in token form): its records would be misread as layout 3's,
            // so it is refused too, and rebuilt the same way.
            try box.begin()
            try box.set(tables.meta, key: FullTextLayout.key, byteArray: [0, 0, 0, 2])
            try box.commit()
            let older = expectError("fullTextLayoutMismatch") { _ = try match(box, "hello") }
            #expect(older == .fullTextLayoutMismatch(path: path, id: 41, found: 2, supported: 3))
            #expect(try box.fullTextNeedsRebuild(ft))
            try box.begin()
            expectError("fullTextLayoutMismatch") { try box.fullTextSet(ft, collectionId: "p1", itemId: "b", contents: "hello", tags: "") }
            try box.fullTextReset(ft)
            try box.fullTextSet(ft, collectionId: "p1", itemId: "a", contents: "hello", tags: "")
            try box.commit()
            #expect(try box.fullTextNeedsRebuild(ft) == false)
            #expect(try match(box, "hello") == ["a"])

            // A layout this version does not know.
            try box.begin()
            try box.set(tables.meta, key: FullTextLayout.key, byteArray: [0, 0, 0, 4])
            try box.commit()
            let newer = expectError("fullTextLayoutMismatch") { _ = try match(box, "hello") }
            #expect(newer == .fullTextLayoutMismatch(path: path, id: 41, found: 4, supported: 3))

            // Reset in a transaction that already wrote to the (rebuilt) index: the index stays readable after it.
            try box.begin()
            try box.fullTextReset(ft)
            try box.fullTextSet(ft, collectionId: "p1", itemId: "b", contents: "hello there", tags: "")
            try box.fullTextReset(ft)
            try box.fullTextSet(ft, collectionId: "p1", itemId: "c", contents: "hello again", tags: "")
            try box.commit()
            #expect(try match(box, "hello") == ["c"])
            #expect(try match(box, "there").isEmpty)
        }
    }

    /// Malformed blocks (as a damaged file could hold) throw `.corrupted`, they do not trap or return garbage.
    @Test func malformedBlocksThrowCorrupted() throws {
        try withTemporaryBox("fts-bad-blocks") { box, _ in
            try box.begin()
            try box.fullTextSet(ft, collectionId: "p1", itemId: "a", contents: "hello world", tags: "")
            try box.fullTextSet(ft, collectionId: "p1", itemId: "b", contents: "hello", tags: "")
            try box.commit()
            let tables = try FullTextTables(ft)
            let (key, _) = try #require(try box.allEntries(tables.postings).first { $0.0.starts(with: Array("hello".utf8) + [0]) })
            // A positions length beyond the value, a zero docId delta, a truncated varint.
            for bad: [UInt8] in [[9, 0], [1, 0, 0, 1, 0], [1, 0, 0x80]] {
                try box.begin()
                try box.set(tables.postings, key: ValueBoxKey(key), byteArray: bad)
                try box.commit()
                expectError("corrupted") { _ = try match(box, "hello") }
                try box.begin()
                // A removal edits the lists when the transaction's list changes are written (here at commit).
                expectError("corrupted") { try box.fullTextRemove(ft, itemId: "b", secure: false); try box.commit() }
                expectError("corrupted") { try box.fullTextSet(ft, collectionId: "p1", itemId: "c", contents: "hello", tags: "") ; try box.commit() }
                // The failed flush wrote some lists and lost the rest: committing again must not succeed.
                expectError("corrupted") { try box.commit() }
                #expect(box.isInTransaction)
                box.abort()
            }
        }
    }

    /// `FullTextPostingBlock.lastDocId` (the appends' scan of a list's last block) ends where reading every entry with
    /// `Reader` ends, and throws for exactly the values `Reader` finds malformed: built blocks, the same with random
    /// bytes changed, cut or appended, and random bytes, with and without positions.
    @Test func lastDocIdAgreesWithTheReader() throws {
        let seed = crashTestSeed()
        print("FullTextBlockTests.lastDocIdAgreesWithTheReader: seed \(seed) (replay with BOXWOOD_SEED=\(seed))")
        var rng = SplitMix64(seed: seed)
        var malformed = 0, sound = 0
        for round in 0..<20_000 {
            let hasPositions = rng.chance(0.7)
            let randomBytes = rng.chance(0.2)
            // Near 2^64 only for random bytes (a docId delta overflow must be refused); the builder's header of a
            // block's first entry doubles its docId, so built blocks start lower.
            let first = randomBytes && rng.chance(0.3) ? UInt64.max - UInt64(rng.below(1_000)) : UInt64(rng.below(1 << 20))
            var value: [UInt8]
            if randomBytes {
                value = rng.bytes(rng.below(24))
            } else {
                var builder = FullTextPostingBlock.Builder(hasPositions: hasPositions, maxBytes: 1 << 20)
                var docId = first
                for i in 0..<(1 + rng.below(12)) {
                    if i > 0 {
                        let step = UInt64(1 + rng.below(rng.chance(0.2) ? 1 << 30 : 300))
                        guard step <= UInt64.max - docId else { break }
                        docId += step
                    }
                    var positions: [UInt8] = []
                    for _ in 0..<(1 + rng.below(rng.chance(0.7) ? 1 : 5)) { appendVarint(UInt64(rng.below(rng.chance(0.8) ? 100 : 100_000)), to: &positions) }
                    positions.withUnsafeBytes { builder.append(docId, positions: $0) }
                }
                value = builder.finish().first?.value ?? []
                switch rng.below(5) {
                case 0 where !value.isEmpty: value[rng.below(value.count)] = UInt8(rng.below(256))
                case 1 where !value.isEmpty: value.removeLast(1 + rng.below(value.count))
                case 2: value += rng.bytes(1 + rng.below(4))
                default: break
                }
            }
            let expected: UInt64? = value.withUnsafeBytes { bytes in
                var reader = FullTextPostingBlock.Reader(firstDocId: first, value: bytes, hasPositions: hasPositions)
                do { while try reader.next() {} } catch { return nil }
                return reader.docId
            }
            let found: UInt64? = value.withUnsafeBytes { bytes in
                try? FullTextPostingBlock.lastDocId(firstDocId: first, value: bytes, hasPositions: hasPositions)
            }
            #expect(found == expected, "seed \(seed), round \(round): \(value), first \(first), positions \(hasPositions)")
            if expected == nil { malformed += 1 } else { sound += 1 }
        }
        #expect(malformed > 1_000 && sound > 1_000, "seed \(seed): \(malformed) malformed, \(sound) sound values")
    }

    /// Layout 3's records: ASCII text is kept as text (form 0), any other text as tokens (form 1); both answer
    /// record-checked queries and removals alike, and a record of an unknown form or with a non-ASCII byte in
    /// its text is reported as `.corrupted`.
    @Test func recordsKeepASCIITextAndOtherTokens() throws {
        try withTemporaryBox("fts-records") { box, _ in
            let tables = try FullTextTables(ft)
            let long = String(repeating: "Ab", count: 100)  // a token cut at 128 bytes
            try box.begin()
            try box.fullTextSet(ft, collectionId: "p1", itemId: "a", contents: "Hello, hello world! \(long)", tags: "t1 T2")
            try box.fullTextSet(ft, collectionId: "p1", itemId: "b", contents: "hello café world", tags: "t1")
            try box.fullTextSet(ft, collectionId: "p1", itemId: "c", contents: "hello world", tags: "тег")
            try box.commit()
            let records = try box.allEntries(tables.documents).map(\.1)
            #expect(records.count == 3)
            // collection "p1", item "a", form 0, tags text, then the contents as given.
            #expect(records[0] == [2, 0x70, 0x31, 1, 0x61, 0, 5] + Array("t1 T2".utf8) + Array("Hello, hello world! \(long)".utf8))
            #expect(records[1][6] == 1 && records[2][6] == 1, "non-ASCII contents or tags keep their tokens")
            // Record checks (first round of one key: lists are not read completely) on both forms.
            for (query, expected) in [("hello world", ["c", "b", "a"]), ("\"hello world\"", ["c", "a"]), ("wor*", ["c", "b", "a"]),
                                      ("\(long.lowercased())", ["a"]), ("abab*", ["a"]), ("\"hello hello\"", ["a"])] {
                var found: [String] = []
                try box.fullTextMatch(ft, collectionId: "p1", query: query, tags: "t1", firstRound: 1, denseSpan: 1) { _, item in
                    found.append(item)
                    return true
                }
                #expect(found == expected.filter { $0 != "c" }, "query \(query)")
            }
            try box.begin()
            try box.fullTextRemove(ft, itemId: "a", secure: true)
            try box.fullTextRemove(ft, itemId: "b", secure: false)
            try box.fullTextRemove(ft, itemId: "c", secure: false)
            try box.commit()
            for part in FullTextPart.allCases where part != .meta {
                #expect(try box.count(tables.table(part)) == 0, "\(part) is empty after every removal")
            }

            // Damaged records: an unknown form byte, a non-ASCII byte in a text-form record.
            for bad: [UInt8] in [[2, 0x70, 0x31, 1, 0x61, 7], [2, 0x70, 0x31, 1, 0x61, 0, 0, 0xC3, 0xA9]] {
                try box.begin()
                try box.fullTextSet(ft, collectionId: "p1", itemId: "a", contents: "hello", tags: "")
                let (docKey, _) = try #require(try box.allEntries(tables.documents).first)
                try box.set(tables.documents, key: ValueBoxKey(docKey), byteArray: bad)
                expectError("corrupted") { try box.fullTextRemove(ft, itemId: "a", secure: false) }
                box.abort()
            }
        }
    }

    /// Phrase checks look positions up in descending docId order (galloping from the previous lookup); any
    /// other order must give the same answers.
    @Test func positionLookupsInAnyOrder() {
        let docIds: [UInt64] = [2, 3, 5, 8, 13, 21, 34]
        var bytes: [UInt8] = []
        var ends: [Int] = []
        for docId in docIds {
            bytes.append(UInt8(docId % 7))       // one position each: docId mod 7
            ends.append(bytes.count)
        }
        var rng = SplitMix64(seed: 7)
        for round in 0..<50 {
            let lookup = FullTextPositionLookup(docIds: docIds, valueBytes: bytes, valueEnds: ends, byDocId: nil)
            var queries = (0...40).map { UInt64($0) }
            if round > 0 { for i in queries.indices.reversed() { queries.swapAt(i, rng.below(i + 1)) } } else { queries.reverse() }
            var positions: [Int32] = []
            for docId in queries {
                lookup.positions(of: docId, into: &positions)
                #expect(positions == (docIds.contains(docId) ? [Int32(docId % 7)] : []), "docId \(docId), round \(round)")
            }
        }
    }
}
