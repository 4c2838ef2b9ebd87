import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator
import Testing

/// The synthetic large account computes every answer from a chat's index: its pages cover every chat once in the
/// list's order, and its history windows are those of the full history.
@Suite("Synthetic account server")
struct SyntheticAccountServerTests {
    @Test func dialogPagesCoverEveryChatOnceInOrder() async throws {
        let server = try SyntheticAccountServer(chats: 53, messagesPerChat: 30, pinnedChats: 3)
        var offset: ApiDialogsOffset?
        var pages: [ApiDialogs] = []
        repeat {
            let page = try await server.getDialogs(offset: offset, limit: 7)
            pages.append(page)
            offset = page.nextOffset
        } while offset != nil && pages.count < 100
        let dialogs = pages.flatMap(\.dialogs)
        #expect(dialogs.count == 53 && Set(dialogs.map(\.peerId)).count == 53)
        #expect(pages.count == 8 && pages[0].dialogs.count == 10)
        #expect(dialogs.prefix(3).allSatisfy(\.pinned) && !dialogs.dropFirst(3).contains(where: \.pinned))
        let tops = pages.flatMap(\.messages)
        #expect(tops.map(\.id) == dialogs.map(\.topMessage))
        let unpinned = zip(dialogs, tops).dropFirst(3).map { ApiDialogsOffset(date: $1.date, id: $1.id, peerId: $0.peerId) }
        #expect(unpinned == unpinned.sorted(by: >))
        // Each page describes the users and chats of its dialogs.
        for page in pages {
            let described = Set(page.users.map(\.id) + page.chats.map(\.id))
            #expect(page.dialogs.allSatisfy { described.contains($0.peerId) })
        }
        // Users and groups share account-wide ids: no two messages of theirs have the same id.
        var commonIds = Set<Int32>()
        for i in 0..<53 where server.peer(ofChat: i).namespace != SyncNamespaces.channel {
            let history = try await server.getHistory(peerId: server.peer(ofChat: i), offsetId: 0, addOffset: 0, limit: 1_000, maxId: 0, minId: 0)
            #expect(history.count == 30)
            for message in history { #expect(commonIds.insert(message.id).inserted) }
        }
        let peerDialogs = try await server.getPeerDialogs(peers: [server.peer(ofChat: 5), server.peer(ofChat: 5), server.peer(ofChat: 40)])
        #expect(peerDialogs.dialogs.map(\.peerId) == [server.peer(ofChat: 5), server.peer(ofChat: 40)])
    }

    @Test func historyWindowsAreThoseOfTheFullHistory() async throws {
        let server = try SyntheticAccountServer(chats: 20, messagesPerChat: 50)
        var random = SystemRandomNumberGenerator()
        for i in [0, 9, 19] {
            let peer = server.peer(ofChat: i)
            let full = try await server.getHistory(peerId: peer, offsetId: 0, addOffset: 0, limit: 1_000, maxId: 0, minId: 0)
            #expect(full.count == 50 && full.map(\.id) == full.map(\.id).sorted(by: >))
            let ids = full.map(\.id)
            for _ in 0..<200 {
                let span = Int32(ids.first! + 2)
                let minId = Int32.random(in: 0...span, using: &random)
                let maxId = Bool.random(using: &random) ? 0 : Int32.random(in: 0...span, using: &random)
                let offsetId = Bool.random(using: &random) ? 0 : Int32.random(in: 0...span, using: &random)
                let addOffset = Int32.random(in: -20...20, using: &random)
                let limit = Int32.random(in: 0...15, using: &random)
                // The reference: filter, find the offset, shift, cut.
                let matching = full.filter { $0.id > minId && (maxId == 0 || $0.id < maxId) }
                let position = offsetId == 0 ? 0 : (matching.firstIndex { $0.id < offsetId } ?? matching.count)
                let start = max(0, min(matching.count, position + Int(addOffset)))
                let expected = limit <= 0 ? [] : Array(matching[start..<min(matching.count, start + Int(limit))])
                let window = try await server.getHistory(peerId: peer, offsetId: offsetId, addOffset: addOffset, limit: limit,
                                                         maxId: maxId, minId: minId)
                #expect(window == expected, "offsetId \(offsetId) addOffset \(addOffset) limit \(limit) maxId \(maxId) minId \(minId)")
            }
        }
    }
}

@Suite("Synthetic account sizes")
struct SyntheticAccountSizeTests {
    @Test("an account without chats or messages, or beyond Int32 ids and dates, is a typed error, not a trap")
    func unsupportedSizesThrow() {
        for (chats, messages) in [(0, 10), (10, 0), (-1, 5), (100_000, 100_000), (Int.max, 2)] {
            #expect(throws: SyntheticAccountError.unsupportedSize(chats: chats, messagesPerChat: messages)) {
                _ = try SyntheticAccountServer(chats: chats, messagesPerChat: messages)
            }
        }
        #expect(throws: Never.self) { _ = try SyntheticAccountServer(chats: 5_000, messagesPerChat: 2_000) }
    }
}
