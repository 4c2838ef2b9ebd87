import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// The filtered unread totals leave out muted chats (`isRemovedFromTotalUnreadCount`), as Postbox's filtered
/// counters do: a model of five chats gets random incoming messages, reads, mutes and unmutes, and after every
/// transaction the stored totals — absolute and filtered — must equal the model's and a recount from the tables,
/// and again after a reopen. Replay with BOXWOOD_SEED=<seed>.
@Suite(.timeLimit(.minutes(1))) struct MutedUnreadTotalTests {
    init() throws { try registerViewTestTypes() }

    static let peers = (1...5).map { peer(0, Int64($0)) }

    struct Model {
        var newest: [PeerId: Int32] = [:]
        var readUpTo: [PeerId: Int32] = [:]
        var muted: Set<PeerId> = []

        var total: ChatListTotalUnreadState {
            var result = ChatListTotalUnreadState()
            for peerId in MutedUnreadTotalTests.peers {
                guard let newest = newest[peerId] else { continue }
                let count = Int64(max(0, newest - (readUpTo[peerId] ?? 0)))
                result.messageCount += count
                result.chatCount += count > 0 ? 1 : 0
                if !muted.contains(peerId) {
                    result.filteredMessageCount += count
                    result.filteredChatCount += count > 0 ? 1 : 0
                }
            }
            return result
        }
    }

    enum Step: Sendable {
        case receive(PeerId, first: Int32, count: Int32)
        case read(PeerId, upTo: Int32)
        case mute(PeerId, Bool)
    }

    @Test func filteredTotalsLeaveOutMutedChats() async throws {
        let seed = ProcessInfo.processInfo.environment["BOXWOOD_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("MutedUnreadTotalTests seed: \(seed) (replay with BOXWOOD_SEED=\(seed))")
        var rng = SplitMix64(seed: seed)
        let path = NSTemporaryDirectory() + "bw-muted-totals-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        var model = Model()
        var mutes = 0
        for index in 0..<200 {
            // One to three steps per transaction, drawn outside it.
            var steps: [Step] = []
            var next = model
            for _ in 0..<(1 + rng.below(3)) {
                let peerId = Self.peers[rng.below(Self.peers.count)]
                switch rng.below(10) {
                case 0..<5:
                    let first = (next.newest[peerId] ?? 0) + 1
                    let count = Int32(1 + rng.below(3))
                    steps.append(.receive(peerId, first: first, count: count))
                    next.newest[peerId] = first + count - 1
                case 5, 6:
                    guard let newest = next.newest[peerId] else { continue }
                    let upTo = Int32(1 + rng.below(Int(newest)))
                    steps.append(.read(peerId, upTo: upTo))
                    next.readUpTo[peerId] = max(next.readUpTo[peerId] ?? 0, upTo)
                default:
                    let mute = !next.muted.contains(peerId)
                    steps.append(.mute(peerId, mute))
                    if mute { next.muted.insert(peerId); mutes += 1 } else { next.muted.remove(peerId) }
                }
            }
            let planned = steps
            try await postbox.transaction { tx in
                for step in planned {
                    switch step {
                    case let .receive(peerId, first, count):
                        _ = try tx.addMessages((first..<(first + count)).map { id in
                            StoreMessage(id: .id(MessageId(peerId: peerId, namespace: 0, id: id)), timestamp: 1_000 + id,
                                         flags: [.incoming], authorId: peerId, text: "m\(id)")
                        }, location: .upperHistoryBlock)
                    case let .read(peerId, upTo):
                        try tx.applyIncomingReadMaxId(MessageId(peerId: peerId, namespace: 0, id: upTo))
                    case let .mute(peerId, mute):
                        try tx.updatePeerNotificationSettings([peerId: TestNotificationSettings(muteUntil: mute ? Int32.max : 0)])
                    }
                }
            }
            model = next
            let (after, recount) = try await postbox.transaction { tx in
                (try tx.getTotalUnreadState(groupId: .root), try tx.postbox.tables.history.recountTotalUnreadState(groupId: .root))
            }
            #expect(after == model.total, "seed \(seed), transaction \(index) \(planned): stored \(after), model \(model.total)")
            #expect(recount == model.total, "seed \(seed), transaction \(index): recount \(recount), model \(model.total)")
            if after != model.total || recount != model.total { break }
        }
        let recount = try await postbox.transaction { tx in try tx.postbox.tables.history.recountTotalUnreadState(groupId: .root) }
        #expect(recount == model.total, "seed \(seed): recount \(recount), model \(model.total)")
        #expect(mutes > 0)
        try await postbox.close()
        postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        let reopened = try await postbox.transaction { tx in try tx.getTotalUnreadState(groupId: .root) }
        #expect(reopened == model.total, "seed \(seed): after reopen \(reopened), model \(model.total)")
        try await postbox.close()
    }

    /// A total unread state stored before the filtered counters existed (16 bytes) is recounted by the first
    /// writable open: the muted chat is left out of the filtered counters from then on.
    @Test func aLegacyTotalIsRecountedAtOpen() async throws {
        let path = NSTemporaryDirectory() + "bw-muted-legacy-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        try await postbox.transaction { tx in
            for (n, peerId) in Self.peers.prefix(3).enumerated() {
                _ = try tx.addMessages((1...Int32(n + 1)).map { id in
                    StoreMessage(id: .id(MessageId(peerId: peerId, namespace: 0, id: id)), timestamp: 1_000 + id,
                                 flags: [.incoming], authorId: peerId, text: "m\(id)")
                }, location: .upperHistoryBlock)
            }
            try tx.updatePeerNotificationSettings([Self.peers[2]: TestNotificationSettings(muteUntil: Int32.max)])
        }
        let expected = ChatListTotalUnreadState(messageCount: 6, chatCount: 3, filteredMessageCount: 3, filteredChatCount: 2)
        #expect(try await postbox.transaction { tx in try tx.getTotalUnreadState(groupId: .root) } == expected)
        #expect(try await postbox.get(.unreadCount()) == 3, "the badge leaves the muted chat out")
        #expect(try await postbox.get(.unreadCount(includingMuted: true)) == 6)
        // Overwrite it as an older build stored it: absolute counters only (and wrong ones).
        try await postbox.transaction { tx in
            let metadata = tx.postbox.tables.history.metadata
            let legacy = ByteBuffer(capacity: 16)
            legacy.append(Int64(999))
            legacy.append(Int64(9))
            try tx.postbox.valueBox.set(metadata.table, key: metadata.globalKey(.totalUnreadState, groupId: .root), value: legacy)
        }
        try await postbox.close()
        postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        #expect(try await postbox.transaction { tx in try tx.getTotalUnreadState(groupId: .root) } == expected)
        try await postbox.close()
    }
}
