import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator

/// The simulated server, with the two ways race tests step into a request: a gate that holds the next answer of one
/// request kind (fetched from the server when asked, returned when the test opens the gate), so that a test can land
/// other work between the server's answer and its replay; and a hook run once just before the server answers the
/// first `getPeerDialogs`, so that what it does on the server happens after the client asked and is in the answer.
final class InterceptingTransport: SyncTransport, @unchecked Sendable {
    /// The request whose answer the gate holds.
    enum Gated { case getDialogs, getHistory }

    let base: SimulatedServer
    private let gated: Gated?
    private let gate = AnswerGate()
    private let hook: OnceHook

    init(base: SimulatedServer, gating gated: Gated? = nil, beforePeerDialogs: (@Sendable (SimulatedServer) -> Void)? = nil) {
        self.base = base
        self.gated = gated
        hook = OnceHook(body: beforePeerDialogs)
    }

    /// Holds the next answer of the gated request until ``open()``.
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
        if gated == .getDialogs { await gate.holdIfArmed() }
        return answer
    }
    func getPeerDialogs(peers: [PeerId]) async throws(SyncTransportError) -> ApiDialogs {
        await hook.runOnce(base)
        return try await base.getPeerDialogs(peers: peers)
    }
    func getHistory(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        let answer = try await base.getHistory(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit, maxId: maxId, minId: minId)
        if gated == .getHistory { await gate.holdIfArmed() }
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

    /// Holds one answer, when armed, until opened.
    private actor AnswerGate {
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

    /// Runs its body once, at the first call.
    private actor OnceHook {
        private var body: (@Sendable (SimulatedServer) -> Void)?
        init(body: (@Sendable (SimulatedServer) -> Void)?) { self.body = body }
        func runOnce(_ server: SimulatedServer) {
            body?(server)
            body = nil
        }
    }
}
