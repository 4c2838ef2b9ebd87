import Foundation
import Testing
import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator

/// Notifications with content for any number of consumers, each with its own bounded buffer.
@Suite("Sync notifications", .timeLimit(.minutes(1)))
struct SyncNotificationTests {
    func open() async throws -> (SimulatedServer, SyncClient, SyncTemporaryDirectory) {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(seed: 21, users: 3, groups: 1, channels: 1, secretChats: 0,
                                                                                 initialHistory: 3...6, faults: .none))
        let directory = SyncTemporaryDirectory()
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: .fast)
        try await client.start()
        await client.waitUntilQuiet()
        return (server, client, directory)
    }

    /// Collects notifications until `count` arrived or `deadline` passed.
    func collect(_ stream: AsyncStream<SyncNotification>, count: Int, within deadline: Duration = .seconds(10)) async -> [SyncNotification] {
        await withTaskGroup(of: [SyncNotification].self) { group in
            group.addTask {
                var all: [SyncNotification] = []
                for await notification in stream {
                    all.append(notification)
                    if all.count == count { break }
                }
                return all
            }
            group.addTask {
                try? await Task.sleep(for: deadline)
                return []
            }
            let first = await group.next() ?? []
            group.cancelAll()
            return first
        }
    }

    @Test func everySubscriberGetsNewMessagesWithTheirContent() async throws {
        let (server, client, _) = try await open()
        let first = client.manager.notifications()
        let second = client.manager.notifications()
        let user = try #require(server.snapshot().chatStates.keys.first { $0.namespace == SyncNamespaces.user })
        server.generateBurst(messages: 5, into: user)
        async let a = collect(first, count: 5)
        async let b = collect(second, count: 5)
        let (seenByFirst, seenBySecond) = await (a, b)
        #expect(seenByFirst == seenBySecond && seenByFirst.count == 5)
        #expect(seenByFirst.map(\.sequence) == Array(seenByFirst.first!.sequence..<seenByFirst.first!.sequence + 5))
        let name = try #require(server.snapshot().users[user].map { $0.firstName })
        for notification in seenByFirst {
            guard case let .newMessage(summary, source) = notification.kind else { Issue.record("\(notification)"); continue }
            let text = server.snapshot().chatStates[user]?.messages[summary.id.id]?.text ?? "?"
            #expect(source == .realtime && summary.id.peerId == user && !summary.outgoing)
            #expect(summary.chatTitle?.hasPrefix(name) == true && summary.authorName?.hasPrefix(name) == true)
            #expect(summary.preview.hasSuffix(text), "the preview ends with the text (after a media label, if any)")
        }
        try await client.stop()
    }

    @Test func aSlowSubscriberLosesTheOldestAndSeesTheJump() async throws {
        let (server, client, _) = try await open()
        let slow = client.manager.notifications(bufferSize: 2)
        let fast = client.manager.notifications(bufferSize: 1_000)
        let group = try #require(server.snapshot().chatStates.keys.first { $0.namespace == SyncNamespaces.group })
        server.generateBurst(messages: 12, into: group)
        let all = await collect(fast, count: 12)
        #expect(all.count == 12)
        let kept = await collect(slow, count: 2)
        #expect(kept == Array(all.suffix(2)), "the newest two are kept")
        #expect(kept.first!.sequence > all.first!.sequence + 1, "the jump shows what was dropped")
        try await client.stop()
    }

    /// Collects a subscription's notifications for the whole test (cancelling an iteration would end it).
    final class Collector: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [SyncNotification] = []
        private var task: Task<Void, Never>?

        init(_ stream: AsyncStream<SyncNotification>) {
            task = Task { [weak self] in
                for await notification in stream { self?.lock.withLock { self?.seen.append(notification) } }
            }
        }

        var all: [SyncNotification] { lock.withLock { seen } }

        func wait(until done: ([SyncNotification]) -> Bool) async {
            for _ in 0..<500 where !done(all) { try? await Task.sleep(for: .milliseconds(10)) }
        }

        func stop() { task?.cancel() }
    }

    @Test func editsAndReactionsComeWithTheMessage() async throws {
        let (server, client, _) = try await open()
        let group = try #require(server.snapshot().chatStates.keys.first { $0.namespace == SyncNamespaces.group })
        let sent = try await client.outbound.sendMessage(peerId: group, text: "typo", timestamp: server.snapshot().state.date)
        for _ in 0..<100 where try await client.postbox.transaction({ try $0.getMessage(sent) }) != nil {
            try await Task.sleep(for: .milliseconds(10))
        }
        await client.waitUntilQuiet()
        let cloud = try #require(try await client.postbox.transaction { transaction in
            try transaction.getMessageHistory(peerId: group, namespaces: [SyncNamespaces.cloudMessages], anchor: nil, direction: .earlier, limit: 5)
                .first { $0.text == "typo" }?.id
        })
        let collector = Collector(client.manager.notifications())
        defer { collector.stop() }
        // The account's own edit comes back from the server as a newer version: an edit notification with the text.
        try await client.outbound.editMessage(cloud, text: "fixed")
        await collector.wait { $0.contains { if case .edited = $0.kind { true } else { false } } }
        let edited = collector.all.compactMap { if case let .edited(summary) = $0.kind { summary } else { nil } }
        #expect(edited.map(\.id) == [cloud] && edited.first?.preview == "fixed" && edited.first?.outgoing == true)
        // Someone reacts (the server's traffic) to a message the client has: the reactions as stored.
        func reaction() -> (MessageId, [ApiReaction])? {
            collector.all.lazy.compactMap { if case let .reactions(id, reactions) = $0.kind { (id, reactions) } else { nil } }.first
        }
        for _ in 0..<300 where reaction() == nil {
            server.generate(.reactToMessage)
            await client.waitUntilQuiet()
        }
        await collector.wait { _ in reaction() != nil }
        let (id, reactions) = try #require(reaction())
        let stored = try await client.postbox.transaction { transaction in try transaction.getMessage(id).map { SyncMessageContent.content(of: $0).reactions } }
        #expect(stored == nil || stored == reactions)
        let sequences = collector.all.map(\.sequence)
        #expect(sequences == Array(sequences.first!..<sequences.first! + UInt64(sequences.count)), "no gap with a large buffer")
        try await client.stop()
    }
}
