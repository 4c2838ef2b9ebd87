import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator
import Testing

/// The simulated server, holding one `getHistory` answer (fetched from the server when asked, returned when the test
/// opens the gate), so that a test can land a send's answer between the server's answer and the fill's store.
private final class GatedHistoryTransport: SyncTransport, @unchecked Sendable {
    let base: SimulatedServer
    private let gate = Gate()

    init(base: SimulatedServer) { self.base = base }

    func arm() async { await gate.arm() }
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
        try await base.getDialogs(offset: offset, limit: limit)
    }
    func getPeerDialogs(peers: [PeerId]) async throws(SyncTransportError) -> ApiDialogs { try await base.getPeerDialogs(peers: peers) }
    func getHistory(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        let answer = try await base.getHistory(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit, maxId: maxId, minId: minId)
        await gate.holdIfArmed()
        return answer
    }
    func getUnreadMentions(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32,
                           minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        try await base.getUnreadMentions(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit, maxId: maxId, minId: minId)
    }
    func sendMessage(peerId: PeerId, text: String, randomId: Int64, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        try await base.sendMessage(peerId: peerId, text: text, randomId: randomId, mutation: mutation)
    }
    func readHistory(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        try await base.readHistory(peerId: peerId, maxId: maxId, mutation: mutation)
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
        let transport = GatedHistoryTransport(base: server)
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
