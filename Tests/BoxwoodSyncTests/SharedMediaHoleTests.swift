import Foundation
import Testing
import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator

/// Shared-media views (a history view of one media tag) fill their own hole space through `searchHistory`, page by
/// page, without fetching the rest of the history; the stored messages carry the media tags.
@Suite("Shared media holes", .timeLimit(.minutes(1)))
struct SharedMediaHoleTests {
    @Test("a photos view of a chat shows the server's newest photos, fetched by search alone")
    func photosViewFillsItsSpace() async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(seed: 71, users: 2, groups: 1, channels: 1, secretChats: 0,
                                                                                 initialHistory: 300...400, faults: .realistic))
        let directory = SyncTemporaryDirectory()
        var configuration = SyncConfiguration.fast
        configuration.holeFillPageSize = 8
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: configuration)
        try await client.start()
        await client.waitUntilQuiet()
        let snapshot = server.snapshot()
        // The chat with the most photos.
        let chat = try #require(snapshot.chatStates.keys.max { lhs, rhs in
            let count = { (peer: PeerId) in snapshot.chatStates[peer]!.messages.values.filter { ApiSearchFilter.photos.matches($0.content) }.count }
            return count(lhs) < count(rhs)
        })
        let photos = snapshot.chatStates[chat]!.messages.values.filter { ApiSearchFilter.photos.matches($0.content) }.map(\.id).sorted(by: >)
        try #require(photos.count >= 12, "the seed's chat has \(photos.count) photos")

        let view = client.postbox.view(.messageHistory(peerId: chat, namespace: SyncNamespaces.cloudMessages, count: 12, tag: SyncMessageTags.photo))
        let shown = await withDeadline(.seconds(30)) { () async -> [Int32]? in
            var last: [Int32] = []
            do {
                for try await snapshot in view where snapshot.entries.count >= 12 {
                    last = snapshot.entries.map(\.id.id).sorted(by: >)
                    if Array(last.prefix(12)) == Array(photos.prefix(12)) { return last }
                }
            } catch {}
            return last
        }
        #expect(shown.map { Array($0.prefix(12)) } == Array(photos.prefix(12)),
                "the view shows \(String(describing: shown?.prefix(12))), the server's newest photos are \(photos.prefix(12))")

        // Nothing but the chat's top message and photos was fetched: search fills the photo space alone. (And the
        // chat's unread mentions, which the client fetches for the chat list's count.)
        server.setFaults(.none)
        await client.waitUntilQuiet()
        let stored = try await client.postbox.transaction { transaction in
            try transaction.getMessageHistory(peerId: chat, namespaces: [SyncNamespaces.cloudMessages], anchor: nil, direction: .earlier, limit: 1_000)
        }
        let top = snapshot.chatStates[chat]!.messages.keys.max()
        let others = stored.filter {
            $0.id.id != top && !$0.tags.contains(SyncMessageTags.photo) && !(snapshot.chatStates[chat]!.messages[$0.id.id]?.isUnreadMention ?? false)
        }
        #expect(others.isEmpty, "messages other than photos were fetched: \(others.prefix(5).map(\.id.id))")
        #expect(stored.filter { $0.tags.contains(SyncMessageTags.photo) }.count >= 12)
        // The stored photos are tagged, and the rest of the history is still a hole in the everywhere space.
        let holes = try await client.postbox.transaction { try $0.getHoles(peerId: chat, namespace: SyncNamespaces.cloudMessages) }
        #expect(!holes.isEmpty)
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(10))")
        try await client.stop()
    }
}
