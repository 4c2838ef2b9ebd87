import Foundation

/// Live views: a query over ``PostboxViewKey``s whose snapshots follow the database. Two consumer forms share
/// one registration mechanism: an `AsyncThrowingStream` and callbacks with a ``Disposable``; each has a typed form
/// for one ``PostboxViewQuery`` and a combined form for several keys.
///
/// Errors reach the consumer. A view that cannot be built or cannot follow a change fails alone with a
/// ``PostboxViewError`` naming its key and cause: a typed stream throws it, a combined view lists it in
/// ``CombinedView/failures`` and keeps its other keys live. When the views cannot run at all — the Postbox is
/// closed or suspended when they start, or watching other processes' commits fails — the stream throws that error
/// (a `PostboxError` or `BoxwoodError`) and the callback form calls `onError`. Closing the Postbox ends the
/// streams without an error.
extension Postbox {
    /// A live view of one query: the first element is the current snapshot, then a new one after every transaction
    /// (of this Postbox, or of another process — a commit there wakes this Postbox's watcher through the shared
    /// header, well under a millisecond on Linux) that changed something the view shows, and only then. Snapshots
    /// are never queued behind each other (a slow consumer gets the newest), so delivery never blocks the Postbox
    /// queue. Ending the iteration (or cancelling its task) unregisters the view.
    ///
    /// - Throws (from the iteration): ``PostboxViewError`` when the view fails; ``PostboxError/closed`` or
    ///   ``PostboxError/suspended`` when the Postbox is in that state as the view starts; the `BoxwoodError` that
    ///   stopped watching other processes' commits. Ends without an error when the Postbox closes.
    public func view<View: PostboxView>(_ query: PostboxViewQuery<View>) -> AsyncThrowingStream<View, any Error> {
        AsyncThrowingStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let subscription = subscribeViews(keys: [query.key], emit: { combined in
                switch combined.result(query) {
                case let .success(view)?: continuation.yield(view)
                case let .failure(failure)?: continuation.finish(throwing: failure)
                case nil: break  // not reachable: the registration holds exactly this key, live or failed
                }
            }, ended: { continuation.finish(throwing: $0) })
            continuation.onTermination = { _ in subscription.dispose() }
        }
    }

    /// A live query over several `keys`, snapshots taken after the same transaction: as ``view(_:)``, except that
    /// a key whose view fails is listed in ``CombinedView/failures`` of this and every later snapshot while the
    /// other keys go on. Read each view with its typed query: `combined[.chatList(count: 50)]`.
    ///
    /// - Throws (from the iteration): as ``view(_:)``, except per-key failures, which are elements' data.
    public func combinedView(keys: [PostboxViewKey]) -> AsyncThrowingStream<CombinedView, any Error> {
        AsyncThrowingStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let subscription = subscribeViews(keys: keys, emit: { continuation.yield($0) }, ended: { continuation.finish(throwing: $0) })
            continuation.onTermination = { _ in subscription.dispose() }
        }
    }

    /// A live query over `keys` delivered to `onNext`: first the current snapshot, then one after every
    /// transaction (of this Postbox or another process) that changed something the views show; a key whose view
    /// fails is listed in ``CombinedView/failures`` from then on. Every snapshot is delivered, in order, on a
    /// serial queue of this subscription (never on the Postbox queue, which only enqueues it). `onError` gets the
    /// error when the views cannot run at all (as ``combinedView(keys:)`` throws it); nothing is delivered after
    /// it. ``Disposable/dispose()`` unregisters the views; no delivery starts after it returns. The views stay
    /// live until then, whether or not the disposable is kept, or until the Postbox closes.
    public func combinedView(keys: [PostboxViewKey], onNext: @escaping @Sendable (CombinedView) -> Void,
                             onError: @escaping @Sendable (any Error) -> Void) -> any Disposable {
        let delivery = DispatchQueue(label: "org.boxwood.postbox.view-delivery")
        let subscription = ViewSubscription(postbox: self)
        subscription.start(keys: keys, emit: { view in
            delivery.async {
                guard !subscription.isDisposed else { return }
                onNext(view)
            }
        }, ended: { error in
            guard let error else { return }
            delivery.async {
                guard !subscription.isDisposed else { return }
                onError(error)
            }
        })
        return subscription
    }

    /// A live view of one query delivered to `onNext`, as ``combinedView(keys:onNext:onError:)``; a failure of
    /// the view goes to `onError` (a ``PostboxViewError``) and ends the deliveries.
    public func view<View: PostboxView>(_ query: PostboxViewQuery<View>, onNext: @escaping @Sendable (View) -> Void,
                                        onError: @escaping @Sendable (any Error) -> Void) -> any Disposable {
        let ended = FailureLatch()
        return combinedView(keys: [query.key], onNext: { combined in
            switch combined.result(query) {
            case let .success(view)?: if !ended.isSet { onNext(view) }
            case let .failure(failure)?: if ended.set() { onError(failure) }
            case nil: break  // not reachable: the registration holds exactly this key, live or failed
            }
        }, onError: { error in if ended.set() { onError(error) } })
    }

    /// The number of live view registrations (views whose consumers went away are gone).
    public var liveViewCount: Int { syncOnQueue { viewTracker.count } }

    /// Registers views for `keys` on the queue; `emit` gets every snapshot there.
    private func subscribeViews(keys: [PostboxViewKey], emit: @escaping @Sendable (CombinedView) -> Void,
                                ended: @escaping @Sendable ((any Error)?) -> Void) -> ViewSubscription {
        let subscription = ViewSubscription(postbox: self)
        subscription.start(keys: keys, emit: emit, ended: ended)
        return subscription
    }
}

