/// Unread totals of one chat-list group: unread incoming messages of the listed chats, and the number of
/// listed chats with something unread (a count or the manual mark).
public struct ChatListTotalUnreadState: Hashable, Sendable, CustomStringConvertible {
    public var messageCount: Int64 = 0
    public var chatCount: Int64 = 0

    public var isEmpty: Bool { messageCount == 0 && chatCount == 0 }
    public var description: String { "(messages: \(messageCount), chats: \(chatCount))" }
}
