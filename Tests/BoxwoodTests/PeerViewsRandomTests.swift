import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// The peer, contact, message, ordered-list and unsent views under random transactions: after each, every live
/// view equals a view built afresh from the tables, and a view emitted exactly when what it shows changed.
/// Some transactions run in a second instance (another process, for the shared header), so the views are
/// rebuilt on the first instance's next transaction.
@Suite(.timeLimit(.minutes(1))) struct PeerViewsRandomTests {
    init() throws { try registerViewTestTypes() }

    static let users = (1...4).map { peer(0, Int64($0)) }
    static let secrets = (1...2).map { peer(2, Int64($0)) }
    static let chats = Array(users.prefix(2))
    static let everyone = users + secrets

    static var keys: [PostboxViewKey] {
        let (u, s) = (users, secrets)
        let messageIds: Set<MessageId> = [MessageId(peerId: chats[0], namespace: 0, id: 1), MessageId(peerId: chats[0], namespace: 0, id: 4),
                                          MessageId(peerId: chats[1], namespace: 0, id: 2), MessageId(peerId: chats[1], namespace: 0, id: 6)]
        return [
            .peer(u[0], components: .all), .peer(s[0], components: .all), .peer(u[1], components: []), .peer(u[2], components: .cachedData),
            .peer(s[1], components: .subPeers), .peer(u[0], components: [.messages, .groupId]),
            .peerChatState(u[0]), .peerChatState(s[0]), .cachedPeerData(u[1]), .peerPresences([u[0], u[1], s[0]]),
            .peerNotificationSettings([u[0], s[0], s[1], u[2]]), .contacts(includePresences: true), .contacts(includePresences: false),
            .isContact(u[1]), .messages(messageIds), .orderedItemList(id: 1), .orderedItemList(id: 2), .unsentMessages,
        ]
    }

    final class Random: @unchecked Sendable {
        var rng: SplitMix64
        init(_ seed: UInt64) { rng = SplitMix64(seed: seed) }
        func below(_ n: Int) -> Int { rng.below(n) }
        func pick<T>(_ values: [T]) -> T { values[below(values.count)] }
        func maybe<T>(_ value: T) -> T? { below(3) == 0 ? nil : value }
        func subset<T: Hashable>(_ values: [T]) -> Set<T> { Set(values.filter { _ in below(2) == 0 }) }
    }

    /// One random change.
    static func randomChange(_ tx: Transaction, _ random: Random) throws {
        let messageId = { MessageId(peerId: random.pick(chats), namespace: 0, id: Int32(1 + random.below(6))) }
        let flags: () -> MessageFlags = { random.pick([[], [.unsent], [.unsent], [.unsent, .failed], [.incoming]]) }
        switch random.below(13) {
        case 0:
            let id = random.pick(everyone)
            if secrets.contains(id) {
                try tx.updatePeers([TestSecretChat(id: id, userId: random.pick(users))])
            } else {
                try tx.updatePeers([TestUser(id: id, firstName: random.pick(["A", "B"]), lastName: "", username: nil,
                                             associatedPeerId: random.below(3) == 0 ? random.pick(users) : nil)])
            }
        case 1: try tx.updatePeerPresences([random.pick(everyone): TestPresence(lastSeen: Int32(random.below(3)))])
        case 2: try tx.updatePeerNotificationSettings([random.pick(everyone): TestNotificationSettings(muteUntil: random.maybe(Int32(random.below(2))))])
        case 3: try tx.replaceContactPeerIds(random.subset(everyone))
        case 4:
            let data = TestCachedData(about: random.pick(["x", "y"]), pinnedMessageId: random.maybe(messageId()), memberIds: Array(random.subset(everyone)).sorted())
            try tx.updatePeerCachedData(peerIds: [random.pick(everyone)]) { _, _ in data }
        case 5:
            let state = try random.maybe(CodableEntry(TestChannelState(pts: Int32(random.below(2)), invalidatedPts: nil)))
            try tx.setPeerChatState(random.pick(everyone), state: state)
        case 6, 7:
            let id = messageId()
            try tx.addMessages([storeMessage(id, timestamp: id.id, flags: flags(), text: random.pick(["a", "b"]))], location: .random)
        case 8: try tx.deleteMessages([messageId()])
        case 9:
            let id = messageId()
            guard try tx.getMessage(id) != nil else { return }
            let newId = random.below(4) == 0 ? messageId() : id
            try tx.updateMessage(id, storeMessage(newId, timestamp: newId.id + Int32(random.below(2)), flags: flags(), text: random.pick(["a", "c"])))
        case 10, 11:
            let list = Int32(1 + random.below(2))
            let item = { OrderedItemListEntry(id: MemoryBuffer([UInt8(random.below(5))]), contents: TestStickerItem(fileId: Int64(random.below(3)), emoji: [])) }
            switch random.below(4) {
            case 0: try tx.replaceOrderedItemListItems(collectionId: list, items: (0..<random.below(4)).map { _ in item() })
            case 1: try tx.addOrMoveToFirstPositionOrderedItemListItem(collectionId: list, item: item(), removeTailIfCountExceeds: random.maybe(2 + random.below(2)))
            case 2: try tx.removeOrderedItemListItem(collectionId: list, itemId: item().id)
            default:
                let entry = item()
                try tx.updateOrderedItemListItem(collectionId: list, itemId: entry.id, item: entry.contents)
            }
        default:
            try tx.updatePeerChatListInclusion(random.pick(everyone), inclusion: random.pick([
                .notIncluded, .ifHasMessagesOrOneOf(groupId: .root, pinningIndex: nil, minTimestamp: nil),
                .ifHasMessagesOrOneOf(groupId: .group(1), pinningIndex: nil, minTimestamp: nil),
            ]))
        }
    }

    @Test func liveViewsEqualFreshViewsAndEmitExactlyWhenTheyChange() async throws {
        let seed = ProcessInfo.processInfo.environment["BOXWOOD_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(Int32.max))
        print("PeerViewsRandomTests seed \(seed) (replay with BOXWOOD_SEED=\(seed))")
        let path = NSTemporaryDirectory() + "bw-peer-views-random-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        let other = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        let keys = Self.keys
        final class Emissions: @unchecked Sendable { var counts: [Int] = [] }
        let emissions = Emissions()
        // One registration per key, so that each view's emissions are counted on their own.
        let ids = try await postbox.onQueue {
            try postbox.runTransaction { tx in
                try keys.enumerated().map { position, key in
                    emissions.counts.append(0)
                    return postbox.viewTracker.add(keys: [key], tables: try tx.tables) { _ in emissions.counts[position] += 1 }
                }
            }
        }
        var shown = try await postbox.onQueue { ids.enumerated().map { fingerprint(postbox.viewTracker.snapshot($1)?.views[keys[$0]]) } }
        var counts = try await postbox.onQueue { emissions.counts }
        let random = Random(seed)
        var externalRounds = 0
        for round in 0..<200 {
            let external = random.below(6) == 0
            try await (external ? other : postbox).transaction { tx in
                for _ in 0..<(1 + random.below(3)) { try Self.randomChange(tx, random) }
            }
            if external {
                externalRounds += 1
                // The first instance notices the other's commit at its next transaction and rebuilds its views.
                try await postbox.transaction { _ in }
            }
            let (mismatch, now, nowCounts) = try await postbox.onQueue { () -> (String?, [String], [Int]) in
                try postbox.runTransaction { tx in
                    let tables = try tx.tables
                    var now: [String] = []
                    var mismatch: String?
                    for (position, key) in keys.enumerated() {
                        let live = fingerprint(postbox.viewTracker.snapshot(ids[position])?.views[key])
                        let fresh = fingerprint(try key.makeView(tables: tables, tracker: postbox.viewTracker).immutableView())
                        if mismatch == nil && live != fresh { mismatch = "\(key): live \(live) fresh \(fresh)" }
                        now.append(live)
                    }
                    return (mismatch, now, emissions.counts)
                }
            }
            if let mismatch {
                Issue.record("seed \(seed), round \(round)\(external ? " (external)" : ""): \(mismatch)")
                break
            }
            for (position, key) in keys.enumerated() {
                let emitted = nowCounts[position] - counts[position]
                let changed = now[position] != shown[position]
                if emitted != (changed ? 1 : 0) {
                    Issue.record("seed \(seed), round \(round)\(external ? " (external)" : ""): \(key) emitted \(emitted) times, changed \(changed): \(shown[position]) → \(now[position])")
                }
            }
            shown = now
            counts = nowCounts
        }
        print("PeerViewsRandomTests: \(keys.count) views, 200 rounds (\(externalRounds) from another instance), emissions \(counts.reduce(0, +))")
        try await postbox.close()
        try await other.close()
    }
}
