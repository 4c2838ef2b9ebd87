import BoxwoodStore
import Foundation
import Testing

/// `ValueBox.backup(to:)` while other processes commit: three `boxwood-process-child transfer` writers move money
/// between accounts (the sum never changes) and checkpoint, while this process takes backups from a read-only value
/// box. Each copy must pass `check`, hold every account, and sum to the constant (a consistent snapshot, not a mix
/// of two), and the writers must go on committing during the backups (no writer lock is taken). Run `swift build`
/// first. BOXWOOD_SEED replays the writers' choices.
@Suite(.serialized) struct HotBackupTests {
    let accountTable = ValueBoxTable(id: 3, keyType: .int64)

    @Test func backupsWhileThreeProcessesCommitAreConsistentSnapshots() throws {
        guard let child = CrashChild.locate("boxwood-process-child") else {
            throw TestSetupError("boxwood-process-child was not found; run `swift build` before `swift test`")
        }
        let seed = ProcessInfo.processInfo.environment["BOXWOOD_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64(Int32.max))
        print("HotBackupTests seed \(seed) (replay with BOXWOOD_SEED=\(seed))")
        let directory = NSTemporaryDirectory() + "boxwood-backup-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let db = directory + "/db"
        let accounts = 2_000, balance: Int64 = 1_000
        do {
            let box = try ValueBox(path: db)
            try box.begin()
            for a in 0..<accounts {
                try box.set(accountTable, key: ValueBoxKey(int64: Int64(a)), value: withUnsafeBytes(of: balance) { MemoryBuffer(Array($0)) })
            }
            try box.commit()
            try box.close()
        }
        let stop = directory + "/stop"
        let writers = try (0..<3).map { p in
            try CrashChild(executable: child, arguments: ["transfer", db, "\(p)", "200", "\(accounts)", "\(seed &+ UInt64(p))", stop],
                           stderrPath: directory + "/transfer-\(p).err")
        }
        let reader = try ValueBox(path: db, options: ValueBoxOptions(readOnly: true))
        var versions: [UInt64] = []
        for round in 0..<6 {
            let copyPath = directory + "/copy-\(round)"
            let result = try reader.backup(to: copyPath)
            versions.append(result.version)
            let copy = try ValueBox(path: copyPath, options: ValueBoxOptions(readOnly: true))
            #expect(try copy.check().problems == [], "copy \(round)")
            var total: Int64 = 0
            var count = 0
            try copy.scanInt64(accountTable) { _, value in
                total += value.memory.loadUnaligned(as: Int64.self)
                count += 1
                return true
            }
            #expect(count == accounts, "copy \(round) at version \(result.version)")
            #expect(total == Int64(accounts) * balance, "copy \(round) at version \(result.version) is not one snapshot")
            #expect(result.entries == accounts)
            try copy.close()
        }
        try reader.close()
        _ = FileManager.default.createFile(atPath: stop, contents: nil)
        var committed = 0
        for (p, writer) in writers.enumerated() {
            let lines = writer.remainingLines()
            #expect(writer.wait() == .exited(0), "writer \(p): \((try? String(contentsOfFile: directory + "/transfer-\(p).err", encoding: .utf8)) ?? "")")
            committed += lines.last.flatMap { $0.hasPrefix("DONE ") ? Int($0.dropFirst(5)) : nil } ?? 0
        }
        print("hot backup: 6 copies at versions \(versions) while 3 writers committed \(committed) transfers")
        // The writers committed between the backups: each later copy is of a later state.
        #expect(zip(versions, versions.dropFirst()).allSatisfy { $0 < $1 }, "\(versions)")
    }
}
