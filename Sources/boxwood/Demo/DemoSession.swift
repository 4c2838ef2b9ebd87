import Boxwood
import BoxwoodPlatform
import BoxwoodStore
import BoxwoodSync
import BoxwoodSyncSimulator
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The demo's phases, run in order; everything printed goes through ``DemoOutput``.
final class DemoSession: @unchecked Sendable {
    let seed: UInt64
    let duration: Double
    /// SIGKILLs of the client during live traffic, at `duration * k / (plannedKills + 1)`.
    let plannedKills: Int
    let databasePath: String
    let output: DemoOutput
    let server: SimulatedServer
    private var random: DemoRandom
    private var childStatistics: [SyncStatistics] = []
    private var kills = 0

    init(seed: UInt64, duration: Double, kills: Int, tui: Bool, databasePath: String) {
        self.seed = seed
        self.duration = duration
        plannedKills = kills
        self.databasePath = databasePath
        output = DemoOutput(tui: tui)
        random = DemoRandom(seed: seed)
        server = SimulatedServer(configuration: SimulatedServerConfiguration(
            seed: seed, users: 24, groups: 6, channels: 6, secretChats: 2, initialHistory: 80...400,
            differenceSliceSize: 100, channelTooLongThreshold: 200, faults: .realistic))
    }

    func run() async throws -> DemoVerdict {
        ProcessSignals.ignoreBrokenPipe()
        let world = server.snapshot()
        let messageCount = world.chatStates.values.reduce(0) { $0 + $1.messages.count }
        output.log("server: \(world.users.count - 1) users, \(world.chats.count) groups and channels, \(world.chatStates.count) chats, \(messageCount) messages (seed \(seed))")
        output.log("faults on: pushes dropped, duplicated, delayed and reordered; disconnects; failed requests; lost answers")
        output.log("database: \(databasePath)")

        // This process reads the database the client writes: a second process on the same files.
        try SyncClient.registerTypes()
        let postbox = try await Postbox.open(path: databasePath, seedConfiguration: SyncClient.seedConfiguration)
        let viewed = Array(world.chatStates.keys.sorted().prefix(4))
        let screen = DemoScreen(postbox: postbox, output: output)
        screen.start()

        // 1. First sync.
        output.phase("first sync")
        var child = try spawnClient(viewing: viewed)
        try await waitForCursor(postbox, client: child)
        output.log("first sync done: chat list from getDialogs, every history below its newest message a hole")

        // 2. Offline.
        output.phase("offline")
        try await stop(child)
        let backlog = 900
        server.generate(events: backlog)
        output.log("client offline: the server moved on by \(backlog) updates (under pts_total_limit 1000: a difference, not a reset)")

        // 3. Catch-up.
        output.phase("catch-up")
        child = try spawnClient(viewing: viewed)
        let catchUpStart = DemoClock.now()
        try await showCatchUp(postbox, client: child)
        output.log("caught up in \(fixed(DemoClock.now() - catchUpStart, 2)) s (the server answers getDifference in slices of 100)")

        // 4. Live traffic, with a SIGKILL part-way.
        output.phase("live")
        let start = DemoClock.now()
        while DemoClock.now() - start < duration {
            try await child.ensureRunning(during: "live traffic")
            server.generate(events: 4)
            if random.chance(0.15) { try await send(child, chats: world.chatStates.keys.sorted()) }
            if random.chance(0.10) { try await read(child, chats: world.chatStates.keys.sorted()) }
            if kills < plannedKills && DemoClock.now() - start >= duration * Double(kills + 1) / Double(plannedKills + 1) {
                childStatistics.append(try await child.statistics())
                try await child.kill()
                kills += 1
                output.log("💥 client process \(child.pid) killed with SIGKILL mid-sync; restarting it")
                child = try spawnClient(viewing: viewed)
            }
            try await Task.sleep(for: .milliseconds(100))
        }

        // 5. Settle.
        output.phase("settling")
        server.setFaults(.none)
        server.deliverDelayed()
        try await child.ensureRunning(during: "settling")
        try await child.run(.quiesce)
        try await stop(child)
        screen.stop()
        try await Task.sleep(for: .milliseconds(200))

        // Summary and verdict.
        let report = try await ConsistencyCheck.check(postbox, server: server)
        let excerpt = try await DemoHistoryExcerpt.read(postbox, chats: world.chatStates.keys.sorted())
        let version = try await postbox.transaction { transaction in try transaction.getTransactionStateVersion() }
        let cursor = try await postbox.transaction { transaction in try transaction.getState() as? SyncAccountState }
        try await postbox.close()
        var total = SyncStatistics()
        for statistics in childStatistics { total.add(statistics) }
        let faults = server.faultStats
        output.finish()
        print("")
        print("history of \(excerpt.title), newest first (as `boxwood history` shows it)")
        for line in excerpt.lines { print("  " + line) }
        print("")
        print("summary")
        print("  updates applied          \(total.updatesApplied) (\(total.duplicatesSkipped) duplicates skipped)")
        print("  gaps repaired            \(total.gapsDetected) (\(total.differenceRequests) getDifference, \(total.channelDifferenceRequests) getChannelDifference, \(total.differenceTooLong) tooLong)")
        print("  holes filled             \(total.holesFilled) pages, \(total.messagesFetchedForHoles) messages")
        print("  commits                  \(total.commits) sync batches")
        print("  faults injected          \(faults.dropped) dropped, \(faults.duplicated) duplicated, \(faults.delayed) delayed, \(faults.disconnects) disconnects, \(faults.failedRequests) failed requests, \(faults.lostAnswers) lost answers")
        print("  client kills             \(kills) (SIGKILL, restarted)")
        print("  TransactionStateVersion  \(version)")
        print("  cursor                   pts \(cursor?.pts ?? 0), qts \(cursor?.qts ?? 0), seq \(cursor?.seq ?? 0) (server pts \(server.snapshot().state.pts))")
        print("  messages compared        \(report.messagesCompared) (\(report.messagesInHoles) still in \(report.holes) holes), content included")
        print("  rich content stored      \(excerpt.counts)")
        print("  database size            \(formatBytes(UInt64(max(0, directorySize(databasePath)))))")
        print("verdict: \(report.description)")
        return report.isConsistent ? .consistent : .inconsistent
    }

