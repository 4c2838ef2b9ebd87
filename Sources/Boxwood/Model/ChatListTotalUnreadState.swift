/// Unread totals of one chat-list group: unread incoming messages of the listed chats, and the number of
/// listed chats with something unread (a count or the manual mark). The `filtered` counters leave out the chats
/// whose notification settings remove them from the total (muted chats: `PeerNotificationSettings`'s
/// `isRemovedFromTotalUnreadCount`), as Postbox's filtered counters do: the number an app badge shows.
public struct ChatListTotalUnreadState: Hashable, Sendable, CustomStringConvertible {
    public var messageCount: Int64 = 0
    public var chatCount: Int64 = 0
    /// `messageCount` without the chats removed from the total unread count.
    public var filteredMessageCount: Int64 = 0
    /// `chatCount` without the chats removed from the total unread count.
    public var filteredChatCount: Int64 = 0

    public init(messageCount: Int64 = 0, chatCount: Int64 = 0, filteredMessageCount: Int64 = 0, filteredChatCount: Int64 = 0) {
        self.messageCount = messageCount
        self.chatCount = chatCount
        self.filteredMessageCount = filteredMessageCount
        self.filteredChatCount = filteredChatCount
    }

    /// The same counts in the absolute and the filtered counters (no chat removed from the total).
    public init(unfilteredMessageCount messages: Int64, chatCount chats: Int64) {
        self.init(messageCount: messages, chatCount: chats, filteredMessageCount: messages, filteredChatCount: chats)
    }

    public var isEmpty: Bool { messageCount == 0 && chatCount == 0 && filteredMessageCount == 0 && filteredChatCount == 0 }

    public var description: String {
        "(messages: \(messageCount), chats: \(chatCount), filtered messages: \(filteredMessageCount), filtered chats: \(filteredChatCount))"
    }

    /// Adds (`sign` 1) or subtracts (`sign` -1) every counter of `other` (wrapping: totals come from the file).
    mutating func add(_ other: ChatListTotalUnreadState, sign: Int64 = 1) {
        messageCount &+= sign &* other.messageCount
        chatCount &+= sign &* other.chatCount
        filteredMessageCount &+= sign &* other.filteredMessageCount
        filteredChatCount &+= sign &* other.filteredChatCount
    }
}