/// Set once, by whichever of a view's failure paths comes first, so `onError` runs once and nothing follows it.
/// `@unchecked Sendable`: its one flag is read and written only under `lock`.
private final class FailureLatch: @unchecked Sendable {
    private let lock = NSLock()
    private var wasSet = false

    var isSet: Bool { lock.withLock { wasSet } }

    /// Sets the latch; true for the call that set it.
    func set() -> Bool {
        lock.withLock {
            defer { wasSet = true }
            return !wasSet
        }
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

    /// Builds and registers the views on the Postbox queue (unless disposed by then). `ended` runs with nil when
    /// the Postbox closes while they are live, and with the error when they cannot be registered (the Postbox is
    /// closed, suspended or gone; the transaction failed) or are stopped by one (``ViewTracker/failAll(_:)``).
    func start(keys: [PostboxViewKey], emit: @escaping @Sendable (CombinedView) -> Void, ended: @escaping @Sendable ((any Error)?) -> Void) {
        guard let queue = postbox?.queue else {
            ended(PostboxError.closed)
            return
        }
        queue.async { [self] in
            if isDisposed { return }
            guard let postbox else {
                ended(PostboxError.closed)
                return
            }
            // Watch before the views are built: a commit of another process after that is then seen.
            postbox.watchExternalChanges()
            do {
                try postbox.runTransaction { tx in
                    registrationId = postbox.viewTracker.add(keys: keys, tables: try tx.tables, emit: emit, end: ended)
                }
            } catch {
                // The views may have been registered before the commit failed: they go with the failure.
                if let id = registrationId {
                    registrationId = nil
                    postbox.viewTracker.remove(id, tables: postbox.tables)
                }
                postbox.stopWatchingExternalChangesIfUnused()
                ended(error)
            }
        }
    }

    func dispose() {
        let first = lock.withLock { () -> Bool in
            defer { disposed = true }
            return !disposed
        }
        guard first else { return }
        guard let queue = postbox?.queue else { return }  // a Postbox that is gone has no views
        queue.async { [self] in
            guard let id = registrationId, let postbox else { return }
            registrationId = nil
            postbox.viewTracker.remove(id, tables: postbox.tables)
            postbox.stopWatchingExternalChangesIfUnused()
        }
    }
}
