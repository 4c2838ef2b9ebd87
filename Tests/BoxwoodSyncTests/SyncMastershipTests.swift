import Foundation
import Testing
import Boxwood
import BoxwoodPlatform
import BoxwoodSync
import BoxwoodSyncSimulator
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One sync client per database (Postbox's MasterClientId): `.ifVacant` is refused while the master's process runs
/// and taken when it ended; `.takeOver` fences the old master, whose next engine transaction stops it; what a
/// process that does not sync queues is sent by the master.
@Suite("Sync mastership", .timeLimit(.minutes(3)))
struct SyncMastershipTests {
    static func server(seed: UInt64) -> SimulatedServer {
        SimulatedServer(configuration: SimulatedServerConfiguration(seed: seed, users: 3, groups: 1, channels: 1, secretChats: 0,
                                                                    initialHistory: 3...8, faults: .none))
    }

    /// Waits for `.mastershipLost` on `events` (nil when the stream ended without it or `limit` passed).
    static func mastershipLost(_ events: AsyncStream<SyncEvent>, within limit: Duration = .seconds(20)) async -> MasterClientState? {
        await withDeadline(limit) {
            for await event in events { if case let .mastershipLost(holder) = event { return holder } }
            return nil
        }
    }

    @Test("in one process: ifVacant refused while the master runs; takeOver stops the old master, whose queued send the new one delivers")
    func takeOverInOneProcess() async throws {
        let server = Self.server(seed: 31)
        let directory = SyncTemporaryDirectory()
        let path = directory.path + "/db"
        let first = try await SyncClient.open(path: path, accountPeerId: server.accountPeerId, transport: server, configuration: .fast)
        try await first.start(mastership: .ifVacant)
        await first.waitUntilQuiet()
        #expect(try await first.mastershipState() == .this)

        // A second Postbox on the same database (an extension, say): refused while the first one's process runs.
        let second = try await SyncClient.open(path: path, accountPeerId: server.accountPeerId, transport: server, configuration: .fast)
        await #expect(throws: SyncError.masterElsewhere(processId: getpid())) { try await second.start(mastership: .ifVacant) }
        #expect(try await second.mastershipState() == .running(processId: getpid()))

        // The second one takes over; the first one stops at its next engine transaction (the pushes of new traffic).
        let firstEvents = first.manager.events
        try await second.start(mastership: .takeOver)
        server.generate(events: 20)
        let holder = await Self.mastershipLost(firstEvents)
        #expect(holder == .running(processId: getpid()))
        #expect(try await first.mastershipState() == .running(processId: getpid()))

        // The first process still queues what its user does; the master sends it, exactly once.
        let text = "queued by the process that does not sync"
        let chat = try #require(server.snapshot().chatStates.keys.sorted().first { $0.namespace == SyncNamespaces.user })
        try await first.outbound.sendMessage(peerId: chat, text: text, timestamp: 1_000)
        server.generate(events: 20)
        for _ in 0..<200 where !server.messagesSent().contains(where: { $0.text == text }) {
            try await Task.sleep(for: .milliseconds(25))
        }
        await second.waitUntilQuiet()
        try await second.manager.synchronize()
        await second.waitUntilQuiet()
        #expect(server.messagesSent().filter { $0.text == text }.count == 1)
        let report = try await ConsistencyCheck.check(second.postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(10))")

        // The master gives the database up: ifVacant is taken now.
        try await second.stopSyncing()
        #expect(try await first.mastershipState() == MasterClientState.none)
        let third = SyncClient(postbox: first.postbox, transport: server, accountPeerId: server.accountPeerId, configuration: .fast)
        try await third.start(mastership: .ifVacant)
        #expect(try await third.mastershipState() == .this)
        try await third.stopSyncing()
        try await first.stopSyncing()
        try await first.postbox.close()
        try await second.postbox.close()
    }

    @Test("a fenced client commits nothing: a batch it built before the takeover is refused, and the stored cursor stays the new master's")
    func fencedBatchIsRefused() async throws {
        let server = Self.server(seed: 32)
        let directory = SyncTemporaryDirectory()
        let path = directory.path + "/db"
        let old = try await SyncClient.open(path: path, accountPeerId: server.accountPeerId, transport: server, configuration: .fast)
        try await old.start()
        await old.waitUntilQuiet()
        let oldEvents = old.manager.events
        let taker = try await SyncClient.openPostbox(path: path)
        try await taker.transaction { try $0.becomeMasterClient() }
        let before = try await taker.transaction { try $0.getState() as? SyncAccountState }
        // The old client polls: the answer is fetched, but the batch's transaction is refused.
        server.generate(events: 30)
        await old.manager.requestDifference()
        #expect(await Self.mastershipLost(oldEvents) != nil)
        let after = try await taker.transaction { try $0.getState() as? SyncAccountState }
        #expect(before == after, "the fenced client moved the stored cursor")
        try await old.stopSyncing()
        try await old.postbox.close()
        try await taker.close()
    }

    @Test("real processes: a child is refused while the master child runs, takes over once it is SIGKILLed, and is stopped by a take-over")
    func processesAndKills() async throws {
        guard let executable = SyncChild.locate("boxwood-sync-child") else {
            Issue.record("boxwood-sync-child was not found; run `swift build --build-tests` first (or set BOXWOOD_SYNC_CHILD)")
            return
        }
        ProcessSignals.ignoreBrokenPipe()
        let server = Self.server(seed: 33)
        let directory = SyncTemporaryDirectory()
        let database = directory.path + "/db"
        func spawn(_ name: String, _ mastership: String) throws -> (SyncChild, String) {
            let stderrPath = directory.path + "/\(name).stderr"
            let child = try SyncChild(executable: executable,
                                      arguments: [database, String(server.accountPeerId.toInt64()), "--mastership", mastership],
                                      stderrPath: stderrPath, server: server, onAnswer: nil)
            child.host.start()
            return (child, stderrPath)
        }
        func quiesce(_ child: SyncChild, _ stderrPath: String) async {
            let answer = await withDeadline(.seconds(60)) { await child.host.command(.quiesce) }
            #expect(answer == .some(.quiet), "quiesce answered \(String(describing: answer)); stderr: \(SyncChild.tail(stderrPath))")
        }

        // A is the master.
        let (a, aLog) = try spawn("a", "if-vacant")
        await quiesce(a, aLog)
        server.generate(events: 15)
        await quiesce(a, aLog)

        // B, while A runs: refused, exit 6, naming A.
        let (b, bLog) = try spawn("b", "if-vacant")
        #expect(try await b.reap() == .exited(6))
        await b.host.waitUntilClosed()
        #expect(SyncChild.tail(bLog).contains("master elsewhere: process \(a.pid)"), "\(SyncChild.tail(bLog))")

        // A is killed mid-traffic; C takes the database over and converges.
        server.generate(events: 15)
        a.process.kill()
        #expect(try await a.reap() == .signaled(SIGKILL))
        await a.host.waitUntilClosed()
        let (c, cLog) = try spawn("c", "if-vacant")
        server.generate(events: 15)
        await quiesce(c, cLog)

        // D takes over from the running C: C logs the loss once its next engine transaction is refused.
        let (d, dLog) = try spawn("d", "take-over")
        await quiesce(d, dLog)
        server.generate(events: 25)
        var lost = false
        for _ in 0..<400 where !lost {
            try await Task.sleep(for: .milliseconds(25))
            lost = SyncChild.tail(cLog).contains("mastership lost")
        }
        #expect(lost, "C did not stop: \(SyncChild.tail(cLog))")
        await quiesce(d, dLog)
        for (child, log) in [(c, cLog), (d, dLog)] {
            let stopped = await withDeadline(.seconds(30)) { await child.host.command(.exit) }
            #expect(stopped == .some(.stopped), "exit answered \(String(describing: stopped)); stderr: \(SyncChild.tail(log))")
            if stopped == nil { child.process.kill() }
            _ = try await child.reap()
            await child.host.waitUntilClosed()
        }

        try SyncClient.registerTypes()
        let postbox = try await SyncClient.openPostbox(path: database)
        let report = try await ConsistencyCheck.check(postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(10))")
        #expect(try await postbox.transaction { try $0.masterClientState() } == MasterClientState.none, "D resigned at exit")
        try await postbox.close()
    }
}
