import BoxwoodStore
import Foundation
import Testing
@testable import BoxwoodStore

/// Torn tail or mid-log damage: a damaged WAL record with an intact record of the same log after it is corruption
/// when that record proves the damaged one was complete (same boot, or written after it was synced); the log is
/// then left untouched and every open refuses with `.corrupted`. Anything else is a torn tail: cut, reported in
/// `lastRecovery`, and the database opens. Real files, the state a killed process leaves (files copied while the
/// value box is open).
@Suite struct WALDamageTests {
    let table = ValueBoxTable(id: 3, keyType: .int64)

    private func options(_ durability: Durability = .normal, readOnly: Bool = false) -> ValueBoxOptions {
        var options = ValueBoxOptions(readOnly: readOnly)
        options.durability = durability
        options.checkpointWALBytes = 1 << 30
        options.lockTimeout = 2
        return options
    }

    /// A database whose WAL holds `count` commits of 600-byte values, as a killed writer leaves it at `copy`.
    /// Returns where each commit's record starts.
    private func killedWriter(_ copy: String, durability: Durability, count: Int = 20) throws -> [Int] {
        let path = temporaryDatabasePath("wal-damage-origin")
        defer { removeItem(path) }
        let box = try ValueBox(path: path, options: options(durability))
        var starts: [Int] = []
        for i in 0..<count {
            starts.append(Int(box.wal!.size))
            try box.begin()
            try box.set(table, key: ValueBoxKey(int64: Int64(i)), value: MemoryBuffer([UInt8](repeating: UInt8(i), count: 600)))
            try box.commit()
        }
        try copyDatabaseFiles(from: path, to: copy)
        // The shared header too, as the killed process left it (it says the log was intact in this boot).
        try writeFile(copy + "/header", try readFile(path + "/header"))
        try box.close()
        return starts
    }

    private func damage(_ path: String, at offset: Int, _ bytes: [UInt8]) throws {
        var wal = try readFile(path + "/wal")
        wal.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
        try writeFile(path + "/wal", wal)
    }

    /// Makes the header say the WAL was last found intact in another boot (as after a restart).
    private func forgetBoot(_ path: String) throws {
        var header = try readFile(path + "/header")
        header.replaceSubrange(104..<112, with: [UInt8](repeating: 0, count: 8))
        try writeFile(path + "/header", header)
    }

    private func expectRefused(_ path: String, _ comment: Comment) throws {
        let before = try readFile(path + "/wal")
        for readOnly in [true, false] {
            let error = expectError("corrupted") { _ = try ValueBox(path: path, options: options(readOnly: readOnly)) }
            #expect(error?.description.contains("intact record") == true, comment)
        }
        #expect(try readFile(path + "/wal") == before, "\(comment): the damaged log must be kept untouched")
    }

    @Test func aZeroSectorInTheMiddleOfTheLogIsCorruptionNotATornTail() throws {
        let path = temporaryDatabasePath("wal-damage-zero-sector")
        defer { removeItem(path) }
        let starts = try killedWriter(path, durability: .normal)
        // A whole aligned sector inside record 5 (before: it and the 14 acknowledged commits after it were dropped,
        // `check` said ok and the next writer truncated the log).
        let sector = (starts[5] + 511) / 512 * 512
        #expect(sector + 512 < starts[7])
        try damage(path, at: sector, [UInt8](repeating: 0, count: 512))
        try expectRefused(path, "zero sector mid-log, same boot")
    }

    @Test func aDamagedRecordHeaderMidLogIsFoundByScanning() throws {
        let path = temporaryDatabasePath("wal-damage-header")
        defer { removeItem(path) }
        let starts = try killedWriter(path, durability: .normal)
        try damage(path, at: starts[3] + 2, [0x5A])
        try expectRefused(path, "flipped length byte of record 3")
    }

    @Test func afterARestartTheSyncedFlagStillProvesMidLogDamageInFullMode() throws {
        let path = temporaryDatabasePath("wal-damage-full-reboot")
        defer { removeItem(path) }
        let starts = try killedWriter(path, durability: .full)
        try forgetBoot(path)
        try damage(path, at: starts[8] + 100, [UInt8](repeating: 0, count: 200))
        try expectRefused(path, "full mode, other boot")
    }

