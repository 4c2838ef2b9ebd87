/// Where added messages belong (Postbox's `AddMessagesLocation`, with Swift's lowerCamelCase case names).
public enum AddMessagesLocation: Sendable {
    /// Anywhere in history (for example a page fetched to fill a hole). Holes are not touched: the caller removes
    /// the range it fetched.
    case random
    /// The newest messages of their chats (for example real-time updates): for each (peer, namespace), every id
    /// from the lowest added id up to Int32.max−1 is known afterwards, so that range is removed from the holes
    /// of every space.
    case upperHistoryBlock

    /// Postbox's spelling of ``random``.
    @available(*, deprecated, renamed: "random")
    public static var Random: Self { .random }

    /// Postbox's spelling of ``upperHistoryBlock``.
    @available(*, deprecated, renamed: "upperHistoryBlock")
    public static var UpperHistoryBlock: Self { .upperHistoryBlock }
}
