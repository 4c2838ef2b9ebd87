import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

@Suite(.timeLimit(.minutes(1))) struct HistoryViewTests {
    init() throws {
        try registerTestTypes()
        try registerTableTestTypes()
    }

    func temporaryPath(_ tag: String) -> String {
        NSTemporaryDirectory() + "bw-history-views-\(tag)-\(UUID().uuidString)"
    }

    func message(_ peerId: PeerId, _ id: Int32, _ timestamp: Int32, _ text: String, tags: MessageTags = []) -> StoreMessage {
        StoreMessage(id: .id(MessageId(peerId: peerId, namespace: 0, id: id)), timestamp: timestamp, flags: [.incoming], tags: tags,
                     authorId: peerId, text: text)
    }

    @Test func historyViewShowsMessagesAndHolesAndTheHoleViewFollowsFills() async throws {
        let path = temporaryPath("history")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        let chat = peer(0, 5)
        let historyKey = PostboxViewKey.messageHistory(peerId: chat, namespace: 0, anchor: nil, count: 3, tag: nil)
        var iterator = postbox.combinedView(keys: [historyKey, .messageHistoryHoles, .chatList(groupId: .root, anchor: nil, count: 10), .chatListHoles]).makeAsyncIterator()
        let initial = try await iterator.next()
        let history0 = initial?.views[historyKey] as? MessageHistoryView
        #expect(history0?.entries.isEmpty == true && history0?.updateType == .initial)
        // The chat list starts with the seeded hole, which the chat-list holes view reports.
        #expect((initial?.views[.chatListHoles] as? ChatListHolesView)?.entries.count == 1)

        // Newest messages arrive (upper history block): ids 10...14 known, everything below still a hole.
        try await postbox.transaction { tx in
            _ = try tx.addMessages((10...14).map { self.message(chat, $0, 100 + $0, "m\($0)") }, location: .upperHistoryBlock)
        }
        let afterAdd = try await iterator.next()
        let history1 = afterAdd?.views[historyKey] as? MessageHistoryView
        #expect(history1?.entries.map(\.id.id) == [12, 13, 14])
        #expect(history1?.holes == [])      // 12...Int32.max-1 is known
        #expect((afterAdd?.views[.messageHistoryHoles] as? MessageHistoryHolesView)?.entries.isEmpty == true)

        // A bigger window reaches below the known block: the hole 1...9 shows, in the hole view too.
        var wide = postbox.combinedView(keys: [.messageHistory(peerId: chat, namespace: 0, anchor: nil, count: 50, tag: nil)]).makeAsyncIterator()
        let wideView = try await wide.next()?.views[.messageHistory(peerId: chat, namespace: 0, anchor: nil, count: 50, tag: nil)] as? MessageHistoryView
        #expect(wideView?.holes == [1...9])
        let holesNow = try await iterator.next()
        #expect((holesNow?.views[.messageHistoryHoles] as? MessageHistoryHolesView)?.entries.map(\.range) == [1...9])

        // The network fills the hole: messages 5...9 arrive and 1...9 is removed.
        try await postbox.transaction { tx in
            try tx.addMessages((5...9).map { self.message(chat, $0, 100 + $0, "m\($0)") }, location: .random)
            try tx.removeHole(peerId: chat, namespace: 0, space: .everywhere, range: 1...9)
        }
        let filled = try await wide.next()?.views[.messageHistory(peerId: chat, namespace: 0, anchor: nil, count: 50, tag: nil)] as? MessageHistoryView
        #expect(filled?.entries.map(\.id.id) == Array(5...14))
        #expect(filled?.holes == [] && filled?.updateType == .fillHole)
        let holesAfter = try await iterator.next()
        #expect((holesAfter?.views[.messageHistoryHoles] as? MessageHistoryHolesView)?.entries.isEmpty == true)
        try await postbox.close()
    }

    /// After every random transaction, every live view equals a view built afresh from the tables.
    @Test func liveViewsEqualFreshViewsAfterRandomTransactions() async throws {
        let seed = ProcessInfo.processInfo.environment["BOXWOOD_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(Int32.max))
        print("HistoryViewTests seed \(seed) (replay with BOXWOOD_SEED=\(seed))")
        let path = temporaryPath("random")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        let chats = (1...3).map { peer(0, Int64($0)) }
        var keyList: [PostboxViewKey] = [.chatList(groupId: .root, anchor: nil, count: 4), .chatList(groupId: .root, anchor: nil, count: 50), .totalUnreadState(groupId: .root),
                                      .messageHistoryHoles, .chatListHoles]
        for chat in chats {
            keyList.append(.messageHistory(peerId: chat, namespace: 0, anchor: nil, count: 5, tag: nil))
            keyList.append(.messageHistory(peerId: chat, namespace: 0, anchor: MessageIndex(id: MessageId(peerId: chat, namespace: 0, id: 20), timestamp: 20), count: 6, tag: nil))
            keyList.append(.messageHistory(peerId: chat, namespace: 0, anchor: nil, count: 4, tag: MessageTags(rawValue: 1)))
            keyList.append(.combinedReadState(peerId: chat))
        }
        let keys = keyList
        let id = try await postbox.onQueue {
            try postbox.runTransaction { tx in postbox.viewTracker.add(keys: keys, tables: try tx.tables) { _ in } }
        }
        final class State: @unchecked Sendable { var rng: SplitMix64; init(_ seed: UInt64) { rng = SplitMix64(seed: seed) } }
        let state = State(seed)
        for round in 0..<150 {
            try await postbox.transaction { tx in
                for _ in 0..<(1 + state.rng.below(4)) {
                    let chat = chats[state.rng.below(chats.count)]
                    let messageId = Int32(1 + state.rng.below(40))
                    switch state.rng.below(9) {
                    case 6:
                        // An update of text or tags only (a tag-only change edits the text index in place).
                        let id = MessageId(peerId: chat, namespace: 0, id: messageId)
                        if let old = try tx.getMessage(id) {
                            let text = state.rng.below(2) == 0 ? old.text : "u\(messageId)-\(round)"
                            try tx.updateMessage(id, StoreMessage(id: .id(id), timestamp: old.timestamp, flags: old.flags,
                                                                  tags: state.rng.below(2) == 0 ? [] : MessageTags(rawValue: 1),
                                                                  authorId: old.authorId, text: text, attributes: old.attributes))
                        }
                    case 7:
                        // Authors renamed: every message they wrote (or wrote a reply's target) renders anew.
                        let user = peer(0, Int64(100 + state.rng.below(3)))
                        try tx.updatePeers([TestUser(id: user, firstName: "user\(round)", lastName: "", username: nil)])
                    case 8:
                        // A reply by a user, to a message of this chat or another one (stored or not).
                        let target = MessageId(peerId: chats[state.rng.below(chats.count)], namespace: 0, id: Int32(1 + state.rng.below(40)))
                        try tx.addMessages([StoreMessage(id: .id(MessageId(peerId: chat, namespace: 0, id: messageId)), timestamp: messageId,
                                                         flags: [.incoming], authorId: peer(0, Int64(100 + state.rng.below(3))),
                                                         text: "r\(messageId)", attributes: [ReplyAttribute(messageId: target)])],
                                           location: .random)
                    case 0, 1:
                        try tx.addMessages([self.message(chat, messageId, messageId, "t\(messageId)", tags: state.rng.below(2) == 0 ? [] : MessageTags(rawValue: 1))],
                                           location: state.rng.below(3) == 0 ? .upperHistoryBlock : .random)
                    case 2: try tx.deleteMessages([MessageId(peerId: chat, namespace: 0, id: messageId)])
                    case 3: try tx.applyIncomingReadMaxId(MessageId(peerId: chat, namespace: 0, id: messageId))
                    case 4:
                        let low = Int32(1 + state.rng.below(30))
                        try tx.addHole(peerId: chat, namespace: 0, space: .everywhere, range: low...(low + Int32(state.rng.below(10))))
                    default:
                        let low = Int32(1 + state.rng.below(30))
                        try tx.removeHole(peerId: chat, namespace: 0, space: .everywhere, range: low...(low + Int32(state.rng.below(10))))
                    }
                }
            }
            let mismatch = try await postbox.onQueue { () -> String? in
                try postbox.runTransaction { tx -> String? in
                    let tables = try tx.tables
                    for key in keys {
                        let live = postbox.viewTracker.snapshot(id)?.views[key]
                        let fresh = try key.makeView(tables: tables, tracker: postbox.viewTracker).immutableView()
                        if detailedFingerprint(live) != detailedFingerprint(fresh) {
                            return "\(key): live \(detailedFingerprint(live)) fresh \(detailedFingerprint(fresh))"
                        }
                    }
                    return nil
                }
            }
            if let mismatch {
                Issue.record("seed \(seed), round \(round): \(mismatch)")
                break
            }
        }
        try await postbox.close()
    }
}

/// `fingerprint`, with what a history view's messages render besides their own fields: the stable version, the
/// author's name and each replied-to message's text and author.
private func detailedFingerprint(_ view: (any PostboxView)?) -> String {
    guard let view = view as? MessageHistoryView else { return fingerprint(view) }
    func name(_ message: Message) -> String { (message.author as? TestUser)?.firstName ?? "-" }
    return view.fingerprint + " " + view.entries.map { message in
        "v\(message.stableVersion) \(name(message)) "
            + message.associatedMessageIds.map { id in message.associatedMessages[id].map { "\($0.text)/\(name($0))" } ?? "none" }.joined(separator: ",")
    }.joined(separator: "; ")
}

/// A comparable rendering of a snapshot (dictionary-free).
func fingerprint(_ view: (any PostboxView)?) -> String {
    switch view {
    case let view as MessageHistoryView: return view.fingerprint
    case let view as ChatListView: return view.fingerprint
    case let view as TotalUnreadView: return "\(view.state)"
    case let view as CombinedReadStateView: return "\(view.state.map { "\($0.count) \($0.isUnread)" } ?? "none")"
    case let view as MessageHistoryHolesView: return "\(view.entries.map { "\($0.peerId) \($0.range) \($0.direction) \($0.count)" }.sorted())"
    case let view as ChatListHolesView: return "\(view.entries.map { "\($0.hole)" }.sorted())"
    default: return peerViewsFingerprint(view) ?? "\(String(describing: view))"
    }
}

/// The cost of `updateViews` with 100 live history views when a transaction touches none of them and when it
/// touches one (printed, not asserted; `BOXWOOD_VIEW_BENCH=1` for more rounds, in a release build).
@Suite struct ViewCostTests {
    @Test func updateViewsCostWithAHundredViews() async throws {
        let rounds = ProcessInfo.processInfo.environment["BOXWOOD_VIEW_BENCH"] != nil ? 20_000 : 300
        let path = NSTemporaryDirectory() + "bw-view-cost-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        let chats = (1...100).map { peer(0, Int64($0)) }
        try await postbox.transaction { tx in
            for chat in chats {
                _ = try tx.addMessages((1...30).map { StoreMessage(id: .id(MessageId(peerId: chat, namespace: 0, id: $0)), timestamp: $0,
                                                                  flags: [.incoming], authorId: chat, text: "message \($0)") }, location: .upperHistoryBlock)
            }
        }
        let keys = chats.map { PostboxViewKey.messageHistory(peerId: $0, namespace: 0, anchor: nil, count: 20, tag: nil) }
        let result = try await postbox.onQueue { () -> (none: Double, one: Double) in
            try postbox.runTransaction { tx in
                for key in keys { _ = postbox.viewTracker.add(keys: [key], tables: try tx.tables) { _ in } }
            }
            let tables = postbox.tables
            // A change record for a chat no view shows, and one for a chat one view shows (the view reloads).
            var untouched = PostboxChanges()
            untouched.updatedPeers = [:]
            untouched.operationsByPeerId = [peer(0, 999): []]
            untouched.updatedState = TestAccountState(pts: 1, qts: 0, date: 0, seq: 0)
            var touched = PostboxChanges()
            let message = try postbox.runTransaction { tx in try tx.getMessage(MessageId(peerId: chats[0], namespace: 0, id: 30))! }
            touched.operationsByPeerId = [chats[0]: [.insertMessage(message)]]
            func time(_ changes: PostboxChanges) throws -> Double {
                try postbox.valueBox.beginRead()
                defer { postbox.valueBox.endRead() }
                let start = ContinuousClock.now
                for _ in 0..<rounds { postbox.viewTracker.updateViews(tables: tables, changes: changes) }
                return (ContinuousClock.now - start) / .seconds(1) / Double(rounds)
            }
            return (try time(untouched), try time(touched))
        }
        print("updateViews with 100 live history views: \(Int(result.none * 1e9)) ns when the transaction touches none, \(Int(result.one * 1e9)) ns when it touches one (\(rounds) rounds)")
        #expect(postbox.liveViewCount == 100)
        try await postbox.close()
    }
}
