import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// Live views and `Postbox.close()`: closing ends every live stream (a consumer's `for await` returns), drops
/// every registration, and subscribing, disposing and committing from other tasks while the Postbox closes
/// neither crashes nor leaves a consumer waiting forever.
@Suite(.timeLimit(.minutes(2))) struct ViewCloseTests {
    init() throws { try registerViewTestTypes() }

    static let alice = peer(0, 1)

    func openPostbox(_ tag: String) async throws -> (Postbox, String) {
        let path = NSTemporaryDirectory() + "bw-view-close-\(tag)-\(UUID().uuidString)"
        return (try await Postbox.open(path: path), path)
    }

    /// Polls `done` for up to `seconds`; true when it became true.
    func eventually(seconds: Double = 5, _ done: () -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !done() {
            if Date() > deadline { return false }
            try await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    @Test func closeEndsLiveStreamsAndDropsTheirViews() async throws {
        let (postbox, path) = try await openPostbox("ends")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let ended = Flags(count: 3)
        let keys: [[PostboxViewKey]] = [[.basicPeer(Self.alice)], [.unsentMessages, .isContact(Self.alice)], [.contacts(includePresences: true)]]
        var tasks: [Task<Int, any Error>] = []
        for (i, keys) in keys.enumerated() {
            let stream = postbox.combinedView(keys: keys)
            tasks.append(Task {
                var received = 0
                // Closing ends the stream without an error.
                for try await _ in stream { received += 1 }
                ended.set(i)
                return received
            })
        }
        let callbacks = ViewRecorder()
        let disposable = postbox.combinedView(keys: [.basicPeer(Self.alice)], onNext: { callbacks.record($0) }, onError: { callbacks.recordError($0) })
        #expect(try await eventually { postbox.liveViewCount == 4 })
        _ = try await callbacks.waitFor(count: 1)

        try await postbox.close()
        #expect(try await eventually { ended.all }, "a live stream did not end when the Postbox closed")
        for task in tasks { #expect(try await task.value >= 1) }
        #expect(postbox.liveViewCount == 0)
        // Nothing reaches a callback consumer after close, and disposing afterwards is harmless.
        try await Task.sleep(for: .milliseconds(50))
        #expect(callbacks.count == 1)
        disposable.dispose()

        // A view asked for after close: the stream throws `.closed` at once, the callback form gets it in `onError`
        // and never a snapshot.
        var late = 0
        await #expect(throws: PostboxError.closed) {
            for try await _ in postbox.combinedView(keys: [.basicPeer(Self.alice)]) { late += 1 }
        }
        #expect(late == 0)
        await #expect(throws: PostboxError.closed) {
            for try await _ in postbox.view(.basicPeer(Self.alice)) { late += 1 }
        }
        let lateCallbacks = ViewRecorder()
        _ = postbox.combinedView(keys: [.basicPeer(Self.alice)], onNext: { lateCallbacks.record($0) }, onError: { lateCallbacks.recordError($0) })
        #expect(try await eventually { lateCallbacks.errors.count == 1 })
        #expect(lateCallbacks.errors.first as? PostboxError == .closed)
        #expect(lateCallbacks.count == 0 && postbox.liveViewCount == 0)
    }

    /// Tasks subscribe (both forms), dispose, cancel and commit while another task closes the Postbox at a
    /// random moment. Every stream must end, no view may stay registered, nothing may crash. The seed is
    /// printed; `BOXWOOD_VIEW_CLOSE_SEED` replays one round.
    @Test func subscribingAndCommittingWhileClosing() async throws {
        let rounds = ProcessInfo.processInfo.environment["BOXWOOD_VIEW_CLOSE_ROUNDS"].flatMap(Int.init) ?? 12
        let fixed = ProcessInfo.processInfo.environment["BOXWOOD_VIEW_CLOSE_SEED"].flatMap(UInt64.init)
        let base = fixed ?? UInt64.random(in: 1...1_000_000)
        print("ViewCloseTests: seed \(base) (BOXWOOD_VIEW_CLOSE_SEED=\(base) replays it)")
        for round in 0..<(fixed == nil ? rounds : 1) {
            let seed = base &+ UInt64(round)
            let (postbox, path) = try await openPostbox("race-\(seed)")
            defer { try? FileManager.default.removeItem(atPath: path) }
            var rng = SplitMix64(seed: seed)
            let closeAfter = Int(rng.next() % 40)
            let streamsEnded = Counter()
            let streamsStarted = Counter()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    let workerSeed = rng.next()
                    group.addTask {
                        var rng = SplitMix64(seed: workerSeed)
                        for step in 0..<30 {
                            switch rng.next() % 4 {
                            case 0:
                                // A stream consumed for a few snapshots, or until it ends.
                                let stream = postbox.combinedView(keys: [.basicPeer(Self.alice), .contacts(includePresences: false)])
                                let limit = Int(rng.next() % 3)
                                streamsStarted.add()
                                Task {
                                    var received = 0
                                    do {
                                        for try await _ in stream {
                                            received += 1
                                            if received > limit { break }
                                        }
                                    } catch PostboxError.closed {
                                        // Subscribed after the close: the stream says so.
                                    } catch {
                                        Issue.record("seed \(seed): a stream failed with \(error)")
                                    }
                                    streamsEnded.add()
                                }
                            case 1:
                                let disposable = postbox.combinedView(keys: [.basicPeer(Self.alice)], onNext: { _ in }, onError: { _ in })
                                if rng.next() % 2 == 0 { disposable.dispose() }
                            case 2:
                                let stream = postbox.combinedView(keys: [.unsentMessages])
                                streamsStarted.add()
                                let task = Task {
                                    do {
                                        for try await _ in stream {}
                                    } catch PostboxError.closed {
                                        // Subscribed after the close.
                                    } catch {
                                        Issue.record("seed \(seed): a stream failed with \(error)")
                                    }
                                    streamsEnded.add()
                                }
                                if rng.next() % 2 == 0 { task.cancel() }
                            default:
                                do {
                                    try await postbox.transaction { tx in
                                        try tx.updatePeers([TestUser(id: Self.alice, firstName: "w\(worker)s\(step)", lastName: "", username: nil)])
                                    }
                                } catch PostboxError.closed {
                                    // Expected once the Postbox is closed.
                                }
                            }
                            await Task.yield()
                        }
                    }
                }
                group.addTask {
                    for _ in 0..<closeAfter { await Task.yield() }
                    try await postbox.close()
                }
                try await group.waitForAll()
            }
            #expect(try await eventually { streamsEnded.value == streamsStarted.value },
                    "seed \(seed): \(streamsStarted.value - streamsEnded.value) streams still open after close")
            #expect(postbox.liveViewCount == 0, "seed \(seed): views still registered after close")
        }
    }
}

/// A thread-safe counter for tasks of a test.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// Thread-safe flags, one per index.
private final class Flags: @unchecked Sendable {
    private let lock = NSLock()
    private var flags: [Bool]
    init(count: Int) { flags = [Bool](repeating: false, count: count) }
    func set(_ i: Int) { lock.withLock { flags[i] = true } }
    var all: Bool { lock.withLock { flags.allSatisfy { $0 } } }
}
