/// Where added messages belong (Postbox's `AddMessagesLocation`).
public enum AddMessagesLocation: Sendable {
    /// Anywhere in history (for example a page fetched to fill a hole). Holes are not touched: the caller removes
    /// the range it fetched.
    case Random
    /// The newest messages of their chats (for example real-time updates): for each (peer, namespace), every id
    /// from the lowest added id up to Int32.max−1 is known afterwards, so that range is removed from the holes
    /// of every space.
    case UpperHistoryBlock
}
