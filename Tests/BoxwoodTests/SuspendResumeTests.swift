import Foundation
import Testing
@testable import Boxwood
#if canImport(Glibc)
import Glibc
#endif

/// `Postbox.suspend()` / `resume()`, as an app's background handler calls them: the transaction in flight finishes
/// first, nothing runs while suspended, no file lock is held, and live views catch up at resume with what other
/// processes committed meanwhile — to exactly what a fresh open shows.
@Suite(.timeLimit(.minutes(2))) struct SuspendResumeTests {
    init() throws { try registerViewTestTypes() }

    static let alice = TestUser(id: peer(0, 1), firstName: "Alice", lastName: "A", username: nil)
    static let bob = TestUser(id: peer(0, 2), firstName: "Bob", lastName: "B", username: "bob")

    func temporaryPath(_ tag: String) -> String {
        NSTemporaryDirectory() + "bw-suspend-\(tag)-\(UUID().uuidString)"
    }

    @Test func suspendWaitsForTheTransactionInFlightThenRefusesTransactions() async throws {
        let path = temporaryPath("in-flight")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path)
        let started = Gate()
        let inFlight = Task {
            try await postbox.transaction { tx in
                started.open()
                Thread.sleep(forTimeInterval: 0.3)
                try tx.updatePeers([Self.alice])
            }
        }
        await started.wait()
        try await postbox.suspend()
        // suspend returned after the transaction committed (it ran to its end, it was not cut off).
        try await inFlight.value
        await #expect(throws: PostboxError.suspended) { try await postbox.transaction { _ in } }
        try await postbox.resume()
        let stored = try await postbox.transaction { tx in try tx.getPeer(Self.alice.id) as? TestUser }
        #expect(stored == Self.alice)
        try await postbox.close()
    }

    @Test func viewsAfterResumeEqualAFreshOpen() async throws {
        let path = temporaryPath("views")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let app = try await Postbox.open(path: path)
        let ext = try await Postbox.open(path: path)   // another process's Postbox on the same database
        try await ext.transaction { tx in try tx.updatePeers([Self.bob]) }
        let keys: [PostboxViewKey] = [.basicPeer(Self.alice.id), .basicPeer(Self.bob.id)]
        var views = app.combinedView(keys: keys).makeAsyncIterator()
        _ = try await views.next()
        try await app.suspend()
        // Suspended with a live view registered: no file lock on the database.
        if FileManager.default.fileExists(atPath: "/proc/locks") {
            let held = try heldLocks(path)
            #expect(held.isEmpty, "\(held)")
        }
        // The extension writes while the app sleeps.
        let renamed = TestUser(id: Self.bob.id, firstName: "Robert", lastName: "B", username: "bob")
        try await ext.transaction { tx in try tx.updatePeers([Self.alice, renamed]) }
        try await app.resume()
        var latest = try await views.next()
        while fingerprint(latest, keys) != "Alice/Robert" {
            latest = try await views.next()
            if latest == nil { break }
        }
        let fresh = try await Postbox.open(path: path)
        var freshViews = fresh.combinedView(keys: keys).makeAsyncIterator()
        let freshView = try await freshViews.next()
        #expect(fingerprint(latest, keys) == fingerprint(freshView, keys))
        #expect(fingerprint(freshView, keys) == "Alice/Robert")
        try await fresh.close()
        try await ext.close()
        try await app.close()
    }

    private func fingerprint(_ view: CombinedView?, _ keys: [PostboxViewKey]) -> String {
        keys.map { key in ((view?.views[key] as? BasicPeerView)?.peer as? TestUser)?.firstName ?? "-" }.joined(separator: "/")
    }

    /// /proc/locks lines on the database's files (Linux).
    private func heldLocks(_ path: String) throws -> [String] {
        var inodes: Set<String> = []
        for name in ["data", "wal", "header"] {
            var info = stat()
            if stat(path + "/" + name, &info) == 0 { inodes.insert(String(info.st_ino)) }
        }
        return try String(contentsOfFile: "/proc/locks", encoding: .utf8).split(separator: "\n").filter { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count > 5 && fields[5].split(separator: ":").last.map { inodes.contains(String($0)) } == true
        }.map(String.init)
    }
}

/// Opens once; waiters return after that.
private final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func open() {
        let waiting = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            isOpen = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = lock.withLock { () -> Bool in
                if isOpen { return true }
                waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
