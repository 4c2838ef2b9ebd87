import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

@Suite(.timeLimit(.minutes(1))) struct ViewTests {
    init() throws {
        try registerTestTypes()
        try registerTableTestTypes()
    }

    func temporaryPath(_ tag: String) -> String {
        NSTemporaryDirectory() + "bw-views-\(tag)-\(UUID().uuidString)"
    }

    @Test func aViewEmitsItsSnapshotThenOnlyRelevantChanges() async throws {
        let path = temporaryPath("selective")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path)
        let alice = TestUser(id: peer(0, 1), firstName: "Alice", lastName: "A", username: nil)
        var iterator = postbox.combinedView(keys: [.postboxState, .basicPeer(alice.id)]).makeAsyncIterator()
        let first = try await iterator.next()
        #expect((first?.views[.postboxState] as? PostboxStateView)?.state == nil)
        #expect((first?.views[.basicPeer(alice.id)] as? BasicPeerView)?.peer == nil)

        // Irrelevant transactions emit nothing: the next element is the relevant change below.
        try await postbox.transaction { tx in try tx.replaceContactPeerIds([peer(0, 99)]) }
        try await postbox.transaction { tx in try tx.updatePeers([TestUser(id: peer(0, 2), firstName: "B", lastName: "", username: nil)]) }
        try await postbox.transaction { tx in try tx.setState(TestAccountState(pts: 5, qts: 0, date: 0, seq: 0)) }
        let second = try await iterator.next()
        #expect(((second?.views[.postboxState] as? PostboxStateView)?.state as? TestAccountState)?.pts == 5)
        try await postbox.transaction { tx in try tx.updatePeers([alice]) }
        let third = try await iterator.next()
        #expect(((third?.views[.basicPeer(alice.id)] as? BasicPeerView)?.peer as? TestUser)?.firstName == "Alice")
        // Storing an equal peer again changes nothing.
        try await postbox.transaction { tx in try tx.updatePeers([alice]) }
        try await postbox.transaction { tx in try tx.setState(TestAccountState(pts: 6, qts: 0, date: 0, seq: 0)) }
        let fourth = try await iterator.next()
        #expect(((fourth?.views[.postboxState] as? PostboxStateView)?.state as? TestAccountState)?.pts == 6)
        try await postbox.close()
    }

    /// Every emission counted (the stream form keeps only the newest snapshot, so it cannot show this).
    @Test func irrelevantTransactionsEmitNothing() async throws {
        let path = temporaryPath("count")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path)
        final class Counter: @unchecked Sendable { var value = 0 }
        let counter = Counter()
        let alice = peer(0, 1)
        let id = try await postbox.onQueue {
            try postbox.runTransaction { tx in
                postbox.viewTracker.add(keys: [.basicPeer(alice), .preferences(keys: [ValueBoxKey("a")])], tables: try tx.tables) { _ in counter.value += 1 }
            }
        }
        func emissions() async throws -> Int { try await postbox.onQueue { counter.value } }
        #expect(try await emissions() == 1)
        try await postbox.transaction { tx in try tx.updatePeers([TestUser(id: peer(0, 2), firstName: "B", lastName: "", username: nil)]) }
        try await postbox.transaction { tx in try tx.setState(TestAccountState(pts: 1, qts: 0, date: 0, seq: 0)) }
        try await postbox.transaction { tx in try tx.replaceContactPeerIds([alice]) }
        #expect(try await emissions() == 1)
        try await postbox.transaction { tx in try tx.updatePeers([TestUser(id: alice, firstName: "A", lastName: "", username: nil)]) }
        #expect(try await emissions() == 2)
        try await postbox.transaction { tx in try tx.updatePeers([TestUser(id: alice, firstName: "A", lastName: "", username: nil)]) }
        #expect(try await emissions() == 2)
        try await postbox.onQueue { postbox.viewTracker.remove(id, tables: postbox.tables) }
        try await postbox.transaction { tx in try tx.updatePeers([TestUser(id: alice, firstName: "Z", lastName: "", username: nil)]) }
        #expect(try await emissions() == 2)
        try await postbox.close()
    }

    @Test func operationLogAndUnreadViewsFollowTheirTables() async throws {
        let path = temporaryPath("queues")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        let tag = PeerOperationLogTag(3)
        let chat = peer(0, 7)
        var iterator = postbox.combinedView(keys: [.peerMergedOperationLog(tag: tag, limit: 10), .totalUnreadState(groupId: .root),
                                                   .combinedReadState(peerId: chat)]).makeAsyncIterator()
        _ = try await iterator.next()
        try await postbox.transaction { tx in
            try tx.operationLogAddEntry(peerId: chat, tag: tag, tagMergedIndex: .automatic, contents: TestOperation(payload: 1))
            try tx.addMessages([StoreMessage(id: .id(MessageId(peerId: chat, namespace: 0, id: 1)), timestamp: 10, flags: [.incoming],
                                             authorId: chat, text: "hi")], location: .upperHistoryBlock)
        }
        let next = try await iterator.next()
        #expect((next?.views[.peerMergedOperationLog(tag: tag, limit: 10)] as? MergedOperationLogView)?.entries.count == 1)
        #expect((next?.views[.totalUnreadState(groupId: .root)] as? TotalUnreadView)?.state == ChatListTotalUnreadState(unfilteredMessageCount: 1, chatCount: 1))
        #expect((next?.views[.combinedReadState(peerId: chat)] as? CombinedReadStateView)?.state?.count == 1)
        try await postbox.transaction { tx in
            try tx.applyIncomingReadMaxId(MessageId(peerId: chat, namespace: 0, id: 1))
            try tx.operationLogRemoveAllEntries(peerId: chat, tag: tag)
        }
        let read = try await iterator.next()
        #expect((read?.views[.peerMergedOperationLog(tag: tag, limit: 10)] as? MergedOperationLogView)?.entries.isEmpty == true)
        #expect((read?.views[.totalUnreadState(groupId: .root)] as? TotalUnreadView)?.state == ChatListTotalUnreadState(messageCount: 0, chatCount: 0))
        #expect((read?.views[.combinedReadState(peerId: chat)] as? CombinedReadStateView)?.state?.count == 0)
        try await postbox.close()
    }

    @Test func anotherProcessesCommitRefreshesViewsAndEndedConsumersLeaveNoView() async throws {
        let path = temporaryPath("external")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let app = try await Postbox.open(path: path)
        let other = try await Postbox.open(path: path)
        let carol = TestUser(id: peer(0, 3), firstName: "Carol", lastName: "C", username: nil)
        do {
            // Iterated inline (not in another task), so the suite's time limit ends a missing emission as a failure.
            var iterator = app.combinedView(keys: [.basicPeer(carol.id)]).makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first != nil && (first?.views[.basicPeer(carol.id)] as? BasicPeerView)?.peer == nil)
            #expect(app.liveViewCount == 1)
            // The other instance (another process, for the shared header) commits; the app's view refreshes
            // without any transaction of the app.
            try await other.transaction { tx in try tx.updatePeers([carol]) }
            let second = try await iterator.next()
            #expect(((second?.views[.basicPeer(carol.id)] as? BasicPeerView)?.peer as? TestUser)?.lastName == "C")
        }
        for _ in 0..<200 where app.liveViewCount > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(app.liveViewCount == 0)
        try await app.close()
        try await other.close()
    }
}
