import Foundation
import Testing
@testable import BoxwoodStore

/// The log's end marker and its preallocated zeros (WAL version 5, see `WriteAheadLog`): every append writes its
/// record and an end marker in one write, over zeros the file already has, so that a `full` commit's sync has no
/// size change to write. These tests hold the format to what it must keep: the marker always follows the last
/// record, a replay ends there without calling the zeros a torn tail, records a power cut left after the marker
/// are cut after a restart, and a version 4 log (no markers) is still read, appended to in its own form and made
/// version 5 by the next checkpoint. Unclean shutdowns are the files copied while the value box is open (the copy
/// has no shared header: the open sees a restart).
@Suite struct WALEndMarkerTests {
    private typealias Model = [[UInt8]: [UInt8]]
    private let table = ValueBoxTable(id: 1, keyType: .binary)

    private func options(_ durability: Durability = .normal) -> ValueBoxOptions {
        var options = ValueBoxOptions(durability: durability)
        options.checkpointWALBytes = 1 << 30
        options.checkpointMemoryBytes = 1 << 30
        options.lockTimeout = 2
        return options
    }

    /// The header at `offset` of the log at `path`, opened under the log's salt (nil: none validates there).
    private func recordHeader(_ path: String, at offset: UInt64) throws -> WALRecordHeader? {
        let bytes = try readFile(path + "/wal")
        guard bytes.count >= Int(offset) + WriteAheadLog.recordHeaderSize else { return nil }
        let salt = bytes.withUnsafeBytes { load64($0.baseAddress!, 16) }
        var header = Array(bytes[Int(offset)..<(Int(offset) + WriteAheadLog.recordHeaderSize)])
        return header.withUnsafeMutableBytes { WALRecordHeader.open($0.baseAddress!, offset: offset, salt: salt) }
    }

    /// The marker follows the log's last record, and only zeros follow the marker.
    private func expectMarkerAtEnd(_ path: String, walBytes: UInt64, _ comment: Comment) throws {
        let bytes = try readFile(path + "/wal")
        let marker = try recordHeader(path, at: walBytes)
        #expect(marker?.isEndMarker == true, "\(comment): no end marker at \(walBytes)")
        let afterMarker = Int(walBytes) + WriteAheadLog.recordHeaderSize
        #expect(bytes.count >= afterMarker && bytes[afterMarker...].allSatisfy { $0 == 0 }, "\(comment): bytes after the marker")
    }

    private func set(_ box: ValueBox, _ model: inout Model, key: [UInt8], length: Int, fill: UInt8) throws {
        let value = [UInt8](repeating: fill, count: length)
        try box.begin()
        try box.set(table, key: ValueBoxKey(key), value: MemoryBuffer(value))
        try box.commit()
        model[key] = value
    }

    private func expectMatches(_ box: ValueBox, _ model: Model, _ comment: Comment) throws {
        let entries = try box.allEntries(table)
        let expected = model.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        #expect(entries.map(\.0) == expected.map(\.key), "\(comment): keys")
        #expect(entries.map(\.1) == expected.map(\.value), "\(comment): values")
    }

