/// One change to a chat list group, in the order the views apply them (Postbox's `ChatListOperation`).
public enum ChatListOperation: Hashable, Sendable {
    /// A chat was listed at `index` with its top message (nil for a pinned or `minTimestamp` chat without one).
    case insertEntry(ChatListIndex, MessageIndex?)
    /// A hole was added.
    case insertHole(ChatListHole)
    /// Chats were unlisted from these indices.
    case removeEntry([ChatListIndex])
    /// Holes were removed.
    case removeHoles([ChatListHole])
}
