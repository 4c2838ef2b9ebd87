import Foundation
import Testing
@testable import Boxwood

/// The history tables through `Postbox` and `Transaction`: seeding, the change record, chat list, unread
/// totals, search; and the rate of adding messages (printed, not asserted).
@Suite struct PostboxHistoryTests {
    static let seed = SeedConfiguration(
        initializeChatListWithHole: (topLevel: ChatListHole(index: MessageIndex(id: MessageId(peerId: PeerId(0), namespace: 0, id: 1), timestamp: Int32.max - 1)), groups: nil),
        messageHoles: [PeerId.Namespace(0): [0: [[]]]],
        defaultMessageNamespaceReadStates: [0: .idBased(maxIncomingReadId: 0, maxOutgoingReadId: 0, maxKnownId: 0, count: 0, markedUnread: false)],
        chatMessagesNamespaces: [0])

    func temporaryPath(_ tag: String) -> String {
        NSTemporaryDirectory() + "bw-postbox-history-\(tag)-\(UUID().uuidString)"
    }

    func message(_ peerId: PeerId, _ id: Int32?, timestamp: Int32, text: String, incoming: Bool = true) -> StoreMessage {
        StoreMessage(id: id.map { .id(MessageId(peerId: peerId, namespace: 0, id: $0)) } ?? .partial(peerId, 0),
                     timestamp: timestamp, flags: incoming ? [.incoming] : [], authorId: peerId, text: text)
    }

    @Test func messagesFlowIntoHistoryChatListUnreadAndTheChangeRecord() async throws {
        let path = temporaryPath("flow")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: Self.seed)
        let log = ChangeLog()
        _ = postbox.addTransactionObserver { log.append($0) }
        let alice = peer(0, 10), bob = peer(0, 11)

        try await postbox.transaction { tx in
            _ = try tx.addMessages([self.message(alice, 1, timestamp: 100, text: "hello boxwood"),
                                self.message(alice, 2, timestamp: 101, text: "second message"),
                                self.message(bob, 1, timestamp: 102, text: "bob says hi")], location: .upperHistoryBlock)
        }
        var record = log.records.last!
        func inserts(_ peerId: PeerId) -> [String] {
            (record.operationsByPeerId[peerId] ?? []).compactMap { if case let .insertMessage(m) = $0 { return m.text } else { return nil } }
        }
        #expect(inserts(alice) == ["hello boxwood", "second message"], "\(record.operationsByPeerId[alice] ?? [])")
        #expect(inserts(bob) == ["bob says hi"])
        #expect(record.chatListOperations[.root]?.isEmpty == false)
        #expect(record.updatedTotalUnreadStates[.root] == ChatListTotalUnreadState(unfilteredMessageCount: 3, chatCount: 2))
        // The seeded hole 1...Int32.max-1 lost everything from the lowest added id up.
        #expect(!record.holeOperations.isEmpty)

        let (entries, holes, unread, found) = try await postbox.transaction { tx in
            (try tx.getChatListEntries(groupId: .root, count: 10),
             try tx.getHoles(peerId: alice, namespace: 0),
             try tx.getCombinedPeerReadState(alice)?.count,
             try tx.searchMessages("boxw").map(\.id))
        }
        let chats = entries.compactMap { entry -> PeerId? in if case let .chat(item) = entry { return item.peerId } else { return nil } }
        #expect(chats == [bob, alice])       // newest top message first
        #expect(entries.contains { if case .hole = $0 { return true } else { return false } })
        #expect(holes.isEmpty)
        #expect(unread == 2)
        #expect(found == [MessageId(peerId: alice, namespace: 0, id: 1)])

        try await postbox.transaction { tx in
            try tx.applyIncomingReadMaxId(MessageId(peerId: alice, namespace: 0, id: 2))
            try tx.deleteMessages([MessageId(peerId: bob, namespace: 0, id: 1)])
        }
        record = log.records.last!
        #expect(record.alteredInitialPeerCombinedReadStates.keys.contains(alice))
        #expect(record.updatedTotalUnreadStates[.root] == ChatListTotalUnreadState(messageCount: 0, chatCount: 0))
        let total = try await postbox.transaction { tx in try tx.getTotalUnreadState(groupId: .root) }
        #expect(total == ChatListTotalUnreadState(messageCount: 0, chatCount: 0))
        try await postbox.close()

