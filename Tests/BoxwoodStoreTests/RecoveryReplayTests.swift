import Foundation
import Testing
@testable import BoxwoodStore

/// Recovery replays every WAL record after the meta into one pager transaction (`replayRecoveredRecord`): later
/// records change the pages earlier ones made in place, and a record that fails fails the open instead of being
/// rolled back on its own. These tests hold that to its two promises: the replayed state is exactly what the
/// commits made (model-checked, over records that split, overwrite, drop and rename what earlier records built),
/// and a record that cannot be applied leaves no state behind and the files untouched. The files are what a
/// killed writer leaves: copied while its value box is open.
@Suite struct RecoveryReplayTests {
    private typealias Model = [Int32: [[UInt8]: [UInt8]]]

    private func options() -> ValueBoxOptions {
        var options = ValueBoxOptions(durability: .normal)
        options.checkpointWALBytes = 1 << 30
        options.checkpointMemoryBytes = 1 << 30
        options.lockTimeout = 2
        return options
    }

    private func table(_ id: Int32) -> ValueBoxTable { ValueBoxTable(id: id, keyType: .binary) }

    /// Runs `commits` random transactions on `box`, mirroring them in `model`: sets (some values compressible, some
    /// on overflow pages), overwrites and removes of a small key space (so records touch each other's pages),
    /// inclusive range removes, and now and then a table emptied, dropped or renamed to a fresh id.
    private func commitRandomTransactions(_ box: ValueBox, _ model: inout Model, _ rng: inout SplitMix64,
                                          commits: Int, nextTableId: inout Int32) throws {
        for _ in 0..<commits {
            try box.begin()
            for _ in 0..<(1 + rng.below(60)) {
                let ids = Array(model.keys.sorted()) + [1, 2, 3]
                let id = ids[rng.below(ids.count)]
                let key = (0..<(1 + rng.below(3))).map { _ in UInt8(rng.below(24)) }
                switch rng.below(100) {
                case 0..<60:
                    let length = rng.chance(0.05) ? 5_000 + rng.below(9_000) : rng.below(400)
                    let compressible = rng.chance(0.5)
                    let value = (0..<length).map { i in compressible ? UInt8(i % 7) : UInt8(truncatingIfNeeded: rng.next()) }
                    try box.set(table(id), key: ValueBoxKey(key), value: MemoryBuffer(value))
                    model[id, default: [:]][key] = value
                case 60..<85:
                    try box.remove(table(id), key: ValueBoxKey(key), secure: rng.chance(0.1))
                    model[id]?[key] = nil
                case 85..<95:
                    let other = (0..<(1 + rng.below(3))).map { _ in UInt8(rng.below(24)) }
                    try box.removeRange(table(id), start: ValueBoxKey(key), end: ValueBoxKey(other))
                    let (low, high) = key.lexicographicallyPrecedes(other) ? (key, other) : (other, key)
                    model[id] = model[id]?.filter { entry in
                        entry.key.lexicographicallyPrecedes(low) || high.lexicographicallyPrecedes(entry.key)
                    }
                case 95..<97:
                    try box.removeAllFromTable(table(id))
                    if model[id] != nil { model[id] = [:] }
                case 97..<98:
                    try box.removeTable(table(id))
                    model[id] = nil
                default:
                    guard model[id] != nil else { continue }
                    try box.renameTable(table(id), to: table(nextTableId))
                    model[nextTableId] = model[id]
                    model[id] = nil
                    nextTableId += 1
                }
            }
            try box.commit()
        }
    }

    private func expectMatches(_ box: ValueBox, _ model: Model, tableIds: ClosedRange<Int32>, _ comment: Comment) throws {
        for id in tableIds {
            let entries = try box.allEntries(table(id))
            let expected = (model[id] ?? [:]).sorted { $0.key.lexicographicallyPrecedes($1.key) }
            #expect(entries.map(\.0) == expected.map(\.key), "\(comment): keys of table \(id)")
            #expect(entries.map(\.1) == expected.map(\.value), "\(comment): values of table \(id)")
        }
        let report = try box.check()
        #expect(report.problems.isEmpty, "\(comment): check() found \(report.problems.prefix(3))")
    }

