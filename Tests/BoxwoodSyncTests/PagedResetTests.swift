import Boxwood
@testable import BoxwoodSync
import BoxwoodSyncSimulator
import Foundation
import Testing

/// A transport in front of a simulated server that runs `betweenPages` after answering each page of the dialog list
/// but the last (traffic landing while the client pages), and can fail every later page for good (a client killed
/// between pages: it never gets further).
private final class PagingTransport: SyncTransport, @unchecked Sendable {
    let base: SimulatedServer
    private let lock = NSLock()
    private var pagesAnswered = 0
    /// Pages answered before every later one fails with `.timeout` (nil: no limit).
    let pageLimit: Int?
    let betweenPages: @Sendable (SimulatedServer) -> Void

    init(base: SimulatedServer, pageLimit: Int? = nil, betweenPages: @escaping @Sendable (SimulatedServer) -> Void = { _ in }) {
        self.base = base
        self.pageLimit = pageLimit
        self.betweenPages = betweenPages
    }

    var pages: Int { lock.withLock { pagesAnswered } }

    func getState() async throws(SyncTransportError) -> ApiUpdatesState { try await base.getState() }
    func getDifference(pts: Int32, qts: Int32, date: Int32, ptsTotalLimit: Int32) async throws(SyncTransportError) -> ApiDifference {
        try await base.getDifference(pts: pts, qts: qts, date: date, ptsTotalLimit: ptsTotalLimit)
    }
    func getChannelDifference(channelId: PeerId, pts: Int32, limit: Int32) async throws(SyncTransportError) -> ApiChannelDifference {
        try await base.getChannelDifference(channelId: channelId, pts: pts, limit: limit)
    }
    func getDialogs(offset: ApiDialogsOffset?, limit: Int32) async throws(SyncTransportError) -> ApiDialogs {
        let answered = lock.withLock { pagesAnswered }
        if let pageLimit, answered >= pageLimit { throw .timeout }
        let page = try await base.getDialogs(offset: offset, limit: limit)
        lock.withLock { pagesAnswered += 1 }
        if page.nextOffset != nil { betweenPages(base) }
        return page
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
}

/// The rebuild from the dialog list, page by page (issue 26): the cursor is the first page's and is stored only with
/// the last page, so what changes while paging comes again from the next difference, and a client stopped between
/// pages rebuilds on its next start.
@Suite("Paged reset from the dialog list", .timeLimit(.minutes(2)))
struct PagedResetTests {
    private static func server(seed: UInt64, pinned: Int = 0) -> SimulatedServer {
        var configuration = SimulatedServerConfiguration(seed: seed, users: 6, groups: 3, channels: 3, secretChats: 1,
                                                         initialHistory: 5...30, faults: .none)
        configuration.pinnedChats = pinned
        return SimulatedServer(configuration: configuration)
    }

    private static func configuration(pageSize: Int32) -> SyncConfiguration {
        var configuration = SyncConfiguration.fast
        configuration.dialogsPageSize = pageSize
        // These tests are about the rebuild's pages: the whole list at once (the chat-list hole: ChatListHoleTests).
        configuration.dialogPagesAtReset = Int.max
        return configuration
    }

