/// Why one live view failed: its key and the error that stopped it (Postbox's views have no such thing — a
/// failing view there ends silently).
///
/// A view fails when it cannot be built (for example a stored peer whose type is not registered with
/// `declareEncodable` in this process) or cannot follow a change. It fails alone: the other keys of the same
/// request keep their views and go on updating (``CombinedView/failures`` lists it from then on), and the writer's
/// transaction is not affected. A failed view stays failed; subscribe again to retry.
public struct PostboxViewError: Error, Sendable, CustomStringConvertible {
    /// The view that failed.
    public let key: PostboxViewKey
    /// What stopped it: a `BoxwoodError` (the engine), a `PostboxDecodingError` (a stored value), or another
    /// error of the layer that built the view.
    public let underlying: any Error

    public init(key: PostboxViewKey, underlying: any Error) {
        self.key = key
        self.underlying = underlying
    }

    public var description: String { "live view \(key) failed: \(underlying)" }
}
