import Boxwood
@testable import BoxwoodSync
import BoxwoodSyncSimulator
import Foundation
import Testing

/// A synthetic account's transport that records the history windows asked for.
private final class RecordingTransport: SyncTransport, @unchecked Sendable {
    struct HistoryRequest: Hashable {
        let peerId: PeerId
        let offsetId: Int32
        let addOffset: Int32
        let limit: Int32
        let maxId: Int32
        let minId: Int32
    }

    let base: SyntheticAccountServer
    private let lock = NSLock()
    private var recorded: [HistoryRequest] = []

    init(base: SyntheticAccountServer) { self.base = base }

    var historyRequests: [HistoryRequest] { lock.withLock { recorded } }

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
    func getPeerDialogs(peers: [PeerId]) async throws(SyncTransportError) -> ApiDialogs {
        try await base.getPeerDialogs(peers: peers)
    }
    func getHistory(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        lock.withLock {
            recorded.append(HistoryRequest(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit, maxId: maxId, minId: minId))
        }
        return try await base.getHistory(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit, maxId: maxId, minId: minId)
    }
    func sendMessage(peerId: PeerId, text: String, randomId: Int64, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        try await base.sendMessage(peerId: peerId, text: text, randomId: randomId, mutation: mutation)
    }
    func readHistory(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        try await base.readHistory(peerId: peerId, maxId: maxId, mutation: mutation)
    }
    func connect() async -> AsyncStream<SyncPushEvent> { await base.connect() }
}

/// Holes are filled from the side the view looks at (issue 26): a view opened around a message deep in a hole gets
/// that message's neighbourhood first (`getHistory` with `offset_id` = the message and `add_offset` = −half a
/// page), then the pages next to it, one at a time, until its window has no hole.
@Suite("Hole filling around the visible position", .timeLimit(.minutes(2)))
struct HoleFillAroundTests {
    private static let peer = PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(5))

    private static func message(_ id: Int32, peer: PeerId = Self.peer) -> ApiMessage {
        ApiMessage(id: id, peerId: peer, fromId: peer, date: id, text: "m\(id)", outgoing: false)
    }

    @Test func aViewOpenedInsideAHoleGetsItsAnchorsNeighbourhoodFirst() async throws {
        let server = try SyntheticAccountServer(chats: 3, messagesPerChat: 400, pinnedChats: 0)
        let transport = RecordingTransport(base: server)
        let directory = SyncTemporaryDirectory()
        var configuration = SyncConfiguration.fast
        configuration.holeFillPageSize = 10
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: transport,
                                               configuration: configuration)
        try await client.start()
        await client.waitUntilQuiet()
        #expect(transport.historyRequests.isEmpty, "no view, no fill: the first sync stores the top messages only")

        let peerId = server.peer(ofChat: 1)
        // Message 200 of the chat's 400: deep in the hole below the top message.
        let window = try await server.getHistory(peerId: peerId, offsetId: 0, addOffset: 200, limit: 1, maxId: 0, minId: 0)
        let anchor = try #require(window.first)
        let index = MessageIndex(id: MessageId(peerId: peerId, namespace: SyncNamespaces.cloudMessages, id: anchor.id), timestamp: anchor.date)
        var views = client.postbox.view(.messageHistory(peerId: peerId, namespace: SyncNamespaces.cloudMessages, anchor: index, count: 20))
            .makeAsyncIterator()
        var settled: MessageHistoryView?
        let deadline = ContinuousClock.now + .seconds(30)
        while settled == nil, ContinuousClock.now < deadline, let next = try await views.next() {
            let view = try #require(next as? MessageHistoryView)
            if view.holes.isEmpty, view.entries.count == 20 { settled = view }
        }
        let view = try #require(settled, "the view around message \(anchor.id) still shows a hole")
        #expect(view.entries.contains { $0.id.id == anchor.id })

        let requests = transport.historyRequests.filter { $0.peerId == peerId }
        let first = try #require(requests.first)
        #expect(first.offsetId == anchor.id && first.addOffset == -5 && first.limit == 10)
        // The later pages stay next to the anchor: nothing is fetched from the chat's top or bottom end.
        #expect(requests.count < 8, "\(requests)")
        #expect(requests.dropFirst().allSatisfy { $0.offsetId != 0 || $0.maxId != 0 })
        try await client.stop()
    }

    @Test func aPageProvesKnownOnlyWhatItsWindowCovers() {
        let hole: ClosedRange<Int32> = 100...200
        // From the top: a full page covers from its lowest message up to the hole's top.
        let top = HoleFillPage(range: hole, direction: .upperToLower, limit: 3)
        #expect((top.offsetId, top.addOffset, top.maxId, top.minId) == (0, 0, 201, 99))
        #expect(top.filledRange([190, 180, 170].map { Self.message($0) }, peerId: Self.peer) == 170...200)
        #expect(top.filledRange([190].map { Self.message($0) }, peerId: Self.peer) == hole, "a short page is all there is")
        // From the bottom: the oldest messages, and up to the highest of them.
        let bottom = HoleFillPage(range: hole, direction: .lowerToUpper, limit: 3)
        #expect((bottom.offsetId, bottom.addOffset) == (100, -3))
        #expect(bottom.filledRange([130, 120, 110].map { Self.message($0) }, peerId: Self.peer) == 100...130)
        // Around an anchor: from the lowest to the highest message, up to the hole's top when fewer than half a
        // page came at or above the anchor.
        let anchor = MessageId(peerId: Self.peer, namespace: SyncNamespaces.cloudMessages, id: 150)
        let around = HoleFillPage(range: hole, direction: .aroundId(anchor), limit: 4)
        #expect((around.offsetId, around.addOffset) == (150, -2))
        #expect(around.filledRange([160, 150, 140, 130].map { Self.message($0) }, peerId: Self.peer) == 130...160)
        #expect(around.filledRange([150, 140, 130, 120].map { Self.message($0) }, peerId: Self.peer) == 120...200)
        #expect(around.filledRange([150, 140].map { Self.message($0) }, peerId: Self.peer) == hole)
        // Messages outside the hole or of another chat prove nothing; a full page of them fills nothing.
        let other = PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(6))
        #expect(top.filledRange([300, 250].map { Self.message($0) } + [Self.message(150, peer: other)], peerId: Self.peer) == nil)
        // A hole reaching the top of the id space has no upper bound to ask with.
        #expect(HoleFillPage(range: 1...(Int32.max - 1), direction: .upperToLower, limit: 5).maxId == 0)
    }
}