    @Test func replayingManyRecordsIntoOneTransactionRebuildsExactlyTheCommittedState() throws {
        let seed = crashTestSeed()
        var rng = SplitMix64(seed: seed)
        let root = temporaryDatabasePath("recovery-replay")
        defer { removeItem(root) }
        let original = root + "/original"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        var model: Model = [:]
        var nextTableId: Int32 = 100
        let writer = try ValueBox(path: original, options: options())
        // A checkpointed base (so that records also copy and release checkpointed pages), then the records.
        try commitRandomTransactions(writer, &model, &rng, commits: 40, nextTableId: &nextTableId)
        try writer.checkpoint()
        let checkpointed = writer.transactionStateVersion
        try commitRandomTransactions(writer, &model, &rng, commits: 120, nextTableId: &nextTableId)
        // A transaction whose operations all found nothing to change commits no record.
        let logged = Int(writer.transactionStateVersion - checkpointed)
        #expect(logged > 100, "seed \(seed)")
        let killed = root + "/killed"
        try copyDatabaseFiles(from: original, to: killed)
        try writer.close()

        let recovered = try ValueBox(path: killed, options: options())
        #expect(recovered.lastRecovery?.replayedCommits == logged, "seed \(seed)")
        try expectMatches(recovered, model, tableIds: 1...nextTableId, "seed \(seed), after recovery")

        // Killed again right after recovering, before any commit: the WAL is still the durable copy of those commits.
        let killedAgain = root + "/killed-again"
        try copyDatabaseFiles(from: killed, to: killedAgain)
        let again = try ValueBox(path: killedAgain, options: options())
        #expect(again.lastRecovery?.replayedCommits == logged, "seed \(seed)")
        try expectMatches(again, model, tableIds: 1...nextTableId, "seed \(seed), after a second kill")
        try again.close()

        // The replayed pages are committed ones: a transaction that touches them and aborts leaves them as they were.
        try recovered.begin()
        for key in 0..<24 { try recovered.set(table(1), key: ValueBoxKey([UInt8(key)]), value: MemoryBuffer([0xAB])) }
        try recovered.removeTable(table(2))
        recovered.abort()
        try expectMatches(recovered, model, tableIds: 1...nextTableId, "seed \(seed), after an aborted transaction")

        // The recovered state takes new commits on top and checkpoints like any other.
        try commitRandomTransactions(recovered, &model, &rng, commits: 30, nextTableId: &nextTableId)
        let loggedInAll = Int(recovered.transactionStateVersion - checkpointed)
        let killedAfterCommits = root + "/killed-after-commits"
        try copyDatabaseFiles(from: killed, to: killedAfterCommits)
        try recovered.checkpoint()
        try expectMatches(recovered, model, tableIds: 1...nextTableId, "seed \(seed), after commits and a checkpoint")
        try recovered.close()
        let third = try ValueBox(path: killedAfterCommits, options: options())
        #expect(third.lastRecovery?.replayedCommits == loggedInAll, "seed \(seed)")
        try expectMatches(third, model, tableIds: 1...nextTableId, "seed \(seed), after a kill following new commits")
        try third.close()
    }

    @Test func aRecordThatCannotBeAppliedFailsTheOpenAndLeavesTheFilesAsTheyWere() throws {
        let root = temporaryDatabasePath("recovery-replay-malformed")
        defer { removeItem(root) }
        let original = root + "/original"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let writer = try ValueBox(path: original, options: options())
        for i in 0..<10 {
            try writer.begin()
            try writer.set(table(1), key: ValueBoxKey([UInt8(i)]), value: MemoryBuffer([UInt8](repeating: UInt8(i), count: 300)))
            try writer.commit()
        }
        let killed = root + "/killed"
        try copyDatabaseFiles(from: original, to: killed)
        try writer.close()

        // An eleventh record, sealed like any other (both checksums hold), whose second operation is malformed:
        // a set, then an undefined operation code.
        let file = try PosixFileSystem.shared.open(killed + "/wal", create: false, readOnly: false)
        let log = WriteAheadLog(file: file)
        guard case let .valid(salt, version) = try log.readHeader() else {
            Issue.record("the copied WAL has no valid header")
            return
        }
        let outcome = try log.replay(salt: salt, version: version, afterSequence: 0, sameBoot: false) { _, _, _ in }
        #expect(outcome.applied == 10 && outcome.tornBytes == 0 && outcome.endedAtMarker)
        let record = ByteBuffer()
        for _ in 0..<(WriteAheadLog.recordHeaderSize / 8) { record.append(UInt64(0)) }
        let key: [UInt8] = [42]
        let value = [UInt8](repeating: 7, count: 100)
        record.logSet(table: 1, keyType: .binary, key: key, keyLength: key.count, value: value, valueLength: value.count)
        record.append(UInt8(0xEE))
        try log.append(sequence: 11, record: record, operationCount: 2, sync: false)
        file.close()
        let walBefore = try readFile(killed + "/wal")
        let dataBefore = try readFile(killed + "/data")

        for attempt in 0..<2 {
            let error = expectError("corrupted") { _ = try ValueBox(path: killed, options: options()) }
            #expect(error?.description.contains("WAL record 11") == true, "attempt \(attempt): \(String(describing: error))")
            #expect(try readFile(killed + "/wal") == walBefore, "attempt \(attempt): the log must stay as it was")
            #expect(try readFile(killed + "/data") == dataBefore, "attempt \(attempt): the data file must stay as it was")
        }
    }
}