    // MARK: Client processes

    private func spawnClient(viewing peers: [PeerId]) throws -> DemoClient {
        let client = try DemoClient.start(databasePath: databasePath, server: server, viewing: peers)
        output.log("client process \(client.pid) started")
        return client
    }

    private func stop(_ client: DemoClient) async throws {
        childStatistics.append(try await client.statistics())
        try await client.stop()
    }

    private func send(_ client: DemoClient, chats: [PeerId]) async throws {
        let sendable = chats.filter { $0.namespace != SyncNamespaces.secretChat }
        guard let peerId = random.element(sendable) else { return }
        try await client.run(.send(peerId: peerId, text: DemoRandom.phrases[Int(random.next() % UInt64(DemoRandom.phrases.count))],
                                   date: server.snapshot().state.date))
    }

    private func read(_ client: DemoClient, chats: [PeerId]) async throws {
        guard let peerId = random.element(chats), let top = server.snapshot().chatStates[peerId]?.messages.keys.max() else { return }
        try await client.run(.read(peerId: peerId, maxId: top))
    }

    private func waitForCursor(_ postbox: Postbox, client: DemoClient) async throws {
        while try await postbox.transaction({ transaction in try transaction.getState() != nil }) == false {
            try await client.ensureRunning(during: "the first sync")
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// A progress bar of the stored pts against the server's until they meet.
    private func showCatchUp(_ postbox: Postbox, client: DemoClient) async throws {
        let target = server.snapshot().state.pts
        let from = try await postbox.transaction { transaction in (try transaction.getState() as? SyncAccountState)?.pts ?? 0 }
        while true {
            let pts = try await postbox.transaction { transaction in (try transaction.getState() as? SyncAccountState)?.pts ?? 0 }
            output.progress(done: Int(pts - from), total: Int(max(1, target - from)), label: "pts \(pts)/\(target)")
            if pts >= target { break }
            try await client.ensureRunning(during: "catch-up")
            try await Task.sleep(for: .milliseconds(50))
        }
        output.endProgress()
    }
}

/// Bytes of the regular files directly inside `path`.
func directorySize(_ path: String) -> Int64 {
    guard let directory = opendir(path) else { return 0 }
    defer { closedir(directory) }
    var total: Int64 = 0
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        if name == "." || name == ".." { continue }
        let size = fileSize(path + "/" + name)
        if size > 0 { total += size }
    }
    return total
}

extension SyncStatistics {
    mutating func add(_ other: SyncStatistics) {
        updatesApplied += other.updatesApplied
        duplicatesSkipped += other.duplicatesSkipped
        gapsDetected += other.gapsDetected
        differenceRequests += other.differenceRequests
        differenceTooLong += other.differenceTooLong
        channelDifferenceRequests += other.channelDifferenceRequests
        channelTooLong += other.channelTooLong
        holesFilled += other.holesFilled
        messagesFetchedForHoles += other.messagesFetchedForHoles
        commits += other.commits
        discardedBatches += other.discardedBatches
        retries += other.retries
    }
}
