import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator
import Testing

/// A reset from a dialog list (first sync, difference `tooLong`) replaces each chat's newest messages and read
/// position by the list's. An answer to a send or read that lands between the list's fetch and the reset's
/// replay must survive it: in a secret chat no pts step would bring the server copy or the position back. (The
/// sync simulation found the read case, seed 1314 under load, once it sent to secret chats.)
@Suite("Reset and outbound answer race", .timeLimit(.minutes(2)))
struct ResetRaceTests {
    /// A client of a server with one secret chat, started with the answer of its first sync's `getDialogs`
    /// (a reset from the dialog list) held until the transport's gate opens.
    private struct HeldFirstSync {
        let server: SimulatedServer
        let transport: InterceptingTransport
        let directory: SyncTemporaryDirectory
        let client: SyncClient
        let secretChat: PeerId
    }

    private func startHoldingFirstSync(initialHistory: ClosedRange<Int>) async throws -> HeldFirstSync {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(
            seed: 11, users: 2, groups: 0, channels: 0, secretChats: 1, initialHistory: initialHistory, faults: .none))
        let secretChat = try #require(server.snapshot().chatStates.keys.first { $0.namespace == SyncNamespaces.secretChat })
        let transport = InterceptingTransport(base: server, gating: .getDialogs)
        let directory = SyncTemporaryDirectory()
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId,
                                               transport: transport, configuration: .fast)
        await transport.arm()
        try await client.start()
        await transport.waitUntilHolding()
        return HeldFirstSync(server: server, transport: transport, directory: directory, client: client, secretChat: secretChat)
    }

    @Test func aSecretChatSendAnsweredWhileADialogListIsInFlightSurvivesTheReset() async throws {
        let held = try await startHoldingFirstSync(initialHistory: 3...6)
        let (server, transport, client, secretChat) = (held.server, held.transport, held.client, held.secretChat)
        let topBefore = try #require(server.snapshot().chatStates[secretChat]?.messages.keys.max())

        _ = try await client.outbound.sendMessage(peerId: secretChat, text: "sent during the reset", timestamp: server.snapshot().state.date)
        let sentId = topBefore + 1
        let stored = MessageId(peerId: secretChat, namespace: SyncNamespaces.cloudMessages, id: sentId)
        // The answer is stored (the server copy replaces the local one) while the reset still waits.
        var answered = false
        for _ in 0..<400 where !answered {
            answered = try await client.postbox.transaction { tx in try tx.getMessage(stored) != nil }
            if !answered { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(answered, "the send was not answered while the dialog list was held")
        #expect(server.snapshot().chatStates[secretChat]?.messages[sentId] != nil)

        await transport.open()
        await client.waitUntilQuiet()
        let kept = try await client.postbox.transaction { tx in try tx.getMessage(stored) != nil }
        #expect(kept, "the reset deleted the server copy of a message sent while its dialog list was in flight")
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(5))")
        try await client.stop()
    }

    @Test func aSecretChatReadAnsweredWhileADialogListIsInFlightSurvivesTheReset() async throws {
        let held = try await startHoldingFirstSync(initialHistory: 8...12)
        let (server, transport, client, secretChat) = (held.server, held.transport, held.client, held.secretChat)
        let chat = try #require(server.snapshot().chatStates[secretChat])
        let top = try #require(chat.messages.keys.max())
        try #require(chat.readInboxMaxId < top, "the seed must leave the secret chat partly unread")

        // The read is answered (the server's marker moves, the entry is removed) while the reset still waits
        // with the list's older position.
        try await client.outbound.markRead(peerId: secretChat, maxId: top)
        var answered = false
        for _ in 0..<400 where !answered {
            answered = server.snapshot().chatStates[secretChat]?.readInboxMaxId == top
            if answered { answered = !(await client.outbound.isBusy) }
            if !answered { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(answered, "the read was not answered while the dialog list was held")

        await transport.open()
        await client.waitUntilQuiet()
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(5))")
        try await client.stop()
    }
}
