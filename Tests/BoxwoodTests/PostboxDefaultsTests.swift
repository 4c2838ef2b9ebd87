import Boxwood
import Foundation
import Testing

/// Issue 23, item 3: no silent defaults. A Postbox opened with `SeedConfiguration()` keeps read states (so it
/// counts unread messages and applies reads), and `addMessages` reports the ids it left alone because they were
/// already stored.
@Suite struct PostboxDefaultsTests {
    func temporaryPath(_ tag: String) -> String {
        NSTemporaryDirectory() + "bw-postbox-defaults-\(tag)-\(UUID().uuidString)"
    }

    func incoming(_ peerId: PeerId, _ id: Int32, text: String) -> StoreMessage {
        StoreMessage(id: .id(MessageId(peerId: peerId, namespace: 0, id: id)), timestamp: 1_700_000_000 + id, flags: [.incoming],
                     authorId: peerId, text: text)
    }

    @Test("the default configuration has an empty read state for each chat namespace, and [:] still turns them off")
    func defaultReadStates() {
        let empty = PeerReadState.idBased(maxIncomingReadId: 0, maxOutgoingReadId: 0, maxKnownId: 0, count: 0, markedUnread: false)
        #expect(SeedConfiguration().defaultMessageNamespaceReadStates == [0: empty])
        #expect(SeedConfiguration(chatMessagesNamespaces: [0, 3]).defaultMessageNamespaceReadStates == [0: empty, 3: empty])
        #expect(SeedConfiguration(defaultMessageNamespaceReadStates: [:]).defaultMessageNamespaceReadStates.isEmpty)
    }

    @Test("a default-configured Postbox counts an incoming message as unread and applyIncomingReadMaxId reads it")
    func defaultPostboxCountsUnreadAndAppliesReads() async throws {
        let path = temporaryPath("unread")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path)
        let alice = peer(10)

        _ = try await postbox.transaction { tx in
            try tx.addMessages([self.incoming(alice, 1, text: "hello"), self.incoming(alice, 2, text: "are you there?")],
                               location: .upperHistoryBlock)
        }
        let before = try await postbox.transaction { tx in
            (try tx.getCombinedPeerReadState(alice), try tx.getTotalUnreadState(groupId: .root))
        }
        #expect(before.0?.count == 2, "\(String(describing: before.0))")
        #expect(before.1.messageCount == 2 && before.1.chatCount == 1, "\(before.1)")

        try await postbox.transaction { tx in try tx.applyIncomingReadMaxId(MessageId(peerId: alice, namespace: 0, id: 1)) }
        let after = try await postbox.transaction { tx in
            (try tx.getCombinedPeerReadState(alice), try tx.getTotalUnreadState(groupId: .root))
        }
        guard case let .idBased(maxIncomingReadId, _, _, count, _)? = after.0?.states[0] else {
            Issue.record("no id-based read state: \(String(describing: after.0))")
            return
        }
        #expect(maxIncomingReadId == 1)
        #expect(count == 1)
        #expect(after.1.messageCount == 1 && after.1.chatCount == 1, "\(after.1)")
        try await postbox.close()
    }

    @Test("re-adding an existing id returns it in existing and leaves the stored message unchanged")
    func addMessagesReportsExistingIds() async throws {
        let path = temporaryPath("existing")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path)
        let alice = peer(10)
        let first = MessageId(peerId: alice, namespace: 0, id: 1)

        let added = try await postbox.transaction { tx in
            try tx.addMessages([StoreMessage(id: .id(first), globallyUniqueId: 77, timestamp: 100, flags: [.incoming],
                                             authorId: alice, text: "original")], location: .random)
        }
        #expect(added == AddMessagesResult(added: [first], existing: [], idsByGloballyUniqueId: [77: first]))

        let again = try await postbox.transaction { tx in
            try tx.addMessages([StoreMessage(id: .id(first), timestamp: 200, flags: [.incoming], authorId: alice, text: "replacement"),
                                StoreMessage(id: .partial(alice, 0), globallyUniqueId: 78, timestamp: 300, flags: [.incoming],
                                             authorId: alice, text: "new")], location: .random)
        }
        #expect(again.existing == [first])
        #expect(again.added.count == 1 && again.added.first != first, "\(again.added)")
        #expect(again.idsByGloballyUniqueId == [78: again.added[0]])

        let stored = try await postbox.transaction { tx in (try tx.getMessage(first), try tx.getCombinedPeerReadState(alice)) }
        #expect(stored.0?.text == "original")
        #expect(stored.0?.timestamp == 100)
        #expect(stored.1?.count == 2, "the skipped message is not counted again")
        try await postbox.close()
    }
}
