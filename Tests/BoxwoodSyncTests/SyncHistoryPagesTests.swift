import Boxwood
@testable import BoxwoodSync
import Testing

/// The sync layer walks a chat's stored history 1,000 messages at a time (issue 26): memory does not grow with a
/// chat's size, and a walk that deletes what it passes still sees every message once.
@Suite("History walked in pages")
struct SyncHistoryPagesTests {
    private let peer = PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(9))
    private let account = PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(1))

    private func message(_ id: Int32) -> ApiMessage {
        ApiMessage(id: id, peerId: peer, fromId: peer, date: id, text: "m\(id)", outgoing: false)
    }

    @Test func aWalkAndAFillCoverAChatLargerThanAPage() async throws {
        let directory = SyncTemporaryDirectory()
        try SyncClient.registerTypes()
        let postbox = try await SyncClient.openPostbox(path: directory.path + "/db")
        let (peer, account) = (peer, account)
        let all = (1...2_500).map { message(Int32($0)) }
        let kept = all.filter { $0.id % 2 == 0 }
        let (pages, remaining, holes) = try await postbox.transaction { tx in
            _ = try SyncStorage.addMessages(all, location: .random, accountPeerId: account, in: tx)
            var sizes: [Int] = []
            var seen: [Int32] = []
            try SyncStorage.forEachHistoryPage(peer, namespace: SyncNamespaces.cloudMessages, in: tx) { page in
                sizes.append(page.count)
                seen += page.map(\.id.id)
            }
            #expect(seen == Array((1...2_500).reversed()), "every message once, newest first")
            // The server has only the even ones: the odd ones go, page after page.
            let stored = try SyncStorage.fill(peerId: peer, range: 1...Int32.max, messages: kept, accountPeerId: account, in: tx)
            #expect(stored == 0)
            var remaining: [Int32] = []
            try SyncStorage.forEachHistoryPage(peer, namespace: SyncNamespaces.cloudMessages, in: tx) { remaining += $0.map(\.id.id) }
            return (sizes, remaining, try tx.getHoles(peerId: peer, namespace: SyncNamespaces.cloudMessages))
        }
        #expect(pages == [1_000, 1_000, 500])
        #expect(remaining == kept.map(\.id).reversed())
        #expect(holes.isEmpty)
        try await postbox.close()
    }
}
