import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// Chat-list rows carry the chat's draft (its interface state's embedded state) and its mention count (the tag
/// summary of the configured mention tag); the view re-emits when one of those of a row it shows changes, and
/// not for other chats nor for interface-state changes the row does not show. A draft's
/// `overrideChatTimestamp` newer than the top message moves the chat up.
@Suite(.timeLimit(.minutes(1))) struct ChatListDraftMentionTests {
    init() throws { try registerViewTestTypes() }

    static let mention = MessageTags(rawValue: 1)
    static let alice = peer(0, 1)
    static let bob = peer(0, 2)
    static let carol = peer(0, 3)
    static let seed = SeedConfiguration(chatListMentionTag: mention)

    static func message(_ chat: PeerId, _ id: Int32, tags: MessageTags = []) -> StoreMessage {
        StoreMessage(id: .id(MessageId(peerId: chat, namespace: 0, id: id)), timestamp: 100 + id, flags: [.incoming], tags: tags,
                     authorId: chat, text: "m\(id)")
    }

    static func draft(_ text: String, timestamp: Int32 = 50, override: Int32? = nil, data: [UInt8] = []) -> StoredPeerChatInterfaceState {
        StoredPeerChatInterfaceState(overrideChatTimestamp: override, data: data,
                                     chatListEmbeddedState: ChatListEmbeddedState(text: text, timestamp: timestamp))
    }

    static func rows(_ view: any PostboxView) -> [String] {
        (view as! ChatListView).entries.compactMap { entry -> String? in
            guard case let .chat(item) = entry else { return nil }
            return "\((item.peer as? TestUser)?.firstName ?? "?"): \(item.topMessage?.text ?? "-") @\(item.mentionCount)"
                + (item.embeddedState.map { " draft \($0.text)" } ?? "")
        }
    }

    @Test func rowsShowDraftsAndMentionsAndFollowOnlyTheirOwn() async throws {
        let path = NSTemporaryDirectory() + "bw-chat-list-drafts-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: Self.seed)
        try await postbox.transaction { tx in
            try tx.updatePeers([ChatListItemTests.user(Self.alice, "Alice"), ChatListItemTests.user(Self.bob, "Bob"),
                                ChatListItemTests.user(Self.carol, "Carol")])
            try tx.addMessages([Self.message(Self.carol, 1), Self.message(Self.alice, 2, tags: Self.mention), Self.message(Self.bob, 3)],
                               location: .upperHistoryBlock)
        }
        // Two rows: Bob and Alice; Carol is below the page.
        let key = PostboxViewQuery.chatList(count: 2).key
        try await expectSelectiveView(postbox, key, initial: { Self.rows($0) == ["Bob: m3 @0", "Alice: m2 @1"] }, steps: [
            .irrelevant { tx in try tx.setPeerChatInterfaceState(Self.carol, state: Self.draft("hidden")) },
            .irrelevant { tx in try tx.replaceMessageTagSummary(peerId: Self.carol, tagMask: Self.mention, namespace: 0, count: 4, maxId: 1) },
            .relevant({ tx in try tx.setPeerChatInterfaceState(Self.alice, state: Self.draft("see you")) },
                      expect: { Self.rows($0) == ["Bob: m3 @0", "Alice: m2 @1 draft see you"] }),
            // Only the app's opaque data changed: the row shows nothing new.
            .irrelevant { tx in try tx.setPeerChatInterfaceState(Self.alice, state: Self.draft("see you", data: [1, 2])) },
            .relevant({ tx in try tx.setPeerChatInterfaceState(Self.alice, state: Self.draft("see you soon")) },
                      expect: { Self.rows($0) == ["Bob: m3 @0", "Alice: m2 @1 draft see you soon"] }),
            .relevant({ tx in try tx.replaceMessageTagSummary(peerId: Self.alice, tagMask: Self.mention, namespace: 0, count: 5, maxId: 2) },
                      expect: { Self.rows($0) == ["Bob: m3 @0", "Alice: m2 @5 draft see you soon"] }),
            .relevant({ tx in try tx.addMessages([Self.message(Self.bob, 4, tags: Self.mention)], location: .random) },
                      expect: { Self.rows($0) == ["Bob: m4 @1", "Alice: m2 @5 draft see you soon"] }),
            .relevant({ tx in try tx.setPeerChatInterfaceState(Self.alice, state: nil) },
                      expect: { Self.rows($0) == ["Bob: m4 @1", "Alice: m2 @5"] }),
            // A draft newer than every top message moves Carol to the top.
            .relevant({ tx in try tx.setPeerChatInterfaceState(Self.carol, state: Self.draft("urgent", timestamp: 900, override: 900)) },
                      expect: { Self.rows($0) == ["Carol: m1 @4 draft urgent", "Bob: m4 @1"] }),
            // An older override does not move it: back to its top message's place.
            .relevant({ tx in try tx.setPeerChatInterfaceState(Self.carol, state: Self.draft("urgent", timestamp: 900, override: 10)) },
                      expect: { Self.rows($0) == ["Bob: m4 @1", "Alice: m2 @5"] }),
        ])
        // The chat list is replayed at the end of the transaction: the next one reads the new place.
        try await postbox.transaction { tx in try tx.setPeerChatInterfaceState(Self.carol, state: Self.draft("again", override: 1000)) }
        let index = try await postbox.transaction { tx in try tx.getChatListEntries(groupId: .root, count: 1).first?.index }
        #expect(index?.messageIndex.timestamp == 1000)
        #expect(index?.messageIndex.id.peerId == Self.carol)
        try await postbox.close()
    }
}