    @Test func afterARestartANormalModeHoleKeepsThePrefix() throws {
        // A power cut in `normal` mode may lose unsynced records in any order: the promise is the prefix.
        let path = temporaryDatabasePath("wal-damage-normal-reboot")
        defer { removeItem(path) }
        let starts = try killedWriter(path, durability: .normal)
        try forgetBoot(path)
        try damage(path, at: starts[8] + 100, [UInt8](repeating: 0, count: 200))
        let box = try ValueBox(path: path, options: options())
        #expect(box.transactionStateVersion == 8)
        #expect(try box.count(table) == 8)
        #expect(box.lastRecovery?.replayedCommits == 8)
        #expect(box.lastRecovery?.tornTailOffset == UInt64(starts[8]))
        #expect(box.lastRecovery?.tornTailWasCut == true)
        #expect(try box.check().problems == [])
        try box.close()
    }

    @Test(arguments: [Durability.normal, .full])
    func aTornLastRecordIsCutWhateverItsDamageLooksLike(_ durability: Durability) throws {
        let path = temporaryDatabasePath("wal-damage-torn-tail")
        defer { removeItem(path) }
        let starts = try killedWriter(path, durability: durability)
        let walSize = try readFile(path + "/wal").count
        // What a power-loss file system leaves of an interrupted append: parts 1 and 3 written, part 2 (300
        // bytes, not sector aligned) never — it reads as zeros. Before: `checksum mismatch in wal` at every open.
        try damage(path, at: starts[19] + 150, [UInt8](repeating: 0, count: 300))
        let reader = try ValueBox(path: path, options: options(readOnly: true))
        #expect(reader.transactionStateVersion == 19)
        #expect(reader.lastRecovery == RecoveryReport(replayedCommits: 19, tornTailOffset: UInt64(starts[19]),
                                                      tornTailBytes: UInt64(walSize - starts[19]), tornTailWasCut: false))
        try reader.close()
        let box = try ValueBox(path: path, options: options(durability))
        #expect(box.transactionStateVersion == 19)
        #expect(box.lastRecovery?.tornTailWasCut == true)
        #expect(try readFile(path + "/wal").count == starts[19])
        try box.begin()
        try box.set(table, key: ValueBoxKey(int64: 99), value: MemoryBuffer([1]))
        try box.commit()
        try box.close()
        let reopened = try ValueBox(path: path, options: options(durability))
        #expect(reopened.transactionStateVersion == 20)
        #expect(try reopened.count(table) == 20)
        try reopened.close()
    }

    @Test func aCleanLogReportsNoTornTail() throws {
        let path = temporaryDatabasePath("wal-damage-clean")
        defer { removeItem(path) }
        _ = try killedWriter(path, durability: .normal, count: 4)
        let box = try ValueBox(path: path, options: options())
        #expect(box.lastRecovery == RecoveryReport(replayedCommits: 4, tornTailOffset: nil, tornTailBytes: 0, tornTailWasCut: false))
        try box.close()
    }

    @Test func aTransactionOverTheRecordLimitIsATypedErrorAndTheBoxStaysUsable() throws {
        let path = temporaryDatabasePath("wal-too-large")
        defer { removeItem(path) }
        let box = try ValueBox(path: path, options: options())
        box.wal!.payloadLimit = 4096   // the real limit is 4 GiB; the check is the same
        try box.begin()
        // Values the record carries (a larger one would be written once, the record naming it in a few bytes):
        // 1,000 bytes each, incompressible, 5,000 in all.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for k in 1...5 {
            let bytes = (0..<1000).map { _ -> UInt8 in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
            try box.set(table, key: ValueBoxKey(int64: Int64(k)), value: MemoryBuffer(bytes))
        }
        let error = expectError("transactionTooLarge") { try box.commit() }
        if case let .transactionTooLarge(bytes, limit)? = error { #expect(bytes > 5000 && limit == 4096) }
        #expect(try box.count(table) == 0)
        try box.begin()
        try box.set(table, key: ValueBoxKey(int64: 7), value: MemoryBuffer([1, 2, 3]))
        try box.commit()
        try box.close()
        let reopened = try ValueBox(path: path, options: options())
        #expect(reopened.transactionStateVersion == 1)
        #expect(try reopened.count(table) == 1)
        #expect(try reopened.get(table, key: ValueBoxKey(int64: 7))?.length == 3)
        try reopened.close()
    }
}
