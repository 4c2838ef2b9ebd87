import BoxwoodStore
import Foundation
import InMemoryLogging
import Logging
import Testing
@testable import Boxwood

/// Errors of live views reach the consumer (issue 23): a view that cannot be built or cannot follow a change fails
/// alone with a `PostboxViewError` naming its key, the other keys of the request stay live, the writer's
/// transaction commits, and a view that no longer follows other processes is stopped with the reason.
@Suite(.timeLimit(.minutes(2))) struct ViewFailureTests {
    init() throws { try registerViewTestTypes() }

    struct Injected: Error, Equatable { let key: PostboxViewKey }

    static let alice = peer(0, 1)
    static let companion = PostboxViewKey.preferences(keys: [ValueBoxKey("companion")])

    /// One key of every view kind. The switch in `kind(of:)` is exhaustive, so a new kind fails to compile until it
    /// is added here.
    static let everyKind: [PostboxViewKey] = {
        let keys: [PostboxViewKey] = [
            .postboxState, .basicPeer(alice), .preferences(keys: [ValueBoxKey("other")]),
            .peerMergedOperationLog(tag: PeerOperationLogTag(3), limit: 10), .totalUnreadState(groupId: .root),
            .combinedReadState(peerId: alice), .messageHistory(peerId: alice, namespace: 0, anchor: nil, count: 10, tag: nil),
            .chatList(groupId: .root, anchor: nil, count: 10), .messageHistoryHoles, .chatListHoles, .peer(alice, components: [.cachedData]),
            .peerChatState(alice), .cachedPeerData(alice), .peerPresences([alice]), .peerNotificationSettings([alice]),
            .contacts(includePresences: true), .isContact(alice), .messages([MessageId(peerId: alice, namespace: 0, id: 1)]),
            .orderedItemList(id: 7), .unsentMessages,
        ]
        #expect(Set(keys.map(kind(of:))).count == 20, "one key of each of the 20 kinds")
        return keys
    }()

    static func kind(of key: PostboxViewKey) -> String {
        switch key {
        case .postboxState: "postboxState"
        case .basicPeer: "basicPeer"
        case .preferences: "preferences"
        case .peerMergedOperationLog: "peerMergedOperationLog"
        case .totalUnreadState: "totalUnreadState"
        case .combinedReadState: "combinedReadState"
        case .messageHistory: "messageHistory"
        case .chatList: "chatList"
        case .messageHistoryHoles: "messageHistoryHoles"
        case .chatListHoles: "chatListHoles"
        case .peer: "peer"
        case .peerChatState: "peerChatState"
        case .cachedPeerData: "cachedPeerData"
        case .peerPresences: "peerPresences"
        case .peerNotificationSettings: "peerNotificationSettings"
        case .contacts: "contacts"
        case .isContact: "isContact"
        case .messages: "messages"
        case .orderedItemList: "orderedItemList"
        case .unsentMessages: "unsentMessages"
        }
    }

    func withPostbox(_ tag: String, options: ValueBoxOptions = ValueBoxOptions(),
                     _ body: (Postbox, String) async throws -> Void) async throws {
        let path = NSTemporaryDirectory() + "bw-view-failure-\(tag)-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, options: options)
        try await body(postbox, path)
        try await postbox.close()
    }

    /// Makes `key`'s view fail at `operation` (on the Postbox queue, before any subscription of the test).
    func inject(_ postbox: Postbox, failing key: PostboxViewKey, at operation: ViewTracker.Operation) {
        postbox.syncOnQueue {
            postbox.viewTracker.injectedFailure = { candidate, current in
                candidate == key && current == operation ? Injected(key: key) : nil
            }
        }
    }

    func setCompanion(_ postbox: Postbox, _ value: Int) async throws {
        try await postbox.transaction { tx in try tx.setPreferencesEntry(key: ValueBoxKey("companion"), value: try CodableEntry(value)) }
    }

    func companionValue(_ combined: CombinedView) throws -> Int? {
        try ((combined.views[Self.companion] as? PreferencesView)?.values[ValueBoxKey("companion")] as? CodableEntry)?.get(Int.self)
    }

    func expectFailure(_ combined: CombinedView, of key: PostboxViewKey, sourceLocation: SourceLocation = #_sourceLocation) {
        let failure = combined.failure(of: key)
        #expect(failure?.key == key, sourceLocation: sourceLocation)
        #expect(failure?.underlying as? Injected == Injected(key: key), sourceLocation: sourceLocation)
        #expect(combined.views[key] == nil, "a failed key has no view", sourceLocation: sourceLocation)
        #expect("\(failure.map(String.init(describing:)) ?? "")".contains("failed"), sourceLocation: sourceLocation)
    }

    @Test("a view that cannot be built fails alone; the other key stays live", arguments: everyKind)
    func buildFailureFailsAlone(_ key: PostboxViewKey) async throws {
        try await withPostbox("build") { postbox, _ in
            inject(postbox, failing: key, at: .build)
            var views = postbox.combinedView(keys: [key, Self.companion]).makeAsyncIterator()
            let first = try #require(try await views.next())
            expectFailure(first, of: key)
            #expect(first.views[Self.companion] != nil)
            try await setCompanion(postbox, 1)
            let next = try #require(try await views.next())
            #expect(try companionValue(next) == 1, "the other key follows the commit")
            expectFailure(next, of: key)
            #expect(postbox.liveViewCount == 1)
        }
    }

    @Test("a view that cannot follow a change fails alone; the writer's transaction commits", arguments: everyKind)
    func updateFailureFailsAlone(_ key: PostboxViewKey) async throws {
        try await withPostbox("update") { postbox, _ in
            inject(postbox, failing: key, at: .update)
            var views = postbox.combinedView(keys: [key, Self.companion]).makeAsyncIterator()
            let first = try #require(try await views.next())
            #expect(first.failures.isEmpty && first.views[key] != nil)
            try await setCompanion(postbox, 1)
            let failed = try #require(try await views.next())
            expectFailure(failed, of: key)
            #expect(try companionValue(failed) == 1)
            let stored = try await postbox.transaction { tx in try tx.getPreferencesEntry(key: ValueBoxKey("companion")) as? CodableEntry }
            #expect(try stored?.get(Int.self) == 1, "the transaction that made the view fail committed")
            // The failed view is out of the updates: later commits reach the other key only.
            try await setCompanion(postbox, 2)
            let later = try #require(try await views.next())
            #expect(try companionValue(later) == 2)
            expectFailure(later, of: key)
        }
    }

    @Test("a typed view's stream throws the view's failure, naming its key")
    func typedStreamThrows() async throws {
        try await withPostbox("typed") { postbox, _ in
            let query = PostboxViewQuery.chatList(count: 10)
            inject(postbox, failing: query.key, at: .build)
            var received = 0
            do {
                for try await _ in postbox.view(query) { received += 1 }
                Issue.record("the stream ended without an error")
            } catch let error as PostboxViewError {
                #expect(error.key == query.key && error.underlying as? Injected == Injected(key: query.key))
            }
            #expect(received == 0)

            // Failing at an update: the snapshots before it arrive, then the error.
            let history = PostboxViewQuery.messageHistory(peerId: Self.alice, count: 5)
            inject(postbox, failing: history.key, at: .update)
            var stream = postbox.view(history).makeAsyncIterator()
            let first = try await stream.next()
            #expect(first?.entries.isEmpty == true)
            try await setCompanion(postbox, 1)
            await #expect(throws: PostboxViewError.self) { _ = try await stream.next() }
            #expect(try await eventuallyNoViews(postbox), "a failed typed view unregisters")
        }
    }

    @Test("the callback form: a failing key shows in the snapshot, a typed callback gets onError once")
    func callbacksGetFailures() async throws {
        try await withPostbox("callbacks") { postbox, _ in
            let query = PostboxViewQuery.basicPeer(Self.alice)
            inject(postbox, failing: query.key, at: .update)
            let recorder = ViewRecorder()
            let combined = postbox.combinedView(keys: [query.key, Self.companion], onNext: { recorder.record($0) },
                                                onError: { recorder.recordError($0) })
            let typedRecorder = TypedRecorder()
            let typed = postbox.view(query, onNext: { typedRecorder.record($0) }, onError: { typedRecorder.recordError($0) })
            _ = try await recorder.waitFor(count: 1)
            try await setCompanion(postbox, 3)
            let all = try await recorder.waitFor(count: 2)
            expectFailure(all[1], of: query.key)
            #expect(try companionValue(all[1]) == 3)
            #expect(try await eventually { typedRecorder.errors == 1 })
            #expect(typedRecorder.views == 1)
            try await setCompanion(postbox, 4)
            try await Task.sleep(for: .milliseconds(50))
            #expect(typedRecorder.errors == 1 && typedRecorder.views == 1, "nothing after onError")
            #expect(recorder.errors.isEmpty, "a per-key failure is not a failure of the subscription")
            combined.dispose()
            typed.dispose()
        }
    }

    @Test("a failing view does not fail the transaction of a writer, nor other registrations")
    func otherRegistrationsAreUntouched() async throws {
        try await withPostbox("others") { postbox, _ in
            let failing = PostboxViewKey.unsentMessages
            inject(postbox, failing: failing, at: .update)
            var broken = postbox.combinedView(keys: [failing]).makeAsyncIterator()
            var healthy = postbox.view(.preferences(keys: [ValueBoxKey("companion")])).makeAsyncIterator()
            _ = try await broken.next()
            _ = try await healthy.next()
            try await setCompanion(postbox, 5)
            expectFailure(try #require(try await broken.next()), of: failing)
            let view = try #require(try await healthy.next())
            #expect(try (view.values[ValueBoxKey("companion")] as? CodableEntry)?.get(Int.self) == 5)
        }
    }

    @Test("when refreshing after another process's commit fails, every live view is stopped with the error")
    func watcherFailureStopsTheViews() async throws {
        var options = ValueBoxOptions()
        options.lockTimeout = 0.3
        try await withPostbox("watcher", options: options) { postbox, path in
            let stream = postbox.combinedView(keys: [Self.companion])
            let typed = postbox.view(.unsentMessages)
            var views = stream.makeAsyncIterator()
            var typedViews = typed.makeAsyncIterator()
            _ = try await views.next()
            _ = try await typedViews.next()
            // Another process commits while this Postbox's queue is busy, then holds the writer lock: the empty
            // transaction that refreshes the views waits for the lock and times out. (Done on the Postbox queue
            // itself, so that no thread of the test's cooperative pool is blocked.)
            // ValueBox is not Sendable: used on the Postbox queue, then (after that block ran) here.
            nonisolated(unsafe) let other = try ValueBox(path: path)
            defer { try? other.close() }
            postbox.queue.async {
                do {
                    try other.begin()
                    try other.set(ValueBoxTable(id: 1_000, keyType: .binary), key: ValueBoxKey("x"), value: MemoryBuffer([1]))
                    try other.commit()
                    usleep(100_000)  // the watcher wakes and queues its refresh behind this block
                    try other.begin()
                } catch {
                    Issue.record("the other value box failed: \(error)")
                }
            }
            await #expect(throws: BoxwoodError.self) { while try await views.next() != nil {} }
            await #expect(throws: BoxwoodError.self) { while try await typedViews.next() != nil {} }
            other.abort()
            #expect(try await eventuallyNoViews(postbox))
            // Subscribing again works: the watcher starts anew.
            var again = postbox.combinedView(keys: [Self.companion]).makeAsyncIterator()
            #expect(try await again.next()?.failures.isEmpty == true)
        }
    }

    @Test("a view failure is logged as a warning naming the view and the error")
    func viewFailureIsLogged() async throws {
        let key = PostboxViewKey.preferences(keys: [ValueBoxKey("logged-\(UUID().uuidString)")])
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        try await PostboxLog.factory.withHandler({ [handler] _ in handler }) {
            try await withPostbox("logged") { postbox, _ in
                inject(postbox, failing: key, at: .build)
                var views = postbox.combinedView(keys: [key]).makeAsyncIterator()
                expectFailure(try #require(try await views.next()), of: key)
            }
        }
        // Other suites may log meanwhile: look for this view.
        let entry = handler.entries.first { $0.metadata["view"]?.description == "\(key)" }
        #expect(entry?.level == .warning && entry?.metadata["error"]?.description.contains("Injected") == true, "\(handler.entries)")
    }

    func eventually(_ done: () -> Bool) async throws -> Bool {
        for _ in 0..<1_000 where !done() { try await Task.sleep(for: .milliseconds(5)) }
        return done()
    }

    func eventuallyNoViews(_ postbox: Postbox) async throws -> Bool { try await eventually { postbox.liveViewCount == 0 } }
}

/// Counts what a typed callback subscription delivers.
private final class TypedRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var viewCount = 0
    private var errorCount = 0
    func record(_ view: BasicPeerView) { lock.withLock { viewCount += 1 } }
    func recordError(_ error: any Error) { lock.withLock { errorCount += 1 } }
    var views: Int { lock.withLock { viewCount } }
    var errors: Int { lock.withLock { errorCount } }
}
