import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator
import Testing

/// A transport that holds one `getDialogs` answer (fetched from the server when asked, returned when the
/// test opens the gate), so that a test can land other work between the server's answer and its replay.
private final class GatedDialogsTransport: SyncTransport, @unchecked Sendable {
    let base: SimulatedServer
    private let gate = Gate()

    init(base: SimulatedServer) { self.base = base }

    /// Holds the next `getDialogs` answer until ``open()``.
    func arm() async { await gate.arm() }
    /// Waits until a held answer was fetched.
    func waitUntilHolding() async { await gate.waitUntilHolding() }
    func open() async { await gate.open() }

    func getState() async throws(SyncTransportError) -> ApiUpdatesState { try await base.getState() }
    func getDifference(pts: Int32, qts: Int32, date: Int32, ptsTotalLimit: Int32) async throws(SyncTransportError) -> ApiDifference {
        try await base.getDifference(pts: pts, qts: qts, date: date, ptsTotalLimit: ptsTotalLimit)
    }
    func getChannelDifference(channelId: PeerId, pts: Int32, limit: Int32) async throws(SyncTransportError) -> ApiChannelDifference {
        try await base.getChannelDifference(channelId: channelId, pts: pts, limit: limit)
    }
    func getDialogs(offset: ApiDialogsOffset?, limit: Int32) async throws(SyncTransportError) -> ApiDialogs {
        let answer = try await base.getDialogs(offset: offset, limit: limit)
        await gate.holdIfArmed()
        return answer
    }
    func getPeerDialogs(peers: [PeerId]) async throws(SyncTransportError) -> ApiDialogs {
        try await base.getPeerDialogs(peers: peers)
    }
    func getHistory(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        try await base.getHistory(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit, maxId: maxId, minId: minId)
    }
    func sendMessage(peerId: PeerId, text: String, randomId: Int64, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        try await base.sendMessage(peerId: peerId, text: text, randomId: randomId, mutation: mutation)
    }
    func readHistory(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        try await base.readHistory(peerId: peerId, maxId: maxId, mutation: mutation)
    }
    func getUnreadMentions(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32,
                           minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        try await base.getUnreadMentions(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit, maxId: maxId, minId: minId)
    }
    func connect() async -> AsyncStream<SyncPushEvent> { await base.connect() }

    private actor Gate {
        private var armed = false
        private var holding = false
        private var released: CheckedContinuation<Void, Never>?
        private var holdingWaiters: [CheckedContinuation<Void, Never>] = []

        func arm() { armed = true }

        func holdIfArmed() async {
            guard armed else { return }
            armed = false
            holding = true
            for waiter in holdingWaiters { waiter.resume() }
            holdingWaiters = []
            await withCheckedContinuation { released = $0 }
        }

        func waitUntilHolding() async {
            if holding { return }
            await withCheckedContinuation { holdingWaiters.append($0) }
        }

        func open() {
            holding = false
            released?.resume()
            released = nil
        }
    }
}

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
        let transport: GatedDialogsTransport
        let directory: SyncTemporaryDirectory
        let client: SyncClient
        let secretChat: PeerId
    }

    private func startHoldingFirstSync(initialHistory: ClosedRange<Int>) async throws -> HeldFirstSync {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(
            seed: 11, users: 2, groups: 0, channels: 0, secretChats: 1, initialHistory: initialHistory, faults: .none))
        let secretChat = try #require(server.snapshot().chatStates.keys.first { $0.namespace == SyncNamespaces.secretChat })
        let transport = GatedDialogsTransport(base: server)
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
