import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator
import Foundation
import Testing

/// The chat list's hole (issue 26): a first sync fetches one page of the dialog list and leaves the rest a hole; a
/// chat-list view that shows the hole has the next pages fetched, only as far as it scrolls; a chat below the hole
/// that gets a message is discovered and reset from its dialog.
@Suite("Chat-list holes", .timeLimit(.minutes(2)))
struct ChatListHoleTests {
    /// The chat rows and holes of the root list's first `count` rows.
    static func rows(_ postbox: Postbox, count: Int) async throws -> (chats: [PeerId], holes: Int) {
        let entries = try await postbox.get(.chatList(count: count))
        var chats: [PeerId] = []
        var holes = 0
        for entry in entries {
            switch entry {
            case let .chat(item): chats.append(item.peerId)
            case .hole: holes += 1
            }
        }
        return (chats, holes)
    }

    @Test("the first sync lists one page; a chat-list view fetches pages as far as it shows, in the server's order")
    func pagesFollowTheView() async throws {
        let server = try SyntheticAccountServer(chats: 300, messagesPerChat: 20, pinnedChats: 3)
        let directory = SyncTemporaryDirectory()
        var configuration = SyncConfiguration.fast
        configuration.dialogsPageSize = 50
        configuration.dialogPagesAtReset = 1
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: configuration)
        try await client.start()
        await client.waitUntilQuiet()
        #expect(await client.manager.statistics.dialogPages == 1)
        var (listed, holes) = try await Self.rows(client.postbox, count: 500)
        #expect(listed.count == 53, "the pinned chats and one page")
        #expect(holes == 1)

        // A view of 120 rows: pages are fetched until its window holds no hole (three pages), not the whole list.
        let expected = try await server.getDialogs(offset: nil, limit: 400).dialogs.map(\.peerId)
        let view = client.postbox.view(.chatList(count: 120))
        let shown = await withDeadline(.seconds(30)) { () async -> [PeerId]? in
            do {
                for try await snapshot in view {
                    let chats = snapshot.entries.compactMap { if case let .chat(item) = $0 { item.peerId } else { nil } }
                    if chats.count == 120, !snapshot.entries.contains(where: { if case .hole = $0 { true } else { false } }) { return chats }
                }
            } catch {}
            return nil
        }
        #expect(shown == Array(expected.prefix(120)))
        await client.waitUntilQuiet()
        let pages = await client.manager.statistics.dialogPages
        #expect(pages == 3, "one page at the first sync, two for the view")
        (listed, holes) = try await Self.rows(client.postbox, count: 500)
        #expect(listed.count == 153)
        #expect(holes == 1, "the rest of the list is still a hole")
        try await client.stop()
    }

    @Test("a chat below the hole that gets a message is reset from its dialog; the consistency check passes")
    func discoveredChatsAreReset() async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(seed: 93, users: 8, groups: 3, channels: 2, secretChats: 1,
                                                                                 initialHistory: 20...40, faults: .realistic))
        let directory = SyncTemporaryDirectory()
        var configuration = SyncConfiguration.fast
        configuration.dialogsPageSize = 3
        configuration.dialogPagesAtReset = 1
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: configuration)
        try await client.start()
        await SyncSimulation.quiesce(client: client, server: server)
        var local = try await SyncInspector.read(client.postbox, peerIds: [])
        let hole = try #require(local.chatListHoleOffset, "more chats than one page: a hole below it")
        let snapshot = server.snapshot()
        let below = snapshot.chatStates.keys.sorted().filter { !snapshot.pinnedPeers.contains($0) && snapshot.dialogPosition($0) < hole }
        let user = try #require(below.first { $0.namespace == SyncNamespaces.user }, "a private chat below the hole")
        // Not listed, nothing known of it.
        #expect(try await Self.rows(client.postbox, count: 100).chats.contains(user) == false)

        // It gets a message: it moves to the top, with the server's read state and unread count.
        server.generateBurst(messages: 2, into: user)
        await SyncSimulation.quiesce(client: client, server: server)
        #expect(try await Self.rows(client.postbox, count: 1).chats == [user])
        local = try await SyncInspector.read(client.postbox, peerIds: [user])
        let serverChat = try #require(server.snapshot().chatStates[user])
        #expect(local.chats[user]?.readInboxMaxId == serverChat.readInboxMaxId)
        #expect(local.chats[user]?.unreadCount == serverChat.unreadCount)
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.isConsistent, "\(report)")
        #expect(report.chatsBelowListHole > 0)
        try await client.stop()
    }
}
