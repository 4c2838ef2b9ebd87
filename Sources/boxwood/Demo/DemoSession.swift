import Boxwood
import BoxwoodPlatform
import BoxwoodStore
import BoxwoodSync
import BoxwoodSyncSimulator
import Foundation
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
    /// Edits the client queued: of its own messages (applied) and of other people's (the server refuses each).
    private var ownEdits = 0
    /// This process's view of the demo database (set by `run`).
    private var postbox: Postbox?
    private var editsOfOthers = 0
    /// Forwards the client queued.
    private var forwards = 0
    /// The file sent as a resumable upload, once queued: its path and bytes.
    private var sentFile: (path: String, bytes: [UInt8])?

    init(seed: UInt64, duration: Double, kills: Int, tui: Bool, databasePath: String) {
        self.seed = seed
        self.duration = duration
        plannedKills = kills
        self.databasePath = databasePath
        output = DemoOutput(tui: tui)
        random = DemoRandom(seed: seed)
        var configuration = SimulatedServerConfiguration(
            seed: seed, users: 24, groups: 6, channels: 6, secretChats: 2, initialHistory: 80...400,
            differenceSliceSize: 100, channelTooLongThreshold: 200, faults: .realistic)
        // One broadcast channel the account may read but not post in: a send there is refused for good.
        configuration.readOnlyChannels = 1
        server = SimulatedServer(configuration: configuration)
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
        let postbox = try await SyncClient.openPostbox(path: databasePath)
        self.postbox = postbox
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
        try await injectRefusedSend(child, world: world)
        while DemoClock.now() - start < duration {
            try await child.ensureRunning(during: "live traffic")
            server.generate(events: 4)
            if random.chance(0.15) { try await send(child, chats: world.chatStates.keys.sorted()) }
            if random.chance(0.10) { try await read(child, chats: world.chatStates.keys.sorted()) }
            // Every fourth edit is of someone else's message (refused by the server, undone in the client).
            if random.chance(0.10) { try await edit(child, chats: world.chatStates.keys.sorted(), own: (ownEdits + editsOfOthers) % 4 != 3) }
            if random.chance(0.10) { try await react(child, chats: world.chatStates.keys.sorted()) }
            if random.chance(0.05) { try await forward(child, chats: world.chatStates.keys.sorted()) }
            // The file goes out shortly before the first kill, so the kill usually lands in its upload.
            if sentFile == nil, DemoClock.now() - start >= duration / Double(plannedKills + 1) - 0.4 {
                try await sendFile(child, world: world)
            }
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
        let failed = excerpt.failedSends.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        print("  refused by the server    sends left failed (resendable): \(failed.isEmpty ? "none" : failed); "
              + "edits of others' messages refused and undone: \(editsOfOthers) (own edits applied: \(ownEdits))")
        print("  files and forwards       \(uploadSummary()); forwards queued: \(forwards)")
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

    /// A send the server refuses for good (a channel the account may not post in): the client shows it failed.
    private func injectRefusedSend(_ client: DemoClient, world: SimulatedServerSnapshot) async throws {
        guard let channel = world.chatStates.keys.filter({ $0.namespace == SyncNamespaces.channel }).sorted().last else { return }
        let name = world.chats[channel]?.title ?? "\(channel)"
        output.log("📵 sending to \(jsonString(name)), where the account may not post: the server refuses it (CHAT_WRITE_FORBIDDEN), the message stays failed")
        try await client.run(.send(peerId: channel, text: "can I post here?", date: server.snapshot().state.date))
    }

    /// Edits the newest message of a random chat: the account's own (applied), or someone else's (refused:
    /// MESSAGE_AUTHOR_REQUIRED, undone in the client).
    private func edit(_ client: DemoClient, chats: [PeerId], own: Bool) async throws {
        let editable = chats.filter { $0.namespace != SyncNamespaces.secretChat }
        guard let peerId = random.element(editable),
              let message = try await storedMessages(peerId).filter({ $0.flags.contains(.incoming) != own }).first else { return }
        let reply = try await client.run(.edit(peerId: peerId, id: message.id.id, text: message.text + " (edited)"))
        if reply == .actionQueued { if own { ownEdits += 1 } else { editsOfOthers += 1 } }
    }

    /// A 1 MiB file to the first user chat, uploaded in parts of 1 KiB (the sync child's part size): a kill during
    /// the upload is resumed by the next client process from the first part not acknowledged.
    private func sendFile(_ client: DemoClient, world: SimulatedServerSnapshot) async throws {
        guard let user = world.chatStates.keys.filter({ $0.namespace == SyncNamespaces.user }).sorted().first else { return }
        // Beside the database directory (the app keeps an outgoing file in its container until it is sent).
        let path = databasePath + "-demo-video.mp4"
        let bytes = (0..<(1 << 20)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        sentFile = (path, bytes)
        output.log("📎 sending demo-video.mp4 (1 MiB) as a resumable upload in 1,024 parts; a kill mid-upload resumes from the last acknowledged part")
        _ = try await client.run(.sendFile(peerId: user, path: path, fileName: "demo-video.mp4", mimeType: "video/mp4", caption: "the demo video"))
    }

    /// What became of the file: parts, parts sent again after a kill, and whether the server's copy is the file.
    private func uploadSummary() -> String {
        guard let sentFile else { return "no file sent" }
        guard let message = server.messagesSent().first(where: { $0.text == "the demo video" }),
              case let .document(document)? = message.content.media else { return "demo-video.mp4 not sent yet" }
        let received = server.partsReceived(document.id)
        let again = received.values.reduce(0) { $0 + max(0, $1 - 1) }
        let identical = server.uploadedFile(document.id) == sentFile.bytes
        return "demo-video.mp4 sent once, \(received.count) parts (\(again) sent again after a lost answer or the kill), server copy \(identical ? "identical" : "DIFFERENT")"
    }

    /// Forwards one stored message of a random chat to another chat.
    private func forward(_ client: DemoClient, chats: [PeerId]) async throws {
        let forwardable = chats.filter { $0.namespace != SyncNamespaces.secretChat }
        guard let from = random.element(forwardable), let to = random.element(forwardable),
              let message = random.element(try await storedMessages(from)) else { return }
        if try await client.run(.forward(fromPeerId: from, ids: [message.id.id], toPeerId: to)) == .queued { forwards += 1 }
    }

    private func react(_ client: DemoClient, chats: [PeerId]) async throws {
        let reactable = chats.filter { $0.namespace != SyncNamespaces.secretChat }
        let stored = try await storedMessages(random.element(reactable) ?? reactable[0])
        guard let message = random.element(stored) else { return }
        _ = try await client.run(.react(peerId: message.id.peerId, id: message.id.id, emoji: random.element(["👍", "❤️", "🔥", "😂"])))
    }

    /// The newest cloud messages of `peerId` the client has stored (read through this process's view of the database).
    private func storedMessages(_ peerId: PeerId) async throws -> [Message] {
        guard let postbox else { return [] }
        return try await postbox.transaction { transaction in
            try transaction.getMessageHistory(peerId: peerId, namespaces: [SyncNamespaces.cloudMessages], anchor: nil, direction: .earlier, limit: 10)
        }
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
