import Foundation
import Testing
@testable import Boxwood

/// The callback form of live views (`combinedView(keys:onNext:)` and its ``Disposable``), stream
/// cancellation, and the tracker's registrations changing while it notifies.
@Suite(.timeLimit(.minutes(1))) struct ViewCallbackTests {
    init() throws { try registerViewTestTypes() }

    func withPostbox(_ tag: String, _ body: (Postbox) async throws -> Void) async throws {
        let path = NSTemporaryDirectory() + "bw-view-callbacks-\(tag)-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path)
        try await body(postbox)
        try await postbox.close()
    }

    func waitForLiveViewCount(_ postbox: Postbox, _ count: Int) async throws {
        for _ in 0..<2_000 where postbox.liveViewCount != count { try await Task.sleep(for: .milliseconds(5)) }
    }

    static let alice = peer(0, 1)
    static func alice(_ name: String) -> TestUser { TestUser(id: alice, firstName: name, lastName: "", username: nil) }

    @Test func callbackGetsTheSnapshotThenUpdatesAndNothingAfterDispose() async throws {
        try await withPostbox("dispose") { postbox in
            let baseline = postbox.liveViewCount
            let recorder = ViewRecorder()
            let disposable = postbox.combinedView(keys: [.basicPeer(Self.alice)], onNext: { recorder.record($0) }, onError: { recorder.recordError($0) })
            let first = try await recorder.waitFor(count: 1)
            #expect((first[0].views[.basicPeer(Self.alice)] as? BasicPeerView)?.peer == nil)
            #expect(postbox.liveViewCount == baseline + 1)
            try await postbox.transaction { tx in try tx.updatePeers([Self.alice("A")]) }
            try await postbox.transaction { tx in try tx.updatePeers([Self.alice("B")]) }
            let updates = try await recorder.waitFor(count: 3)
            // Every snapshot is delivered, in order.
            #expect(updates.dropFirst().map { (($0.views[.basicPeer(Self.alice)] as? BasicPeerView)?.peer as? TestUser)?.firstName } == ["A", "B"])
            #expect(!recorder.sawPostboxQueue)

            disposable.dispose()
            disposable.dispose()
            try await postbox.transaction { tx in try tx.updatePeers([Self.alice("C")]) }
            try await waitForLiveViewCount(postbox, baseline)
            #expect(postbox.liveViewCount == baseline)
            try await Task.sleep(for: .milliseconds(50))
            #expect(recorder.count == 3)
        }
    }

    @Test func disposingAtOnceLeavesNoView() async throws {
        try await withPostbox("immediate") { postbox in
            let baseline = postbox.liveViewCount
            let recorder = ViewRecorder()
            for _ in 0..<20 {
                postbox.combinedView(keys: [.basicPeer(Self.alice), .contacts(includePresences: true)], onNext: { recorder.record($0) }, onError: { recorder.recordError($0) }).dispose()
            }
            // Registration and removal run on the queue in order; a transaction after them sees neither.
            try await postbox.transaction { tx in try tx.updatePeers([Self.alice("A")]) }
            try await waitForLiveViewCount(postbox, baseline)
            #expect(postbox.liveViewCount == baseline)
            try await Task.sleep(for: .milliseconds(50))
            // At most the first snapshot of a registration that ran before its dispose; never an update.
            #expect(recorder.count <= 20)
        }
    }

    @Test func aBlockedConsumerDoesNotBlockThePostboxQueue() async throws {
        try await withPostbox("blocked") { postbox in
            let recorder = ViewRecorder()
            let gate = DispatchSemaphore(value: 0)
            let disposable = postbox.combinedView(keys: [.basicPeer(Self.alice)], onNext: { view in
                recorder.record(view)
                if recorder.count == 1 { gate.wait() }
            }, onError: { recorder.recordError($0) })
            _ = try await recorder.waitFor(count: 1)
            // The consumer is stuck in its first callback; transactions still run and commit.
            for name in ["A", "B"] { try await postbox.transaction { tx in try tx.updatePeers([Self.alice(name)]) } }
            let name = try await postbox.transaction { tx in (try tx.getPeer(Self.alice) as? TestUser)?.firstName }
            #expect(name == "B")
            #expect(recorder.count == 1)
            gate.signal()
            let all = try await recorder.waitFor(count: 3)
            #expect(((all.last?.views[.basicPeer(Self.alice)] as? BasicPeerView)?.peer as? TestUser)?.firstName == "B")
            disposable.dispose()
        }
    }

    @Test func cancellingAStreamTaskUnregistersItsViews() async throws {
        try await withPostbox("cancel") { postbox in
            let baseline = postbox.liveViewCount
            let stream = postbox.combinedView(keys: [.unsentMessages, .isContact(Self.alice)])
            let task = Task {
                var received = 0
                for try await _ in stream { received += 1 }
                return received
            }
            try await waitForLiveViewCount(postbox, baseline + 1)
            #expect(postbox.liveViewCount == baseline + 1)
            task.cancel()
            let received = try await task.value
            #expect(received >= 1)
            try await waitForLiveViewCount(postbox, baseline)
            #expect(postbox.liveViewCount == baseline)
            // A stream cancelled before its registration ran registers nothing.
            let early = Task { for try await _ in postbox.combinedView(keys: [.unsentMessages]) {} }
            early.cancel()
            try await early.value
            try await postbox.transaction { _ in }
            try await waitForLiveViewCount(postbox, baseline)
            #expect(postbox.liveViewCount == baseline)
        }
    }

    /// Registrations stay in order without sorting; a consumer may add and remove registrations while the
    /// tracker notifies, and a removed one is not notified afterwards.
    @Test func registrationsMayChangeWhileTheTrackerNotifies() async throws {
        try await withPostbox("reentrant") { postbox in
            final class Log: @unchecked Sendable { var entries: [String] = []; var ids: [String: Int] = [:] }
            let log = Log()
            let key = PostboxViewKey.basicPeer(Self.alice)
            try await postbox.onQueue {
                try postbox.runTransaction { tx in
                    let tables = try tx.tables
                    let tracker = postbox.viewTracker
                    for name in ["a", "b", "c", "d"] {
                        log.ids[name] = tracker.add(keys: [key], tables: tables) { _ in
                            log.entries.append(name)
                            // "a", when notified, removes "c" and adds "e".
                            if name == "a", let c = log.ids.removeValue(forKey: "c") {
                                tracker.remove(c, tables: tables)
                                log.ids["e"] = tracker.add(keys: [key], tables: tables) { _ in log.entries.append("e") }
                            }
                        }
                    }
                    // Remove "b" and add "f": order stays that of registration.
                    tracker.remove(log.ids.removeValue(forKey: "b")!, tables: tables)
                    log.ids["f"] = tracker.add(keys: [key], tables: tables) { _ in log.entries.append("f") }
                    log.entries.removeAll()
                }
            }
            try await postbox.transaction { tx in try tx.updatePeers([Self.alice("A")]) }
            let first = try await postbox.onQueue { log.entries }
            // "a" (which removed "c" — still notified this round, from the copy — and added "e", whose first
            // snapshot is logged), then "c", "d", "f".
            #expect(first == ["a", "e", "c", "d", "f"])
            try await postbox.onQueue { log.entries.removeAll() }
            // Registration order: "a", "d", "f", then "e" (added during the last notification).
            try await postbox.transaction { tx in try tx.updatePeers([Self.alice("B")]) }
            #expect(try await postbox.onQueue { log.entries } == ["a", "d", "f", "e"])
            #expect(postbox.liveViewCount == 4)
            // Many removals compact the slots without changing the order.
            try await postbox.onQueue {
                try postbox.runTransaction { tx in
                    let tables = try tx.tables
                    let tracker = postbox.viewTracker
                    var extra: [Int] = []
                    for _ in 0..<40 { extra.append(tracker.add(keys: [key], tables: tables) { _ in }) }
                    for id in extra.reversed() { tracker.remove(id, tables: tables) }
                    log.entries.removeAll()
                }
            }
            try await postbox.transaction { tx in try tx.updatePeers([Self.alice("C")]) }
            #expect(try await postbox.onQueue { log.entries } == ["a", "d", "f", "e"])
        }
    }
}

@Suite struct DisposableTests {
    @Test func actionDisposableRunsItsActionOnce() {
        final class Count: @unchecked Sendable { var value = 0 }
        let count = Count()
        let disposable = ActionDisposable { count.value += 1 }
        #expect(!disposable.isDisposed)
        disposable.dispose()
        disposable.dispose()
        #expect(disposable.isDisposed && count.value == 1)
    }
}
