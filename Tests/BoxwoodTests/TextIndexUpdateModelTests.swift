import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// Model-based randomized test of the text index through `Postbox`: messages with random words and tags are added,
/// updated (tags only: the index edits the entry's tags in place; text; both; a move to another id; nothing the
/// index keeps) and deleted, several per transaction (so that a message added, retagged and deleted in one
/// transaction meets the index's buffered list changes), with reopens; after every transaction each word, in every
/// chat and with every tag filter, is searched and compared with a brute-force search over the model of the
/// stored messages. Replay with `BOXWOOD_SEED=<seed>`; `BOXWOOD_TEXT_UPDATE_OPS` sets the length.
@Suite struct TextIndexUpdateModelTests {
    private struct ModelMessage: Sendable {
        var text: String
        var tags: MessageTags
        var timestamp: Int32
    }

    private static let words = ["alpha", "beta", "gamma", "delta", "omega", "über", "привет", "zeta"]
    private static let tagBits: [MessageTags] = [MessageTags(rawValue: 1), MessageTags(rawValue: 2), MessageTags(rawValue: 16)]

    @Test func searchesMatchAModelAfterRandomUpdates() async throws {
        let seed = ProcessInfo.processInfo.environment["BOXWOOD_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(Int32.max))
        let operations = ProcessInfo.processInfo.environment["BOXWOOD_TEXT_UPDATE_OPS"].flatMap(Int.init) ?? 600
        print("TextIndexUpdateModelTests seed \(seed), \(operations) operations (replay with BOXWOOD_SEED=\(seed))")
        var rng = SplitMix64(seed: seed)
        let path = NSTemporaryDirectory() + "bw-text-update-model-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        let chats = (1...3).map { peer(0, Int64($0)) }
        var model: [MessageId: ModelMessage] = [:]
        var clock: Int32 = 1000

        func randomText(_ rng: inout SplitMix64) -> String {
            (0..<rng.below(4)).map { _ in Self.words[rng.below(Self.words.count)] }.joined(separator: " ")
        }
        func randomTags(_ rng: inout SplitMix64) -> MessageTags {
            Self.tagBits.reduce(into: MessageTags()) { tags, bit in if rng.chance(0.4) { tags.insert(bit) } }
        }
        @Sendable func store(_ id: MessageId, _ message: ModelMessage) -> StoreMessage {
            StoreMessage(id: .id(id), timestamp: message.timestamp, flags: [.incoming], tags: message.tags, authorId: id.peerId, text: message.text)
        }

        var done = 0
        var transactions = 0
        while done < operations {
            if rng.chance(0.05) {
                try await postbox.close()
                postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
            }
            // A batch of operations in one transaction, applied to the model in the same order.
            var batch: [(kind: Int, id: MessageId, message: ModelMessage, newId: MessageId)] = []
            for _ in 0..<(1 + rng.below(8)) {
                let id = MessageId(peerId: chats[rng.below(chats.count)], namespace: 0, id: Int32(1 + rng.below(12)))
                let newId = MessageId(peerId: id.peerId, namespace: 0, id: Int32(1 + rng.below(12)))
                clock += 1
                let current = model[id]
                var message = current ?? ModelMessage(text: randomText(&rng), tags: randomTags(&rng), timestamp: clock)
                var kind = 0  // add
                if current != nil {
                    kind = 1 + rng.below(5)
                    switch kind {
                    case 1: message.tags = randomTags(&rng)                                          // tags only
                    case 2: message.text = randomText(&rng)                                          // text only
                    case 3: message.text = randomText(&rng); message.tags = randomTags(&rng)         // both
                    case 4: if newId == id || model[newId] != nil { kind = 5 } else { message.tags = randomTags(&rng) }  // move
                    default: break
                    }
                    if kind == 5 { kind = rng.chance(0.5) ? 5 : 6 }  // 5: same message again, 6: delete
                }
                batch.append((kind, id, message, newId))
                switch kind {
                case 0: model[id] = message
                case 4: model[id] = nil; model[newId] = message
                case 6: model[id] = nil
                default: model[id] = message
                }
            }
            let ops = batch
            try await postbox.transaction { tx in
                for op in ops {
                    switch op.kind {
                    case 0: _ = try tx.addMessages([store(op.id, op.message)], location: .random)
                    case 4: try tx.updateMessage(op.id, store(op.newId, op.message))
                    case 6: try tx.deleteMessages([op.id])
                    default: try tx.updateMessage(op.id, store(op.id, op.message))
                    }
                }
            }
            done += batch.count
            transactions += 1

            // Every word, in every chat and everywhere, with every tag filter.
            let snapshot = model
            let mismatch: String? = try await postbox.transaction { tx in
                for word in Self.words {
                    for peerId in [nil] + chats.map(Optional.some) {
                        for tags in [nil] + Self.tagBits.map(Optional.some) + [MessageTags(rawValue: 3)] {
                            let found = Set(try tx.searchMessages(word, peerId: peerId, tags: tags).map(\.id))
                            let expected = Set(snapshot.filter { id, message in
                                (peerId == nil || id.peerId == peerId)
                                    && message.text.split(separator: " ").contains { $0.hasPrefix(word) }
                                    && (tags == nil || message.tags.isSuperset(of: tags!))
                            }.map(\.key))
                            if found != expected {
                                return "word \(word) chat \(String(describing: peerId)) tags \(String(describing: tags)): found \(found), expected \(expected)"
                            }
                        }
                    }
                }
                return nil
            }
            if let mismatch {
                Issue.record("seed \(seed), transaction \(transactions) (\(batch.map { "\($0.kind) \($0.id.peerId.id)/\($0.id.id)" })): \(mismatch)")
                break
            }
        }
        try await postbox.close()
    }
}