    /// Random commits (records from a few bytes to past the preallocation chunk), `normal` and `full`,
    /// checkpoints, and unclean reopens, against a dictionary; after every commit the marker is where the log ends.
    @Test func theMarkerFollowsTheLastRecordThroughCommitsCheckpointsAndRecoveries() throws {
        let seed = crashTestSeed()
        var rng = SplitMix64(seed: seed)
        let root = temporaryDatabasePath("wal-end-marker")
        defer { removeItem(root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        var path = root + "/db0"
        var box = try ValueBox(path: path, options: options(rng.chance(0.5) ? .full : .normal))
        var model: Model = [:]
        var copies = 0
        for step in 0..<160 {
            let key = [UInt8(rng.below(40))]
            // Mostly small records, sometimes one larger than the preallocation chunk (the file must grow past it).
            let length = rng.chance(0.03) ? Int(WriteAheadLog.preallocationChunk) + rng.below(300_000) : rng.below(3_000)
            try set(box, &model, key: key, length: length, fill: UInt8(truncatingIfNeeded: rng.next()))
            let walBytes = try box.statistics().walBytes
            try expectMarkerAtEnd(path, walBytes: walBytes, "seed \(seed), step \(step)")
            switch rng.below(20) {
            case 0:
                try box.checkpoint()
                #expect(try readFile(path + "/wal").count == WriteAheadLog.headerSize, "seed \(seed), step \(step): a checkpoint empties the log")
            case 1:
                copies += 1
                let copy = root + "/db\(copies)"
                try copyDatabaseFiles(from: path, to: copy)
                try box.close()
                box = try ValueBox(path: copy, options: options(rng.chance(0.5) ? .full : .normal))
                path = copy
                let recovery = box.lastRecovery
                #expect(recovery?.tornTailBytes == 0, "seed \(seed), step \(step): zeros after the marker are no torn tail")
                // The copy saw a restart (no shared header): what follows the marker is cut.
                #expect(try readFile(path + "/wal").count == Int(try box.statistics().walBytes), "seed \(seed), step \(step)")
                try expectMatches(box, model, "seed \(seed), step \(step), after an unclean reopen")
            default:
                break
            }
        }
        try expectMatches(box, model, "seed \(seed), at the end")
        try box.close()
        let reopened = try ValueBox(path: path, options: options())
        try expectMatches(reopened, model, "seed \(seed), after close and reopen")
        try reopened.close()
    }

    /// A power cut in `normal` mode lost the second of three unsynced appends but kept the third: the log reads
    /// record 1, the first append's marker, zeros, then records 3's bytes. Replay ends at the marker, and the open
    /// cuts the rest, so that record 3 can never follow a later record 2 that ends where it starts.
    @Test func recordsAfterTheMarkerAreCutAfterARestart() throws {
        let root = temporaryDatabasePath("wal-end-marker-cut")
        defer { removeItem(root) }
        let original = root + "/original"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let writer = try ValueBox(path: original, options: options())
        var model: Model = [:]
        try set(writer, &model, key: [1], length: 200, fill: 1)
        let afterFirst = try writer.statistics().walBytes
        let firstAppendOnly = try readFile(original + "/wal")
        try set(writer, &model, key: [2], length: 200, fill: 2)
        let afterSecond = try writer.statistics().walBytes
        try set(writer, &model, key: [3], length: 200, fill: 3)
        let cut = root + "/cut"
        try copyDatabaseFiles(from: original, to: cut)
        try writer.close()

        var log = try readFile(cut + "/wal")
        log.replaceSubrange(Int(afterFirst)..<Int(afterSecond), with: firstAppendOnly[Int(afterFirst)..<Int(afterSecond)])
        try writeFile(cut + "/wal", log)
        #expect(try recordHeader(cut, at: afterSecond)?.sequence == 3, "record 3 is still in the file")

        let recovered = try ValueBox(path: cut, options: options())
        #expect(recovered.lastRecovery?.replayedCommits == 1)
        #expect(recovered.lastRecovery?.tornTailBytes == 0)
        #expect(try readFile(cut + "/wal").count == Int(afterFirst), "everything after the marker is cut")
        try expectMatches(recovered, [[1]: model[[1]]!], "after the cut")
        // A new second commit of the same length ends where record 3 started; record 3 stays gone.
        var expected: Model = [[1]: model[[1]]!]
        try set(recovered, &expected, key: [4], length: 200, fill: 4)
        #expect(try recovered.statistics().walBytes == afterSecond)
        let again = root + "/again"
        try copyDatabaseFiles(from: cut, to: again)
        try recovered.close()
        let reopened = try ValueBox(path: again, options: options())
        #expect(reopened.lastRecovery?.replayedCommits == 2)
        try expectMatches(reopened, expected, "after the second reopen")
        try reopened.close()
    }

    /// A version 4 log (no markers, no preallocation) is replayed to its end, appended to in its own form, and
    /// made version 5 by the next checkpoint's reset.
    @Test func aVersion4LogIsReadAppendedToInItsFormAndResetToTheCurrentVersion() throws {
        let root = temporaryDatabasePath("wal-end-marker-v4")
        defer { removeItem(root) }
        let original = root + "/original"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let writer = try ValueBox(path: original, options: options())
        var model: Model = [:]
        for i in 0..<5 { try set(writer, &model, key: [UInt8(i)], length: 100 + i, fill: UInt8(i)) }
        let walBytes = try writer.statistics().walBytes
        let old = root + "/old"
        try copyDatabaseFiles(from: original, to: old)
        try writer.close()

        // The same records as a version 4 log would hold them: header version 4 (checksum redone), no marker.
        var log = Array(try readFile(old + "/wal")[0..<Int(walBytes)])
        log.withUnsafeMutableBytes { raw in
            let p = raw.baseAddress!
            store32(p, 8, 4)
            store64(p, 24, XXH64.hash(p, 24))
        }
        try writeFile(old + "/wal", log)

        let box = try ValueBox(path: old, options: options(.full))
        #expect(box.lastRecovery?.replayedCommits == 5)
        #expect(box.lastRecovery?.tornTailBytes == 0)
        try expectMatches(box, model, "after replaying the version 4 log")
        try set(box, &model, key: [9], length: 300, fill: 9)
        let grown = try box.statistics().walBytes
        #expect(try readFile(old + "/wal").count == Int(grown), "a version 4 log is appended to without a marker or zeros")
        let copy = root + "/copy"
        try copyDatabaseFiles(from: old, to: copy)
        try box.checkpoint()
        let header = try readFile(old + "/wal")
        #expect(header.count == WriteAheadLog.headerSize && header.withUnsafeBytes { load32($0.baseAddress!, 8) } == WriteAheadLog.version)
        try set(box, &model, key: [10], length: 300, fill: 10)
        try expectMarkerAtEnd(old, walBytes: try box.statistics().walBytes, "after the reset")
        try box.close()

        let fromCopy = try ValueBox(path: copy, options: options())
        #expect(fromCopy.lastRecovery?.replayedCommits == 6)
        model[[10]] = nil
        try expectMatches(fromCopy, model, "the version 4 log with the appended record")
        try fromCopy.close()
    }
}
