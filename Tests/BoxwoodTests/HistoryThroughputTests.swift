import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// Prints the rate of `addMessages` through the whole end-of-transaction path (chat-list replay, total unread,
/// flush, commit with `.normal` durability): one message per value-box transaction, and 1,000 per transaction.
/// Small counts by default; `BOXWOOD_HISTORY_BENCH=1` runs larger ones (for release builds).
@Suite struct HistoryThroughputTests {
    static let words = ["hello", "world", "see", "you", "tomorrow", "at", "the", "station", "photo", "meeting", "ok", "thanks",
                        "lunch", "привет", "как", "дела", "🎉", "great", "news", "call", "me", "later"]

    private static func makeMessages(_ count: Int, peers: Int, startId: Int32, rng: inout SplitMix64) -> [StoreMessage] {
        (0..<count).map { i in
            let p = peer(Int64(1 + rng.below(peers)))
            let id = startId + Int32(i)
            let text = (0..<(3 + rng.below(8))).map { _ in words[rng.below(words.count)] }.joined(separator: " ")
            return StoreMessage(id: .id(MessageId(peerId: p, namespace: 0, id: id)), timestamp: 1_700_000_000 + id,
                                flags: rng.below(2) == 0 ? [.incoming] : [], tags: rng.below(5) == 0 ? MessageTags(rawValue: 1) : [],
                                authorId: p, text: text)
        }
    }

    @Test func addMessagesRate() throws {
        let large = ProcessInfo.processInfo.environment["BOXWOOD_HISTORY_BENCH"] == "1"
        let singles = large ? 20_000 : 300
        let batched = large ? 200_000 : 3_000
        var configuration = MessageHistoryConfiguration()
        configuration.messageHoles = [PeerId.Namespace(0): [0: []]]
        configuration.defaultMessageNamespaceReadStates = [0: .idBased(maxIncomingReadId: 0, maxOutgoingReadId: 0, maxKnownId: 0, count: 0, markedUnread: false)]
        var rng = SplitMix64(seed: 42)

        let f1 = try HistoryFixture("rate-single", configuration: configuration, durability: .normal)
        let one = Self.makeMessages(singles, peers: 100, startId: 1, rng: &rng)
        var start = Date()
        for message in one {
            try f1.transaction { t in try t.history.addMessages([message], location: .upperHistoryBlock) }
        }
        let singleSeconds = Date().timeIntervalSince(start)

        let f2 = try HistoryFixture("rate-batch", configuration: configuration, durability: .normal)
        let many = Self.makeMessages(batched, peers: 100, startId: 1, rng: &rng)
        start = Date()
        for chunk in stride(from: 0, to: many.count, by: 1000) {
            let slice = Array(many[chunk..<min(chunk + 1000, many.count)])
            try f2.transaction { t in try t.history.addMessages(slice, location: .upperHistoryBlock) }
        }
        let batchSeconds = Date().timeIntervalSince(start)

        var noText = configuration
        noText.indexMessageText = false
        let f3 = try HistoryFixture("rate-batch-notext", configuration: noText, durability: .normal)
        start = Date()
        for chunk in stride(from: 0, to: many.count, by: 1000) {
            let slice = Array(many[chunk..<min(chunk + 1000, many.count)])
            try f3.transaction { t in try t.history.addMessages(slice, location: .upperHistoryBlock) }
        }
        let noTextSeconds = Date().timeIntervalSince(start)

        let stored = try f2.read { t in try t.history.indices(peerId: peer(1), anchor: nil, direction: .earlier, limit: 0).count }
        #expect(stored == many.filter { $0.id.peerId == peer(1) }.count)
        print(String(format: "HistoryThroughputTests: addMessages 1/transaction: %d messages, %.0f msg/s; 1000/transaction: %d messages, %.0f msg/s (text index, tags, read states, holes, chat list); 1000/transaction without the text index: %.0f msg/s",
                     singles, Double(singles) / singleSeconds, batched, Double(batched) / batchSeconds, Double(batched) / noTextSeconds))
    }
}