    @Test func aFirstSyncInPagesStoresEveryChatAndThePinnedOnesFirst() async throws {
        let server = Self.server(seed: 3, pinned: 2)
        let chats = server.snapshot().chatStates.count
        let directory = SyncTemporaryDirectory()
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: Self.configuration(pageSize: 3))
        try await client.start()
        await client.waitUntilQuiet()
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(5))")
        // The pinned chats head the first page (beside 3 others), then 3 a page.
        let unpinned = chats - 2
        #expect(await client.manager.statistics.dialogPages == 1 + (unpinned - 3 + 2) / 3)
        #expect(await client.manager.statistics.implausibleAnswers == 0)
        let (rows, cursor) = try await client.postbox.transaction { tx in
            (try tx.getChatListEntries(groupId: .root, count: 0), try tx.getState() as? SyncAccountState)
        }
        #expect(rows.count == chats)
        let pinned = try await server.getDialogs(offset: nil, limit: 1).dialogs.filter(\.pinned).map(\.peerId)
        #expect(pinned.count == 2)
        let listedFirst = rows.prefix(2).compactMap { row -> PeerId? in if case let .chat(item) = row, item.isPinned { item.peerId } else { nil } }
        #expect(listedFirst == pinned)
        #expect(cursor == SyncAccountState(pts: server.snapshot().state.pts, qts: server.snapshot().state.qts,
                                           date: server.snapshot().state.date, seq: server.snapshot().state.seq))
        try await client.stop()
    }

    /// Traffic between the pages (new messages, reads, deletes, edits) moves chats up the list and changes chats
    /// already stored; the first page's cursor brings all of it again through the difference, and replaying it over
    /// the pages changes nothing twice.
    @Test func trafficWhilePagingIsFetchedByTheNextDifference() async throws {
        for seed: UInt64 in [5, 6, 7] {
            let server = Self.server(seed: seed, pinned: Int(seed % 2))
            let transport = PagingTransport(base: server) { server in server.generate(events: 12) }
            let directory = SyncTemporaryDirectory()
            let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId,
                                                   transport: transport, configuration: Self.configuration(pageSize: 2))
            try await client.start()
            await client.waitUntilQuiet()
            await SyncSimulation.quiesce(client: client, server: server)
            // Several pages were read with traffic between them (12 events each move most of these ~12 chats above
            // the offset, so how many pages it takes depends on the seed's traffic); the chats that jumped are
            // repaired by getPeerDialogs and the difference, which the consistency check below proves.
            #expect(transport.pages >= 2)
            let report = try await ConsistencyCheck.check(client.postbox, server: server)
            #expect(report.differences.isEmpty, "seed \(seed): \(report.differences.prefix(5))")
            try await client.stop()
        }
    }

    /// A client stopped after the first page stored its chats but no cursor; the next start rebuilds and ends equal
    /// to the server.
    @Test func aClientStoppedBetweenPagesRebuildsOnItsNextStart() async throws {
        let server = Self.server(seed: 9, pinned: 1)
        let directory = SyncTemporaryDirectory()
        let path = directory.path + "/db"
        let transport = PagingTransport(base: server, pageLimit: 1)
        let first = try await SyncClient.open(path: path, accountPeerId: server.accountPeerId, transport: transport,
                                              configuration: Self.configuration(pageSize: 3))
        try await first.start()
        var stored = 0
        for _ in 0..<400 where stored == 0 {
            stored = try await first.postbox.transaction { tx in try tx.getChatListEntries(groupId: .root, count: 0).count }
            if stored == 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        // The first page (the pinned chat and 3 others) is stored; the cursor is not.
        #expect(stored == 4)
        let cursor = try await first.postbox.transaction { tx in try tx.getState() as? SyncAccountState }
        #expect(cursor == nil)
        server.generate(events: 20)
        try await first.stop()

        let second = try await SyncClient.open(path: path, accountPeerId: server.accountPeerId, transport: server,
                                               configuration: Self.configuration(pageSize: 3))
        try await second.start()
        await second.waitUntilQuiet()
        let report = try await ConsistencyCheck.check(second.postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(5))")
        let rows = try await second.postbox.transaction { tx in try tx.getChatListEntries(groupId: .root, count: 0).count }
        #expect(rows == server.snapshot().chatStates.count)
        try await second.stop()
    }

    /// The rebuild after a difference `tooLong` pages too: its pages keep the old cursor (a page replayed after the
    /// cursor moved is discarded), and the last one stores the new one.
    @Test func aTooLongDifferenceRebuildsInPages() async throws {
        let server = Self.server(seed: 12)
        let directory = SyncTemporaryDirectory()
        var configuration = Self.configuration(pageSize: 2)
        configuration.ptsTotalLimit = 5
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: configuration)
        try await client.start()
        await client.waitUntilQuiet()
        let pagesBefore = await client.manager.statistics.dialogPages
        server.setFaults(SimulatedFaults(dropPush: 1))
        server.generate(events: 40)
        server.setFaults(.none)
        try await client.manager.synchronize()
        await client.waitUntilQuiet()
        #expect(await client.manager.statistics.differenceTooLong >= 1)
        #expect(await client.manager.statistics.dialogPages >= pagesBefore + 2)
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(5))")
        try await client.stop()
    }

    @Test func aPageMovesOnlyWhenItHoldsADialogAndItsOffsetGoesDown() {
        let peer = PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(5))
        let dialog = ApiDialog(peerId: peer, topMessage: 4, readInboxMaxId: 0, readOutboxMaxId: 0, unreadCount: 0, pts: nil, muteUntil: 0)
        let offset = ApiDialogsOffset(date: 10, id: 4, peerId: peer)
        #expect(AccountStateManager.moves(from: nil, to: offset, dialogs: [dialog]))
        #expect(!AccountStateManager.moves(from: nil, to: offset, dialogs: []))
        #expect(!AccountStateManager.moves(from: offset, to: offset, dialogs: [dialog]))
        #expect(!AccountStateManager.moves(from: offset, to: ApiDialogsOffset(date: 11, id: 1, peerId: peer), dialogs: [dialog]))
        #expect(AccountStateManager.moves(from: offset, to: ApiDialogsOffset(date: 10, id: 3, peerId: peer), dialogs: [dialog]))
    }
}
