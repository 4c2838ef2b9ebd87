import Boxwood
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
    let databasePath: String
    let output: DemoOutput
    let server: SimulatedServer
    private var random: DemoRandom
    private var childStatistics: [SyncStatistics] = []
    private var kills = 0

    init(seed: UInt64, duration: Double, tui: Bool, databasePath: String) {
        self.seed = seed
        self.duration = duration
        self.databasePath = databasePath
        output = DemoOutput(tui: tui)
        random = DemoRandom(seed: seed)
        server = SimulatedServer(configuration: SimulatedServerConfiguration(
            seed: seed, users: 24, groups: 6, channels: 6, secretChats: 2, initialHistory: 80...400,
            differenceSliceSize: 100, channelTooLongThreshold: 200, faults: .realistic))
    }

    func run() async throws -> DemoVerdict {
        ignoreBrokenPipeSignals()
        let world = server.snapshot()
        let messageCount = world.chatStates.values.reduce(0) { $0 + $1.messages.count }
        output.log("server: \(world.users.count - 1) users, \(world.chats.count) groups and channels, \(world.chatStates.count) chats, \(messageCount) messages (seed \(seed))")
        output.log("faults on: pushes dropped, duplicated, delayed and reordered; disconnects; failed requests; lost answers")
        output.log("database: \(databasePath)")

        // This process reads the database the client writes: a second process on the same files.
        SyncClient.registerTypes()
        let postbox = try await Postbox.open(path: databasePath, seedConfiguration: SyncClient.seedConfiguration)
        let viewed = Array(world.chatStates.keys.sorted().prefix(4))
        let screen = DemoScreen(postbox: postbox, output: output)
        screen.start()

        // 1. First sync.
        output.phase("first sync")
        var child = try spawnClient(viewing: viewed)
        try await waitForCursor(postbox)
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
        try await showCatchUp(postbox)
        output.log("caught up in \(fixed(DemoClock.now() - catchUpStart, 2)) s (the server answers getDifference in slices of 100)")

        // 4. Live traffic, with a SIGKILL part-way.
        output.phase("live")
        let start = DemoClock.now()
        var killed = false
        while DemoClock.now() - start < duration {
            server.generate(events: 4)
            if random.chance(0.15) { try await send(child.host, chats: world.chatStates.keys.sorted()) }
            if random.chance(0.10) { try await read(child.host, chats: world.chatStates.keys.sorted()) }
            if !killed && DemoClock.now() - start >= duration / 2 {
                if case let .statistics(statistics)? = await child.host.command(.statistics) { childStatistics.append(statistics) }
                child.process.kill()
                await child.host.waitUntilClosed()
                kills += 1
                killed = true
                output.log("💥 client process \(child.process.pid) killed with SIGKILL mid-sync; restarting it")
                child = try spawnClient(viewing: viewed)
            }
            try await Task.sleep(for: .milliseconds(100))
        }

        // 5. Settle.
        output.phase("settling")
        server.setFaults(.none)
        server.deliverDelayed()
        _ = await child.host.command(.quiesce)
        try await stop(child)
        screen.stop()
        try await Task.sleep(for: .milliseconds(200))

        // Summary and verdict.
        let report = try await ConsistencyCheck.check(postbox, server: server)
        let version = try await postbox.transaction { transaction in try transaction.getTransactionStateVersion() }
        let cursor = try await postbox.transaction { transaction in try transaction.getState() as? SyncAccountState }
        try await postbox.close()
        var total = SyncStatistics()
        for statistics in childStatistics { total.add(statistics) }
        let faults = server.faultStats
        output.finish()
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
        print("  messages compared        \(report.messagesCompared) (\(report.messagesInHoles) still in \(report.holes) holes)")
        print("  database size            \(formatBytes(UInt64(max(0, directorySize(databasePath)))))")
        print("verdict: \(report.description)")
        return report.isConsistent ? .consistent : .inconsistent
    }

    // MARK: Client processes

    struct Client {
        let process: ChildProcess
        let host: PipeServerHost
    }

    private func spawnClient(viewing peers: [PeerId]) throws -> Client {
        let executable = siblingExecutable("boxwood-sync-child")
        let process = try ChildProcess.spawn(executable, [databasePath, String(server.accountPeerId.toInt64()),
                                                          "--view", peers.map { String($0.toInt64()) }.joined(separator: ",")])
        let host = PipeServerHost(server: server, input: process.fromChild, output: process.toChild)
        host.start()
        output.log("client process \(process.pid) started")
        return Client(process: process, host: host)
    }

    private func stop(_ client: Client) async throws {
        if case let .statistics(statistics)? = await client.host.command(.statistics) { childStatistics.append(statistics) }
        _ = await client.host.command(.exit)
        client.process.wait()
        await client.host.waitUntilClosed()
    }

    private func send(_ host: PipeServerHost, chats: [PeerId]) async throws {
        let sendable = chats.filter { $0.namespace != SyncNamespaces.secretChat }
        guard let peerId = random.element(sendable) else { return }
        _ = await host.command(.send(peerId: peerId, text: DemoRandom.phrases[Int(random.next() % UInt64(DemoRandom.phrases.count))],
                                     date: server.snapshot().state.date))
    }

    private func read(_ host: PipeServerHost, chats: [PeerId]) async throws {
        guard let peerId = random.element(chats), let top = server.snapshot().chatStates[peerId]?.messages.keys.max() else { return }
        _ = await host.command(.read(peerId: peerId, maxId: top))
    }

    private func waitForCursor(_ postbox: Postbox) async throws {
        while try await postbox.transaction({ transaction in try transaction.getState() != nil }) == false {
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// A progress bar of the stored pts against the server's until they meet.
    private func showCatchUp(_ postbox: Postbox) async throws {
        let target = server.snapshot().state.pts
        let from = try await postbox.transaction { transaction in (try transaction.getState() as? SyncAccountState)?.pts ?? 0 }
        while true {
            let pts = try await postbox.transaction { transaction in (try transaction.getState() as? SyncAccountState)?.pts ?? 0 }
            output.progress(done: Int(pts - from), total: Int(max(1, target - from)), label: "pts \(pts)/\(target)")
            if pts >= target { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        output.endProgress()
    }
}

/// The path of an executable built next to this one.
func siblingExecutable(_ name: String) -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard length > 0 else { return name }
    let path = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard let slash = path.lastIndex(of: "/") else { return name }
    return String(path[..<slash]) + "/" + name
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
