/// Snapshots of several views taken after the same transaction, and the views of the request that failed.
///
/// Read a view with its typed query — `combined[.chatList(count: 50)]` is a `ChatListView?` — or through
/// ``views`` by key. A key is in exactly one of ``views`` and ``failures``.
public struct CombinedView: Sendable {
    /// The snapshot of every view that is live, by key.
    public let views: [PostboxViewKey: any PostboxView]
    /// The views that failed (``PostboxViewError``), by key; they stay here in every later snapshot.
    public let failures: [PostboxViewKey: PostboxViewError]

    public init(views: [PostboxViewKey: any PostboxView], failures: [PostboxViewKey: PostboxViewError] = [:]) {
        self.views = views
        self.failures = failures
    }

    /// The snapshot of `query`'s view; nil when the view failed (see ``failure(of:)``) or was not requested.
    public subscript<View: PostboxView>(_ query: PostboxViewQuery<View>) -> View? {
        // A query's key always builds its `View` (PostboxViewQuery pairs them), so the cast only fails for a
        // key that was not requested.
        views[query.key] as? View
    }

    /// The snapshot of `query`'s view, or the error that stopped it; nil when it was not requested.
    public func result<View: PostboxView>(_ query: PostboxViewQuery<View>) -> Result<View, PostboxViewError>? {
        if let failure = failures[query.key] { return .failure(failure) }
        return self[query].map { .success($0) }
    }

    /// Why the view of `key` failed; nil when it is live or was not requested.
    public func failure(of key: PostboxViewKey) -> PostboxViewError? { failures[key] }
}
