import Foundation
import Testing
@testable import BoxwoodStore
@testable import BoxwoodFullText

// Secure delete: after `remove(secure: true)` and the next checkpoint, no copy of the removed key or value
// is left in the data file or the WAL. The tests plant random (incompressible) markers, prove that a raw
// scan of the files finds them while they are live — and after a plain remove — and that it no longer finds
// them after a secure remove and a checkpoint.

/// True when `needle` occurs in `haystack`.
func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    let first = needle[0]
    var i = 0
    let last = haystack.count - needle.count
    while i <= last {
        if haystack[i] == first && Array(haystack[i..<(i + needle.count)]) == needle { return true }
        i += 1
    }
    return false
}

/// Random bytes from a seeded generator.
func randomBytes(_ count: Int, _ rng: inout SplitMix64) -> [UInt8] {
    (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
}

@Suite struct SecureDeleteTests {
    let table = ValueBoxTable(id: 7, keyType: .binary)

    func fileBytes(_ db: String) throws -> (data: [UInt8], wal: [UInt8]) {
        (try readFile(db + "/data"), try readFile(db + "/wal"))
    }

    /// Fills the table with filler entries so that the markers share pages with live data.
    func fill(_ box: ValueBox, _ rng: inout SplitMix64) throws {
        try box.begin()
        for i in 0..<3000 {
            try box.set(table, key: bkey(Array("filler-\(i)".utf8)), value: mbuf(randomBytes(60, &rng)))
        }
        try box.commit()
    }

    @Test func secureRemoveLeavesNoCopyAfterTheNextCheckpoint() throws {
        let db = temporaryDatabasePath("secure")
        defer { removeItem(db) }
        var rng = SplitMix64(seed: 0x5EC)
        let box = try ValueBox(path: db)
        try fill(box, &rng)
        let inlineMarker = randomBytes(200, &rng)        // inline value
        let bigValue = randomBytes(20_000, &rng)         // overflow chain
        let keyMarker = randomBytes(48, &rng)            // inside a key
        let plainMarker = randomBytes(200, &rng)         // removed without `secure`
        try box.begin()
        try box.set(table, key: bkey(Array("secret-inline".utf8)), value: mbuf(inlineMarker))
        try box.set(table, key: bkey(Array("secret-big".utf8)), value: mbuf(bigValue))
        try box.set(table, key: bkey(Array("secret-key-".utf8) + keyMarker), value: mbuf("x"))
        try box.set(table, key: bkey(Array("plain".utf8)), value: mbuf(plainMarker))
        try box.commit()
        try box.checkpoint()
        let bigMarker = Array(bigValue[9000..<9064])
        var files = try fileBytes(db)
        for marker in [inlineMarker, bigMarker, keyMarker, plainMarker] { #expect(contains(files.data, marker)) }

        // A plain remove leaves the old page, with the bytes, among the free pages.
        try box.begin()
        try box.remove(table, key: bkey(Array("plain".utf8)), secure: false)
        try box.commit()
        try box.checkpoint()
        #expect(contains(try fileBytes(db).data, plainMarker))

        // Secure removes (one committed before the checkpoint that carries it, one set and removed while
        // still only in the WAL).
        let walOnlyMarker = randomBytes(200, &rng)
        try box.begin()
        try box.set(table, key: bkey(Array("wal-only".utf8)), value: mbuf(walOnlyMarker))
        try box.commit()
        try box.begin()
        try box.remove(table, key: bkey(Array("secret-inline".utf8)), secure: true)
        try box.remove(table, key: bkey(Array("secret-big".utf8)), secure: true)
        try box.remove(table, key: bkey(Array("secret-key-".utf8) + keyMarker), secure: true)
        try box.remove(table, key: bkey(Array("wal-only".utf8)), secure: true)
        try box.commit()
        #expect(box.state.secureDeletePending)
        try box.checkpoint()
        #expect(!box.state.secureDeletePending)
        #expect(!box.meta.scrubPending)
        files = try fileBytes(db)
        for marker in [inlineMarker, bigMarker, keyMarker, plainMarker, walOnlyMarker] {
            #expect(!contains(files.data, marker))
            #expect(!contains(files.wal, marker))
        }
        // The WAL holds no record at all after the checkpoint (its records are whitened, so a byte scan alone
        // would not prove they are gone).
        #expect(files.wal.count == WriteAheadLog.headerSize)
        #expect(try box.check().problems == [])
        #expect(try box.count(table) == 3000)
        try box.close()
        let reopened = try ValueBox(path: db)
        #expect(try reopened.count(table) == 3000)
        #expect(try reopened.check().problems == [])
        try reopened.close()
    }

    @Test func aSecureFullTextRemoveLeavesNoCopyOfTheText() throws {
        let db = temporaryDatabasePath("secure-fts")
        defer { removeItem(db) }
        var rng = SplitMix64(seed: 0xF75)
        let index = ValueBoxFullTextTable(id: 41)
        let box = try ValueBox(path: db)
        try fill(box, &rng)
        // A long random lower-case word: the tokenizer keeps it as it is, so its bytes are what the posting
        // keys and the document record hold.
        let word = String((0..<24).map { _ in Character(UnicodeScalar(UInt8(97 + rng.below(26)))) })
        try box.begin()
        for i in 0..<200 {
            try box.fullTextSet(index, collectionId: "p\(i % 7)", itemId: "p\(i % 7)a0b\(i)", contents: "filler text number \(i)", tags: "t1")
        }
        try box.fullTextSet(index, collectionId: "p1", itemId: "p1a0b999", contents: "meet me at \(word) tonight", tags: "t1")
        try box.commit()
        try box.checkpoint()
        #expect(contains(try readFile(db + "/data"), Array(word.utf8)))
        try box.begin()
        try box.fullTextRemove(index, itemId: "p1a0b999", secure: true)
        try box.commit()
        try box.checkpoint()
        #expect(!contains(try readFile(db + "/data"), Array(word.utf8)))
        #expect(!contains(try readFile(db + "/data"), Array("p1a0b999".utf8)))
        #expect(try readFile(db + "/wal").count == WriteAheadLog.headerSize)
        var found = 0
        try box.fullTextMatch(index, collectionId: nil, query: "filler", tags: nil) { _, _ in found += 1; return true }
        #expect(found == 200)
        #expect(try box.check().problems == [])
        try box.close()
    }

    @Test func aSecureRemoveReplayedFromTheWALIsScrubbedToo() throws {
        let db = temporaryDatabasePath("secure-replay")
        let copy = temporaryDatabasePath("secure-replay-copy")
        defer { removeItem(db); removeItem(copy) }
        var rng = SplitMix64(seed: 0xBEEF)
        let box = try ValueBox(path: db)
        try fill(box, &rng)
        let marker = randomBytes(300, &rng)
        try box.begin()
        try box.set(table, key: bkey(Array("secret".utf8)), value: mbuf(marker))
        try box.commit()
        try box.checkpoint()
        try box.begin()
        try box.remove(table, key: bkey(Array("secret".utf8)), secure: true)
        try box.commit()
        // A crash now: the secure remove is only in the WAL.
        try copyDatabaseFiles(from: db, to: copy)
        try box.close()
        #expect(contains(try readFile(copy + "/data"), marker))
        let recovered = try ValueBox(path: copy)
        #expect(recovered.state.secureDeletePending)
        try recovered.checkpoint()
        #expect(!contains(try readFile(copy + "/data"), marker))
        #expect(try recovered.check().problems == [])
        try recovered.close()
    }

    @Test func theScrubWaitsForAReaderOfAnOlderSnapshotEvenAcrossAReopen() throws {
        let db = temporaryDatabasePath("secure-reader")
        defer { removeItem(db) }
        var rng = SplitMix64(seed: 0xF00D)
        var writer = try ValueBox(path: db)
        try fill(writer, &rng)
        let marker = randomBytes(250, &rng)
        try writer.begin()
        try writer.set(table, key: bkey(Array("secret".utf8)), value: mbuf(marker))
        try writer.commit()
        try writer.checkpoint()

        let reader = try ValueBox(path: db)
        try reader.beginRead()
        #expect(try reader.bytes(table, bkey(Array("secret".utf8))) == marker)
        try writer.begin()
        try writer.remove(table, key: bkey(Array("secret".utf8)), secure: true)
        try writer.commit()
        try writer.checkpoint()
        // The reader's snapshot may still read the page: the bytes stay, the meta says a scrub is pending.
        #expect(writer.meta.scrubPending)
        #expect(contains(try readFile(db + "/data"), marker))
        #expect(try reader.bytes(table, bkey(Array("secret".utf8))) == marker)
        try writer.close()
        writer = try ValueBox(path: db)
        #expect(writer.state.secureDeletePending)
        reader.endRead()
        try writer.checkpoint()
        #expect(!contains(try readFile(db + "/data"), marker))
        #expect(try reader.bytes(table, bkey(Array("secret".utf8))) == nil)
        #expect(try reader.count(table) == 3000)
        #expect(try writer.check().problems == [])
        try reader.close()
        try writer.close()
    }
}
