import Foundation
import Testing
import Boxwood
import BoxwoodStore

/// Typed data access: `get` and `subscribe` of each item kind, values with their types (no casts of
/// `PostboxView`s in this file), a subscription yielding only changed values.
@Suite(.timeLimit(.minutes(1))) struct PostboxDataTests {
    init() throws { try registerTestTypes() }

    static let alice = peer(0, 1)
    static let bob = peer(0, 2)
    static let first = MessageId(peerId: alice, namespace: 0, id: 1)

    static func user(_ id: PeerId, _ name: String) -> TestUser { TestUser(id: id, firstName: name, lastName: "", username: nil) }

    func withPostbox(_ tag: String, _ body: (Postbox) async throws -> Void) async throws {
        let path = NSTemporaryDirectory() + "bw-data-\(tag)-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        try await body(postbox)
        try await postbox.close()
    }

    @Test func getReadsEachKind() async throws {
        try await withPostbox("get") { postbox in
            let missing = try await postbox.get(.peer(Self.alice))
            #expect(missing == nil)
            try await postbox.transaction { tx in
                try tx.updatePeers([Self.user(Self.alice, "Alice")])
                try tx.addMessages([StoreMessage(id: .id(Self.first), timestamp: 10, flags: [.incoming], authorId: Self.alice, text: "hi")],
                                   location: .upperHistoryBlock)
                try tx.updatePeerNotificationSettings([Self.alice: TestNotificationSettings(muteUntil: 5)])
                try tx.updatePeerPresences([Self.alice: TestPresence(lastSeen: 77)])
                try tx.replaceContactPeerIds([Self.alice])
            }
            #expect((try await postbox.get(.peer(Self.alice)) as? TestUser)?.firstName == "Alice")
            let message = try await postbox.get(.message(Self.first))
            #expect(message?.text == "hi" && (message?.author as? TestUser)?.firstName == "Alice")
            #expect(try await postbox.get(.message(MessageId(peerId: Self.alice, namespace: 0, id: 2))) == nil)
            #expect(try await postbox.get(.readState(Self.alice))?.count == 1)
            #expect(try await postbox.get(.unreadCount()) == 0, "Alice is muted: the badge leaves her out")
            #expect(try await postbox.get(.unreadCount(includingMuted: true)) == 1)
            #expect((try await postbox.get(.notificationSettings(Self.alice)) as? TestNotificationSettings)?.muteUntil == 5)
            #expect((try await postbox.get(.presence(Self.alice)) as? TestPresence)?.lastSeen == 77)
            let contacts = (try await postbox.get(.isContact(Self.alice)), try await postbox.get(.isContact(Self.bob)))
            #expect(contacts == (true, false))
            let rows = try await postbox.get(.chatList(count: 10))
            #expect(rows.contains { if case let .chat(item) = $0 { item.peerId == Self.alice && item.topMessage?.text == "hi" } else { false } })
        }
    }

    @Test func subscribeYieldsChangedValuesOnly() async throws {
        try await withPostbox("subscribe") { postbox in
            var peer = postbox.subscribe(.peer(Self.alice)).makeAsyncIterator()
            var unread = postbox.subscribe(.unreadCount()).makeAsyncIterator()
            // `#require` rather than `!`: a stream that ended early fails this test instead of crashing the run (it did
            // once, in a full run on a machine loaded by a sanitizer build).
            let initial = try #require(try await peer.next(), "the peer stream ended")
            #expect(initial == nil)
            #expect(try await unread.next() == 0)

            try await postbox.transaction { tx in try tx.updatePeers([Self.user(Self.alice, "Alice")]) }
            #expect((try #require(try await peer.next(), "the peer stream ended") as? TestUser)?.firstName == "Alice")

            // Changes the peer view's neighbours, not Alice, and stores Alice unchanged: no value; the rename is next.
            try await postbox.transaction { tx in try tx.updatePeers([Self.user(Self.bob, "Bob"), Self.user(Self.alice, "Alice")]) }
            try await postbox.transaction { tx in try tx.updatePeers([Self.user(Self.alice, "Alicia")]) }
            #expect((try #require(try await peer.next(), "the peer stream ended") as? TestUser)?.firstName == "Alicia")

            // A message in a chat without a read state yet changes no count; the next value is the first real one.
            try await postbox.transaction { tx in
                try tx.addMessages([StoreMessage(id: .id(Self.first), timestamp: 10, authorId: Self.alice, text: "mine")], location: .random)
            }
            try await postbox.transaction { tx in
                try tx.addMessages([StoreMessage(id: .id(MessageId(peerId: Self.bob, namespace: 0, id: 1)), timestamp: 11, flags: [.incoming],
                                                 authorId: Self.bob, text: "yo")], location: .random)
            }
            #expect(try await unread.next() == 1)
        }
    }
}
