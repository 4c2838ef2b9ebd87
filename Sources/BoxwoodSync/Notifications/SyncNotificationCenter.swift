import Foundation

/// Hands each ``SyncNotification`` to every subscriber, each through a buffer of its own size.
///
/// Overflow policy: a subscriber's buffer keeps the newest notifications; when it is full the oldest one is dropped.
/// Sequence numbers are global, so the subscriber sees the jump and knows it missed some: the database has
/// everything, notifications only say what changed. A slow subscriber therefore never holds back the sync layer or
/// another subscriber, and never makes memory grow without bound.
final class SyncNotificationCenter: @unchecked Sendable {
    private let lock = NSLock()
    private var subscribers: [UUID: AsyncStream<SyncNotification>.Continuation] = [:]
    private var nextSequence: UInt64 = 1

    /// Whether anyone listens (the manager reads summaries only then).
    var hasSubscribers: Bool { lock.withLock { !subscribers.isEmpty } }

    func subscribe(bufferSize: Int) -> AsyncStream<SyncNotification> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: SyncNotification.self, bufferingPolicy: .bufferingNewest(max(1, bufferSize)))
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        lock.withLock { subscribers[id] = continuation }
        return stream
    }

    private func remove(_ id: UUID) {
        lock.withLock { _ = subscribers.removeValue(forKey: id) }
    }

    /// Numbers `kinds` and yields them to every subscriber, in order.
    func post(_ kinds: [SyncNotification.Kind]) {
        guard !kinds.isEmpty else { return }
        lock.withLock {
            for kind in kinds {
                let notification = SyncNotification(sequence: nextSequence, kind: kind)
                nextSequence += 1
                for continuation in subscribers.values { continuation.yield(notification) }
            }
        }
    }

    /// Ends every subscription (the manager stopped for good).
    func finish() {
        let all = lock.withLock { () -> [AsyncStream<SyncNotification>.Continuation] in
            defer { subscribers = [:] }
            return Array(subscribers.values)
        }
        for continuation in all { continuation.finish() }
    }
}
