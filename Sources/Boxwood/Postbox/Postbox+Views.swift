import Foundation

/// Live views: a query over ``PostboxViewKey``s whose snapshots follow the database. Two consumer forms share
/// one registration mechanism: an `AsyncStream` and a callback with a ``Disposable``.
extension Postbox {
    /// A live query over `keys`: the first element is the current snapshot, then a new one after every
    /// transaction (of this Postbox, or of another process — a commit there wakes this Postbox's watcher through
    /// the shared header, well under a millisecond on Linux) that changed something the views show, and only then. Snapshots are never queued behind each
    /// other (a slow consumer gets the newest), so delivery never blocks the Postbox queue. Ending the
    /// iteration (or cancelling its task) unregisters the views. The stream ends when the Postbox closes, and
    /// at once when the views cannot be built (for example after ``close()``).
    public func combinedView(keys: [PostboxViewKey]) -> AsyncStream<CombinedView> {
        AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let subscription = subscribeViews(keys: keys, emit: { continuation.yield($0) }, ended: { continuation.finish() })
            continuation.onTermination = { _ in subscription.dispose() }
        }
    }

    /// A live query over `keys` delivered to `onNext`: first the current snapshot, then one after every
    /// transaction (of this Postbox or another process) that changed something the views show. Every snapshot
    /// is delivered, in order, on a serial queue of this subscription (never on the Postbox queue, which only
    /// enqueues it). ``Disposable/dispose()`` unregisters the views; no delivery starts after it returns. The
    /// views stay live until then, whether or not the disposable is kept, or until the Postbox closes. Nothing
    /// is delivered when the views cannot be built (for example after ``close()``).
    public func combinedView(keys: [PostboxViewKey], onNext: @escaping @Sendable (CombinedView) -> Void) -> any Disposable {
        let delivery = DispatchQueue(label: "org.boxwood.postbox.view-delivery")
        let subscription = ViewSubscription(postbox: self)
        subscription.start(keys: keys, emit: { view in
            delivery.async {
                guard !subscription.isDisposed else { return }
                onNext(view)
            }
        }, ended: nil)
        return subscription
    }

    /// The number of live view registrations (views whose consumers went away are gone).
    public var liveViewCount: Int { Postbox.syncOnQueue { viewTracker.count } }

    /// Registers views for `keys` on the queue; `emit` gets every snapshot there.
    private func subscribeViews(keys: [PostboxViewKey], emit: @escaping @Sendable (CombinedView) -> Void,
                                ended: (@Sendable () -> Void)?) -> ViewSubscription {
        let subscription = ViewSubscription(postbox: self)
        subscription.start(keys: keys, emit: emit, ended: ended)
        return subscription
    }
}

/// One consumer's registration of live views. Created anywhere; registers and unregisters on the Postbox
/// queue, so a ``dispose()`` that comes before the registration ran simply prevents it.
final class ViewSubscription: Disposable, @unchecked Sendable {
    private weak var postbox: Postbox?
    /// Set by ``dispose()`` from any thread (under the lock).
    private var disposed = false
    private let lock = NSLock()
    /// The tracker's id of the registration; touched only on the Postbox queue.
    private var registrationId: Int?

    init(postbox: Postbox) {
        self.postbox = postbox
    }

    var isDisposed: Bool { lock.withLock { disposed } }

    /// Builds and registers the views on the Postbox queue (unless disposed by then). `ended` runs when the
    /// views cannot be built or registered, and when the Postbox closes while they are live.
    func start(keys: [PostboxViewKey], emit: @escaping @Sendable (CombinedView) -> Void, ended: (@Sendable () -> Void)?) {
        Postbox.queue.async { [self] in
            guard let postbox, !isDisposed else { return }
            // Watch before the views are built: a commit of another process after that is then seen.
            postbox.watchExternalChanges()
            do {
                try postbox.runTransaction { tx in
                    registrationId = try postbox.viewTracker.add(keys: keys, tables: try tx.tables, emit: emit, end: ended)
                }
            } catch {
                // The views may have been registered before the commit failed: they go with the failure.
                if let id = registrationId {
                    registrationId = nil
                    postbox.viewTracker.remove(id, tables: postbox.tables)
                }
                postbox.stopWatchingExternalChangesIfUnused()
                ended?()
            }
        }
    }

    func dispose() {
        let first = lock.withLock { () -> Bool in
            defer { disposed = true }
            return !disposed
        }
        guard first else { return }
        Postbox.queue.async { [self] in
            guard let id = registrationId, let postbox else { return }
            registrationId = nil
            postbox.viewTracker.remove(id, tables: postbox.tables)
            postbox.stopWatchingExternalChangesIfUnused()
        }
    }
}
