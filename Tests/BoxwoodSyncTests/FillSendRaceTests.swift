import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator
import Testing

/// A history fill makes its range match the server's answer, deleting stored messages the answer lacks. A send's
/// answer is stored by the outbound queue, outside the state manager's queue, so it can land while a fill's page is on
/// its way; a page fetched before the send lacks it, and the fill must not delete it as gone — in a secret chat no
/// update would bring it back. (The sync simulation found it with lazy chat-list paging: a secret chat below the list's
/// hole reads as one hole up to the top.)
@Suite("Hole fill and send race", .timeLimit(.minutes(2)))
struct FillSendRaceTests {
    @Test func aSecretChatSendAnsweredWhileAHistoryPageIsInFlightSurvivesTheFill() async throws {
        // A server whose secret chat is not the newest of its dialogs: with pages of one dialog the first sync leaves
        // it below the chat list's hole, its history one hole up to the top.
        let server = try #require((11...60).lazy.map { seed in
            SimulatedServer(configuration: SimulatedServerConfiguration(
                seed: UInt64(seed), users: 3, groups: 0, channels: 0, secretChats: 1, initialHistory: 8...12, faults: .none))
        }.first { server in
            let snapshot = server.snapshot()
            let positions = snapshot.chatStates.keys.map { ($0, snapshot.dialogPosition($0)) }
            let top = positions.max { $0.1 < $1.1 }
            return top.map { $0.0.namespace != SyncNamespaces.secretChat } ?? false
        })
        let secretChat = try #require(server.snapshot().chatStates.keys.first { $0.namespace == SyncNamespaces.secretChat })
        let transport = InterceptingTransport(base: server, gating: .getHistory)
        let directory = SyncTemporaryDirectory()
        var configuration = SyncConfiguration.fast
        configuration.dialogsPageSize = 1
        configuration.dialogPagesAtReset = 1
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: transport,
                                               configuration: configuration)
        try await client.start()
        await client.waitUntilQuiet()
        let topBefore = try #require(server.snapshot().chatStates[secretChat]?.messages.keys.max())

        let holesBefore = try await client.postbox.transaction { tx in try tx.getHoles(peerId: secretChat, namespace: SyncNamespaces.cloudMessages, space: .everywhere) }
        #expect((holesBefore.last?.upperBound ?? 0) >= Int32.max - 1, "the chat's history is one hole up to the top: \(holesBefore)")
        // A view of the chat: its history (a hole reaching the top when the chat is below the list's hole, or below
        // its newest messages otherwise) is fetched from the top, and the answer is held.
        await transport.arm()
        let view = client.postbox.view(.messageHistory(peerId: secretChat, namespace: SyncNamespaces.cloudMessages, anchor: nil, count: 30))
        let watcher = Task { for try await _ in view {} }
        await transport.waitUntilHolding()

        _ = try await client.outbound.sendMessage(peerId: secretChat, text: "sent during the fill", timestamp: server.snapshot().state.date)
        let sentId = topBefore + 1
        let stored = MessageId(peerId: secretChat, namespace: SyncNamespaces.cloudMessages, id: sentId)
        var answered = false
        for _ in 0..<400 where !answered {
            answered = try await client.postbox.transaction { tx in try tx.getMessage(stored) != nil }
            if !answered { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(answered, "the send was not answered while the history page was held")

        await transport.open()
        await client.waitUntilQuiet()
        try await Task.sleep(for: .milliseconds(50))
        await client.waitUntilQuiet()
        let kept = try await client.postbox.transaction { tx in try tx.getMessage(stored) != nil }
        #expect(kept, "the fill deleted the server copy of a message sent while its page was in flight")
        watcher.cancel()
        try await client.stop()
    }
}
