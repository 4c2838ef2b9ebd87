import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// The chat-list order with drafts, against a model: a listed chat (one with messages) sits at its top message's
/// index with the timestamp raised to its interface state's `overrideChatTimestamp` when that is later; an override
/// alone lists nothing. Moving chats keeps the total unread state equal to a recount. Random messages, deletions and
/// interface states over a few chats, some transactions rolled back, and a reopen at the end.
@Suite(.timeLimit(.minutes(2))) struct ChatListOverrideOrderTests {
    static let chats = (1...5).map { peer(0, Int64($0)) }

    private enum Step: Sendable {
        case add(MessageId, timestamp: Int32)
        case delete(MessageId)
        case setState(PeerId, override: Int32?)
        case removeState(PeerId)
    }

    private struct Model {
        var messages: [PeerId: [MessageId.Id: Int32]] = [:]
        var overrides: [PeerId: Int32] = [:]

        /// The expected rows, top first: (peer, index timestamp).
        var rows: [String] {
            var listed: [(MessageIndex, PeerId)] = []
            for (peerId, messages) in messages where !messages.isEmpty {
                let top = messages.map { MessageIndex(id: MessageId(peerId: peerId, namespace: 0, id: $0.key), timestamp: $0.value) }.max()!
                var index = top
                if let override = overrides[peerId], override > top.timestamp { index = MessageIndex(id: top.id, timestamp: override) }
                listed.append((index, peerId))
            }
            return listed.sorted { $0.0 > $1.0 }.map { "\($0.1)@\($0.0.timestamp)" }
        }
    }

    private static func rows(_ tx: Transaction) throws -> [String] {
        try tx.getChatListEntries(groupId: .root, count: 0).compactMap { entry in
            guard case let .chat(item) = entry else { return nil }
            return "\(item.peerId)@\(item.index.messageIndex.timestamp)"
        }
    }

    @Test func orderFollowsTopMessagesAndOverrides() async throws {
        let seed = testSeed("ChatListOverrideOrderTests.orderFollowsTopMessagesAndOverrides")
        var rng = SplitMix64(seed: seed)
        let path = NSTemporaryDirectory() + "bw-chat-list-override-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var postbox = try await Postbox.open(path: path)
        var model = Model()

        for round in 0..<120 {
            var working = model
            var steps: [Step] = []
            for _ in 0..<(1 + rng.below(4)) {
                let chat = Self.chats[rng.below(Self.chats.count)]
                switch rng.below(10) {
                case 0...3:
                    let id = MessageId(peerId: chat, namespace: 0, id: Int32(1 + rng.below(40)))
                    let timestamp = Int32(1 + rng.below(100))
                    if working.messages[chat]?[id.id] == nil { working.messages[chat, default: [:]][id.id] = timestamp }
                    steps.append(.add(id, timestamp: timestamp))
                case 4, 5:
                    guard let id = working.messages[chat]?.keys.sorted().randomElement(using: &rng) else { continue }
                    working.messages[chat]?[id] = nil
                    steps.append(.delete(MessageId(peerId: chat, namespace: 0, id: id)))
                case 6...8:
                    let override: Int32? = rng.below(4) == 0 ? nil : Int32(1 + rng.below(120))
                    working.overrides[chat] = override
                    steps.append(.setState(chat, override: override))
                default:
                    working.overrides[chat] = nil
                    steps.append(.removeState(chat))
                }
            }
            let abort = rng.below(8) == 0
            let plan = steps
            do {
                try await postbox.transaction { tx in
                    for step in plan {
                        switch step {
                        case let .add(id, timestamp):
                            try tx.addMessages([StoreMessage(id: .id(id), timestamp: timestamp, flags: timestamp % 2 == 0 ? [.incoming] : [],
                                                             authorId: nil, text: "")], location: .random)
                        case let .delete(id):
                            try tx.deleteMessages([id])
                        case let .setState(peerId, override):
                            try tx.setPeerChatInterfaceState(peerId, state: StoredPeerChatInterfaceState(
                                overrideChatTimestamp: override, chatListEmbeddedState: ChatListEmbeddedState(text: "d", timestamp: override ?? 0)))
                        case let .removeState(peerId):
                            try tx.setPeerChatInterfaceState(peerId, state: nil)
                        }
                    }
                    if abort { throw PostboxTestError() }
                }
                model = working
            } catch is PostboxTestError {}
            let (rows, total, recount) = try await postbox.transaction { tx in
                (try Self.rows(tx), try tx.getTotalUnreadState(groupId: .root), try tx.history.recountTotalUnreadState(groupId: .root))
            }
            #expect(total == recount, "seed \(seed) round \(round): total unread state")
            guard rows == model.rows else {
                Issue.record("seed \(seed) round \(round) (\(abort ? "rolled back" : "committed")): \(plan)\nrows  \(rows)\nmodel \(model.rows)")
                return
            }
        }
        try await postbox.close()
        postbox = try await Postbox.open(path: path)
        let reopened = try await postbox.transaction { tx in try Self.rows(tx) }
        #expect(reopened == model.rows, "seed \(seed): after reopening")
        try await postbox.close()
    }
}
