import Foundation
import Testing
@testable import BoxwoodStore

// Free pages are reused, and a free tail of the data file is cut off at checkpoints.
@Suite struct SpaceReclamationTests {
    func fileSize(_ path: String) throws -> UInt64 {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.uint64Value ?? 0
    }

    /// Checkpoints until the file stops shrinking (a freed tail goes within three checkpoints: one frees the
    /// pages, the next moves the freelist and catalog down, the last cuts the tail).
    func settle(_ box: ValueBox, _ db: String) throws {
        for _ in 0..<4 { try box.checkpoint() }
        #expect(try fileSize(db + "/data") == box.meta.pageCount * UInt64(PageLayout.pageSize))
    }

    @Test func theFileShrinksWhenItsTailIsFree() throws {
        let db = temporaryDatabasePath("tail")
        defer { removeItem(db) }
        let small = ValueBoxTable(id: 1, keyType: .int64)
        let big = ValueBoxTable(id: 2, keyType: .int64)
        var rng = SplitMix64(seed: 42)
        let box = try ValueBox(path: db)
        try box.begin()
        for i in 0..<200 { try box.set(small, key: ikey(Int64(i)), value: mbuf(randomBytes(100, &rng))) }
        try box.commit()
        try box.checkpoint()
        let smallSize = try fileSize(db + "/data")
        try box.begin()
        for i in 0..<20_000 { try box.set(big, key: ikey(Int64(i)), value: mbuf(randomBytes(300, &rng))) }
        try box.commit()
        try box.checkpoint()
        let peak = try fileSize(db + "/data")
        #expect(peak > 6_000_000)
        try box.begin()
        try box.removeTable(big)
        try box.commit()
        try settle(box, db)
        let after = try fileSize(db + "/data")
        print("tail truncation: \(smallSize) bytes -> \(peak) -> \(after)")
        #expect(after < 2 * smallSize)
        #expect(after == box.meta.pageCount * UInt64(PageLayout.pageSize))
        #expect(try box.count(small) == 200)
        #expect(try box.check().problems == [])
        try box.close()
        let reopened = try ValueBox(path: db)
        #expect(try reopened.count(small) == 200)
        #expect(try reopened.check().problems == [])
        try reopened.close()
    }

    @Test func aReaderOfAnOlderSnapshotKeepsTheTail() throws {
        let db = temporaryDatabasePath("tail-reader")
        defer { removeItem(db) }
        let table = ValueBoxTable(id: 1, keyType: .int64)
        var rng = SplitMix64(seed: 43)
        let box = try ValueBox(path: db)
        try box.begin()
        for i in 0..<5_000 { try box.set(table, key: ikey(Int64(i)), value: mbuf(randomBytes(300, &rng))) }
        try box.commit()
        try box.checkpoint()
        let reader = try ValueBox(path: db)
        try reader.beginRead()
        let before = try reader.allEntries(table).map { $0.0 + $0.1 }
        try box.begin()
        try box.removeTable(table)
        try box.commit()
        try box.checkpoint()
        try box.checkpoint()
        // The reader's snapshot still reads every page: nothing it can reach was cut off or reused.
        #expect(try reader.allEntries(table).map { $0.0 + $0.1 } == before)
        reader.endRead()
        #expect(try reader.count(table) == 0)
        try settle(box, db)
        #expect(try fileSize(db + "/data") < 64 * 1024)
        try reader.close()
        try box.close()
    }
}
