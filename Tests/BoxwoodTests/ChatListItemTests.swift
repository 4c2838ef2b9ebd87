import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// Chat-list rows carry what a row renders (peer, rendered top message, unread count, settings, pinning), the
/// view re-emits when one of those changes and not otherwise, and pages follow each other by anchor.
@Suite(.timeLimit(.minutes(1))) struct ChatListItemTests {
    init() throws { try registerViewTestTypes() }

    static let alice = peer(0, 1)
    static let bob = peer(0, 2)
    static let carol = peer(0, 3)
    static let stranger = peer(0, 9)

    static func user(_ id: PeerId, _ name: String) -> TestUser { TestUser(id: id, firstName: name, lastName: "", username: nil) }

    static func message(_ chat: PeerId, _ id: Int32, _ text: String, incoming: Bool = true) -> StoreMessage {
        StoreMessage(id: .id(MessageId(peerId: chat, namespace: 0, id: id)), timestamp: 100 + id, flags: incoming ? [.incoming] : [],
                     authorId: chat, text: text)
    }

    func withPostbox(_ tag: String, _ body: (Postbox) async throws -> Void) async throws {
        let path = NSTemporaryDirectory() + "bw-chat-list-items-\(tag)-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        try await body(postbox)
        try await postbox.close()
    }

    static func items(_ view: any PostboxView) -> [ChatListItem] {
        (view as! ChatListView).entries.compactMap { if case let .chat(item) = $0 { item } else { nil } }
    }

    static func rows(_ view: any PostboxView) -> [String] {
        items(view).map { item in
            "\((item.peer as? TestUser)?.firstName ?? "?"): \(item.topMessage?.text ?? "-") [\(item.unreadCount)]"
                + (item.isPinned ? " pinned" : "") + ((item.notificationSettings as? TestNotificationSettings)?.muteUntil.map { " muted \($0)" } ?? "")
        }
    }

    @Test func rowsCarryWhatTheyShowAndFollowIt() async throws {
        try await withPostbox("follow") { postbox in
            try await postbox.transaction { tx in
                try tx.updatePeers([Self.user(Self.alice, "Alice"), Self.user(Self.bob, "Bob")])
                try tx.addMessages([Self.message(Self.alice, 1, "a1"), Self.message(Self.alice, 2, "a2"), Self.message(Self.bob, 3, "b3")],
                                   location: .upperHistoryBlock)
            }
            let key = PostboxViewQuery.chatList(count: 10).key
            try await expectSelectiveView(postbox, key, initial: { Self.rows($0) == ["Bob: b3 [1]", "Alice: a2 [2]"] }, steps: [
                .irrelevant { tx in try tx.updatePeers([Self.user(Self.stranger, "Nobody")]) },
                .irrelevant { tx in try tx.updatePeers([Self.user(Self.alice, "Alice")]) },
                // The top message edited: the order stays, the row changes.
                .relevant({ tx in
                    try tx.updateMessage(MessageId(peerId: Self.alice, namespace: 0, id: 2), Self.message(Self.alice, 2, "a2 edited"))
                }, expect: { Self.rows($0) == ["Bob: b3 [1]", "Alice: a2 edited [2]"] }),
                .relevant({ tx in try tx.updatePeers([Self.user(Self.bob, "Robert")]) }, expect: { Self.rows($0) == ["Robert: b3 [1]", "Alice: a2 edited [2]"] }),
                .relevant({ tx in try tx.applyIncomingReadMaxId(MessageId(peerId: Self.alice, namespace: 0, id: 1)) },
                          expect: { Self.rows($0) == ["Robert: b3 [1]", "Alice: a2 edited [1]"] }),
                .relevant({ tx in try tx.updatePeerNotificationSettings([Self.alice: TestNotificationSettings(muteUntil: 99)]) },
                          expect: { Self.rows($0) == ["Robert: b3 [1]", "Alice: a2 edited [1] muted 99"] }),
                .relevant({ tx in try tx.setPinnedPeers(groupId: .root, [Self.alice]) },
                          expect: { Self.rows($0) == ["Alice: a2 edited [1] pinned muted 99", "Robert: b3 [1]"] }),
                // The top message's author resolved in the row.
                .relevant({ tx in try tx.addMessages([Self.message(Self.bob, 4, "b4", incoming: false)], location: .random) }, expect: { view in
                    let bob = Self.items(view).first { $0.peerId == Self.bob }
                    return (bob?.topMessage?.author as? TestUser)?.firstName == "Robert" && bob?.topMessage?.text == "b4"
                }),
            ])
        }
    }

    @Test func pagesFollowEachOtherByAnchor() async throws {
        try await withPostbox("pages") { postbox in
            let chats = (1...25).map { peer(0, Int64($0)) }
            try await postbox.transaction { tx in
                try tx.updatePeers(chats.map { Self.user($0, "U\($0.id)") })
                try tx.addMessages(chats.enumerated().map { Self.message($1, Int32($0 + 1), "m\($0)") }, location: .upperHistoryBlock)
                try tx.setPinnedPeers(groupId: .root, [chats[3], chats[20]])
            }
            let all = try await postbox.transaction { tx in try tx.getChatListEntries(groupId: .root, count: 0) }
            var paged: [ChatListEntry] = []
            var anchor: ChatListIndex?
            for _ in 0..<10 {
                var iterator = postbox.view(.chatList(anchor: anchor, count: 7)).makeAsyncIterator()
                let page = try #require(try await iterator.next())
                #expect(page.anchor == anchor)
                paged += page.entries
                guard page.entries.count == 7 else { break }
                anchor = page.nextPageAnchor
            }
            #expect(paged.map(\.index) == all.map(\.index))
            let listed = all.compactMap { entry -> PeerId? in if case let .chat(item) = entry { item.peerId } else { nil } }
            #expect(Array(listed.prefix(2)) == [chats[3], chats[20]])
            #expect(Set(listed) == Set(chats))
        }
    }
}