        let reopened = try await Postbox.open(path: path, seedConfiguration: Self.seed)
        let (history, chatList) = try await reopened.transaction { tx in
            (try tx.getMessageHistory(peerId: alice, anchor: nil, direction: .earlier, limit: 10).map(\.text),
             try tx.getChatListEntries(groupId: .root, count: 10).count)
        }
        #expect(history == ["second message", "hello boxwood"])
        #expect(chatList == 2)                // alice and the initial hole
        try await reopened.close()
    }

    /// `updateMessage(_:update:)`: the closure sees the stored message (without the messages it refers to) and its
    /// result replaces it like `updateMessage(_:_:)`; nil, or a message that is not stored, changes nothing.
    @Test func updateMessageWithAClosure() async throws {
        let path = temporaryPath("update-closure")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: Self.seed)
        let alice = peer(0, 10)
        let id = MessageId(peerId: alice, namespace: 0, id: 1)
        let results = try await postbox.transaction { tx -> [Bool] in
            _ = try tx.addMessages([self.message(alice, 1, timestamp: 100, text: "hello boxwood")], location: .upperHistoryBlock)
            let missing = try tx.updateMessage(MessageId(peerId: alice, namespace: 0, id: 2)) { _ in
                Issue.record("called for a message that is not stored")
                return nil
            }
            let skipped = try tx.updateMessage(id) { stored in
                #expect(stored.text == "hello boxwood")
                return nil
            }
            let updated = try tx.updateMessage(id) { stored in
                StoreMessage(id: .id(stored.id), timestamp: stored.timestamp, flags: stored.flags, tags: MessageTags(rawValue: 4),
                             authorId: stored.authorId, text: stored.text + " again")
            }
            return [missing, skipped, updated]
        }
        #expect(results == [false, false, true])
        let (stored, found, tagged) = try await postbox.transaction { tx in
            (try tx.getMessage(id), try tx.searchMessages("again").map(\.id), try tx.searchMessages("hello", tags: MessageTags(rawValue: 4)).map(\.id))
        }
        #expect(stored?.text == "hello boxwood again")
        #expect(stored?.stableVersion == 1)
        #expect(found == [id])
        #expect(tagged == [id])
        try await postbox.close()
    }

    /// The rate of adding messages through the whole Postbox path (change record, chat list replay, text
    /// index, commit), one per transaction and 1,000 per transaction. Printed only. Larger runs:
    /// `BOXWOOD_POSTBOX_BENCH=1` (use a release build with `-Xswiftc -enable-testing`).
    @Test func addMessageRates() async throws {
        let large = ProcessInfo.processInfo.environment["BOXWOOD_POSTBOX_BENCH"] != nil
        let single = large ? 5_000 : 200, batched = large ? 100_000 : 2_000
        for indexText in [true, false] {
            var seed = Self.seed
            seed.indexMessageText = indexText
            let path = temporaryPath("rate")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let postbox = try await Postbox.open(path: path, seedConfiguration: seed)
            let words = ["hello", "when", "are", "we", "meeting", "tomorrow", "boxwood", "sync", "привет", "🎉"]
            @Sendable func text(_ n: Int) -> String { (0..<8).map { words[(n &* 31 &+ $0 &* 7) % words.count] }.joined(separator: " ") }
            var clock = ContinuousClock.now
            for n in 0..<single {
                try await postbox.transaction { tx in
                    _ = try tx.addMessages([self.message(peer(0, Int64(n % 100)), nil, timestamp: Int32(n), text: text(n))], location: .random)
                }
            }
            let singleSeconds = (ContinuousClock.now - clock) / .seconds(1)
            clock = ContinuousClock.now
            for batch in 0..<(batched / 1_000) {
                try await postbox.transaction { tx in
                    let messages = (0..<1_000).map { i in
                        let n = single + batch * 1_000 + i
                        return self.message(peer(0, Int64(n % 100)), nil, timestamp: Int32(n), text: text(n))
                    }
                    _ = try tx.addMessages(messages, location: .random)
                }
            }
            let batchedSeconds = (ContinuousClock.now - clock) / .seconds(1)
            let count = try await postbox.transaction { tx in try tx.getMessageHistory(peerId: peer(0, 7), anchor: nil, direction: .earlier, limit: 0).count }
            #expect(count == (single + batched) / 100)
            print("Postbox addMessages (text index \(indexText ? "on" : "off")): 1 per transaction \(Int(Double(single) / singleSeconds)) msgs/s; 1,000 per transaction \(Int(Double(batched) / batchedSeconds)) msgs/s")
            try await postbox.close()
        }
    }
}
