import BoxwoodStore
import Foundation
import Testing

// Several real processes (boxwood-process-child, spawned with posix_spawn) on one database: exact shared
// counters, an invariant checked on thousands of snapshots while writers commit and checkpoint, writers and
// readers SIGKILLed while holding the writer lock or a snapshot pin, MasterClientId and change notification
// across processes. Run `swift build` first. BOXWOOD_MP_TXNS sets the transactions per writing process
// (default 2,000); BOXWOOD_SEED replays the workload.

@Suite(.serialized) struct MultiProcessTests {
    let counterTable = ValueBoxTable(id: 1, keyType: .int64)
    let listTable = ValueBoxTable(id: 2, keyType: .int64)
    let accountTable = ValueBoxTable(id: 3, keyType: .int64)

    var transactions: Int { ProcessInfo.processInfo.environment["BOXWOOD_MP_TXNS"].flatMap { Int($0) } ?? 2_000 }
    var seed: UInt64 {
        let seed = ProcessInfo.processInfo.environment["BOXWOOD_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64(Int32.max))
        print("MultiProcessTests seed \(seed) (replay with BOXWOOD_SEED=\(seed))")
        return seed
    }

    @Test func fourWritersKeepSharedCountersExact() throws {
        let (child, directory) = try setUp("counters")
        let db = directory + "/db"
        let processes = 4, txns = transactions, counters = 10
        let seed = self.seed
        let children = try (0..<processes).map { p in
            try CrashChild(executable: child, arguments: ["counter", db, "\(p)", "\(txns)", "\(counters)", "\(seed &+ UInt64(p))"],
                             stderrPath: directory + "/counter-\(p).err")
        }
        var versionsByProcess: [[UInt64]] = []
        for (p, process) in children.enumerated() {
            let lines = process.remainingLines()
            let termination = process.wait()
            #expect(termination == .exited(0), "process \(p): \(termination), \(errors(directory + "/counter-\(p).err"))")
            #expect(lines.last == "DONE \(txns)", "process \(p)")
            versionsByProcess.append(lines.filter { $0.hasPrefix("V ") }.compactMap { UInt64($0.dropFirst(2)) })
        }
        // Every process committed versions that strictly increase, and together they are 1…N with no
        // duplicate: no update was lost and no two commits saw the same state.
        for (p, versions) in versionsByProcess.enumerated() {
            #expect(versions.count == txns, "process \(p)")
            #expect(zip(versions, versions.dropFirst()).allSatisfy { $0 < $1 }, "process \(p) versions not increasing")
        }
        let all = versionsByProcess.flatMap { $0 }.sorted()
        #expect(all == Array(1...UInt64(processes * txns)))

        let box = try ValueBox(path: db)
        defer { try? box.close() }
        #expect(box.transactionStateVersion == UInt64(processes * txns))
        var total: Int64 = 0
        try box.scanInt64(counterTable) { _, value in total += value.memory.loadUnaligned(as: Int64.self); return true }
        #expect(total == Int64(processes * txns), "shared counters lost updates")
        for (p, versions) in versionsByProcess.enumerated() {
            var stored: [UInt64] = []
            try box.range(listTable, start: ValueBoxKey(int64: Int64(p) << 32 - 1), end: ValueBoxKey(int64: Int64(p + 1) << 32), values: { _, value in
                stored.append(UInt64(value.memory.loadUnaligned(as: Int64.self)))
                return true
            }, limit: 0)
            #expect(stored == versions, "process \(p): its list does not hold the versions it committed")
        }
        #expect(try box.check().problems == [])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// With `compacting`, a fifth process compacts the database over and over meanwhile: the reader's
    /// snapshots span file swaps, and the writers' commits land in whichever file is current.
    @Test(arguments: [false, true])
    func readerSeesAConstantSumWhileWritersTransferAndCheckpoint(compacting: Bool) throws {
        let (child, directory) = try setUp(compacting ? "transfer-compact" : "transfer")
        let db = directory + "/db"
        let accounts = 50, balance: Int64 = 1_000
        do {
            let box = try ValueBox(path: db)
            try box.begin()
            for a in 0..<accounts { try box.set(accountTable, key: ValueBoxKey(int64: Int64(a)), value: int64Buffer(balance)) }
            try box.commit()
            try box.close()
        }
        // The writers run their transactions and then keep going until the reader has checked its snapshots,
        // so that every snapshot is taken while commits and checkpoints happen.
        let stop = directory + "/stop"
        let snapshots = max(transactions, 100)
        let reader = try CrashChild(executable: child, arguments: ["reader", db, "\(accounts)", "\(Int64(accounts) * balance)", "\(snapshots)", stop],
                                      stderrPath: directory + "/reader.err")
        let seed = self.seed
        let writers = try (0..<3).map { p in
            try CrashChild(executable: child, arguments: ["transfer", db, "\(p)", "\(transactions)", "\(accounts)", "\(seed &+ UInt64(p))", stop],
                             stderrPath: directory + "/transfer-\(p).err")
        }
        let compactor = compacting
            ? try CrashChild(executable: child, arguments: ["compactor", db, stop], stderrPath: directory + "/compactor.err") : nil
        let lines = reader.remainingLines()
        #expect(reader.wait() == .exited(0), "reader: \(errors(directory + "/reader.err"))")
        if !FileManager.default.fileExists(atPath: stop) { _ = FileManager.default.createFile(atPath: stop, contents: nil) }
        if let compactor {
            let lines = compactor.remainingLines()
            #expect(compactor.wait() == .exited(0), "compactor: \(errors(directory + "/compactor.err"))")
            let count = lines.last.flatMap { $0.hasPrefix("DONE ") ? Int($0.dropFirst(5)) : nil } ?? 0
            print("compactor: \(count) compactions while the others ran")
            #expect(count >= 3, "\(lines)")
        }
        var committed = 0
        for (p, writer) in writers.enumerated() {
            let lines = writer.remainingLines()
            #expect(writer.wait() == .exited(0), "writer \(p): \(errors(directory + "/transfer-\(p).err"))")
            let count = lines.last.flatMap { $0.hasPrefix("DONE ") ? Int($0.dropFirst(5)) : nil } ?? 0
            #expect(count >= transactions, "writer \(p): \(lines)")
            committed += count
        }
        let done = lines.last?.split(separator: " ") ?? []
        #expect(done.count == 3 && done[0] == "DONE" && Int(done[1]) == snapshots, "\(lines)")
        if done.count == 3, let versions = Int(done[2]) {
            print("reader: \(snapshots) snapshots at \(versions) distinct versions, sum constant in each, while \(committed) transfers committed")
            #expect(versions >= 10, "the reader should have seen the writers' progress")
        }
        let box = try ValueBox(path: db)
        defer { try? box.close() }
        var total: Int64 = 0
        try box.scanInt64(accountTable) { _, value in total += value.memory.loadUnaligned(as: Int64.self); return true }
        #expect(total == Int64(accounts) * balance)
        #expect(box.transactionStateVersion == UInt64(1 + committed))
        #expect(try box.check().problems == [])
        try? FileManager.default.removeItem(atPath: directory)
    }

    @Test func aWriterKilledHoldingTheLockDoesNotBlockTheNextOne() throws {
        let (child, directory) = try setUp("killed-writer")
        let db = directory + "/db"
        var options = ValueBoxOptions()
        options.lockTimeout = 0.3
        let box = try ValueBox(path: db, options: options)
        defer { try? box.close() }
        try box.begin()
        try box.set(counterTable, key: ValueBoxKey(int64: 1), value: int64Buffer(1))
        try box.commit()

        let holder = try CrashChild(executable: child, arguments: ["hold-writer", db], stderrPath: directory + "/holder.err")
        #expect(holder.nextLine(before: .now + .seconds(20)) == "LOCKED", "\(errors(directory + "/holder.err"))")
        #expect(throws: BoxwoodError.lockTimeout(path: db + "/header", seconds: 0.3)) { try box.begin() }
        // Reading never waits for the writer.
        let seenWhileLocked = try box.get(counterTable, key: ValueBoxKey(int64: 1))
        #expect(seenWhileLocked?.memory.loadUnaligned(as: Int64.self) == 1, "\(String(describing: seenWhileLocked?.length)) \(box.snapshotVersion) \(box.transactionStateVersion)")
        holder.sigkill()
        _ = holder.wait()
        // The kernel released the dead writer's lock: the next writer gets it at once, and nothing of the
        // killed writer's transaction exists.
        try box.begin()
        #expect(try box.get(counterTable, key: ValueBoxKey(int64: -1)) == nil)
        try box.set(counterTable, key: ValueBoxKey(int64: 2), value: int64Buffer(2))
        try box.commit()
        #expect(box.transactionStateVersion == 2)
        #expect(try box.check().problems == [])
        try? FileManager.default.removeItem(atPath: directory)
    }

    @Test func aReaderKilledMidSnapshotDoesNotStopPageReuse() throws {
        let (child, directory) = try setUp("killed-reader")
        let db = directory + "/db"
        var options = ValueBoxOptions()
        options.checkpointWALBytes = .max
        let box = try ValueBox(path: db, options: options)
        defer { try? box.close() }
        func round(_ r: Int) throws {
            try box.begin()
            for k in 0..<400 { try box.set(listTable, key: ValueBoxKey(int64: Int64(k)), value: int64Buffer(Int64(r * 1000 + k))) }
            try box.commit()
            try box.checkpoint()
        }
        for r in 0..<3 { try round(r) }
        let reader = try CrashChild(executable: child, arguments: ["hold-reader", db], stderrPath: directory + "/reader.err")
        let pinned = reader.nextLine(before: .now + .seconds(20))
        #expect(pinned?.hasPrefix("PINNED ") == true, "\(errors(directory + "/reader.err"))")

        // While the reader's snapshot is pinned, checkpoints must not overwrite the pages it may read: they
        // append, and the file grows.
        let pagesBefore = try box.statistics().pagesTotal
        for r in 3..<8 { try round(r) }
        let pagesWhilePinned = try box.statistics().pagesTotal
        #expect(pagesWhilePinned > pagesBefore)

        // Killed mid-snapshot: its slot's lock is gone, the next checkpoint clears its pin, and page reuse
        // resumes — the file stops growing under the same steady workload.
        reader.sigkill()
        _ = reader.wait()
        for r in 8..<12 { try round(r) }
        let settled = try box.statistics().pagesTotal
        for r in 12..<30 { try round(r) }
        #expect(try box.statistics().pagesTotal == settled, "pages grew from \(settled) after the reader died")
        #expect(try box.check().problems == [])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A compacting process SIGKILLed at random moments (before, while writing `data.compact`, around the
    /// rename): the database opens with every entry, checks clean, and the unfinished file is removed.
    @Test func aCompactionKilledAtAnyMomentLeavesACompleteDatabase() throws {
        let (child, directory) = try setUp("killed-compactor")
        let db = directory + "/db"
        var rng = SplitMix64(seed: seed)
        var expected: [Int64: Int64] = [:]
        do {
            let box = try ValueBox(path: db)
            try box.begin()
            for k in 0..<20_000 {
                try box.set(listTable, key: ValueBoxKey(int64: Int64(k)), value: int64Buffer(Int64(k) * 3))
                expected[Int64(k)] = Int64(k) * 3
            }
            try box.commit()
            try box.close()
        }
        let rounds = 12
        var interrupted = 0
        for round in 0..<rounds {
            // Churn between rounds so that every compaction has free pages to drop and entries to move.
            let box = try ValueBox(path: db)
            try box.begin()
            for _ in 0..<2_000 {
                let k = Int64(rng.below(20_000))
                let v = Int64(rng.below(1 << 30))
                try box.set(listTable, key: ValueBoxKey(int64: k), value: int64Buffer(v))
                expected[k] = v
            }
            try box.commit()
            try box.close()
            let compactor = try CrashChild(executable: child, arguments: ["compactor", db, directory + "/never"],
                                             stderrPath: directory + "/compactor-\(round).err")
            usleep(UInt32(5_000 + rng.below(150_000)))
            compactor.sigkill()
            #expect(compactor.wait() == .signaled(SIGKILL), "\(errors(directory + "/compactor-\(round).err"))")
            if FileManager.default.fileExists(atPath: db + "/data.compact") { interrupted += 1 }
            let reopened = try ValueBox(path: db)
            var stored: [Int64: Int64] = [:]
            try reopened.scanInt64(listTable) { key, value in stored[key] = value.memory.loadUnaligned(as: Int64.self); return true }
            #expect(stored == expected, "round \(round)")
            #expect(try reopened.check().problems == [], "round \(round)")
            #expect(!FileManager.default.fileExists(atPath: db + "/data.compact"), "round \(round)")
            try reopened.close()
        }
        print("compactor killed \(rounds) times, \(interrupted) of them with data.compact half-written")
        try? FileManager.default.removeItem(atPath: directory)
    }

    @Test func masterClientIdIsSharedAcrossProcesses() throws {
        let (child, directory) = try setUp("master")
        let db = directory + "/db"
        let box = try ValueBox(path: db)
        defer { try? box.close() }
        #expect(box.masterClientId == 0 && !box.isMasterClient)
        try box.becomeMasterClient()
        #expect(box.isMasterClient)
        let version = box.transactionStateVersion
        try box.becomeMasterClient()   // already master: nothing is written
        #expect(box.transactionStateVersion == version)

        let other = try CrashChild(executable: child, arguments: ["master", db], stderrPath: directory + "/master.err")
        let line = other.nextLine(before: .now + .seconds(20)) ?? ""
        #expect(other.wait() == .exited(0), "\(errors(directory + "/master.err"))")
        let otherId = Int64(line.dropFirst("MASTER ".count)) ?? 0
        #expect(otherId != 0 && otherId != box.sessionClientId)
        // Seen without I/O, before this box even starts a transaction.
        #expect(box.masterClientId == otherId)
        #expect(!box.isMasterClient)
        try box.close()
        // Durable: checkpointed into the meta page by the child's close, and read back on open.
        try? FileManager.default.removeItem(atPath: db + "/header")
        let reopened = try ValueBox(path: db)
        #expect(reopened.masterClientId == otherId)
        try reopened.becomeMasterClient()
        #expect(reopened.isMasterClient)
        try reopened.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    @Test func externalCommitsArriveAsAnAsyncSequence() async throws {
        let (child, directory) = try setUp("changes")
        let db = directory + "/db"
        let box = try ValueBox(path: db)
        defer { try? box.close() }
        try box.begin()
        try box.set(counterTable, key: ValueBoxKey(int64: 0), value: int64Buffer(0))
        try box.commit()
        let changes = box.externalChanges()
        let writer = try CrashChild(executable: child, arguments: ["counter", db, "0", "300", "3", "1"], stderrPath: directory + "/writer.err")
        var seen: [UInt64] = []
        for try await version in changes {
            seen.append(version)
            if version == 301 { break }
        }
        _ = writer.remainingLines()
        #expect(writer.wait() == .exited(0), "\(errors(directory + "/writer.err"))")
        #expect(seen.last == 301)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 })
        #expect(!seen.contains(1), "this box's own commit is not an external change")
        // The box itself catches up at its next call.
        #expect(box.snapshotVersion == 1)
        #expect(try box.count(listTable) == 300)
        #expect(box.snapshotVersion == 301)
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: Helpers

    private func setUp(_ name: String) throws -> (child: String, directory: String) {
        guard let child = CrashChild.locate("boxwood-process-child") else {
            throw TestSetupError("boxwood-process-child was not found; run `swift build` before `swift test`")
        }
        let directory = NSTemporaryDirectory() + "boxwood-mp-\(name)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return (child, directory)
    }

    private func errors(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    private func int64Buffer(_ value: Int64) -> MemoryBuffer {
        withUnsafeBytes(of: value) { MemoryBuffer(Array($0)) }
    }
}

struct TestSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
