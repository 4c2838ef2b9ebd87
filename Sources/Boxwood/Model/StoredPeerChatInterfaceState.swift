/// What a chat-list row shows of a chat's draft (Postbox's `ChatListEmbeddedState`, kept to the text and its date).
public struct ChatListEmbeddedState: Hashable, Sendable {
    /// The draft's text as the row shows it.
    public let text: String
    /// When the draft was last edited (seconds since 1970).
    public let timestamp: Int32

    public init(text: String, timestamp: Int32) {
        self.text = text
        self.timestamp = timestamp
    }
}

/// The app's per-chat interface state (Postbox's `StoredPeerChatInterfaceState`): the draft, where the chat was
/// scrolled to, and whatever else the app keeps in `data`. Stored by
/// ``Transaction/setPeerChatInterfaceState(_:state:)`` in table 67.
public struct StoredPeerChatInterfaceState: Hashable, Sendable {
    /// When set and newer than the chat's top message, the chat-list places the chat at this time instead (a fresh
    /// draft moves the chat up); see ``ChatListIndex``.
    public var overrideChatTimestamp: Int32?
    /// The message the chat was scrolled to, nil for the bottom.
    public var historyScrollMessageIndex: MessageIndex?
    /// Messages the state refers to (for example the one a draft replies to).
    public var associatedMessageIds: [MessageId]
    /// The app's own encoding of the rest of its state; opaque to Boxwood.
    public var data: [UInt8]
    /// What the chat list shows of the draft, nil when there is none.
    public var chatListEmbeddedState: ChatListEmbeddedState?

    public init(overrideChatTimestamp: Int32? = nil, historyScrollMessageIndex: MessageIndex? = nil,
                associatedMessageIds: [MessageId] = [], data: [UInt8] = [], chatListEmbeddedState: ChatListEmbeddedState? = nil) {
        self.overrideChatTimestamp = overrideChatTimestamp
        self.historyScrollMessageIndex = historyScrollMessageIndex
        self.associatedMessageIds = associatedMessageIds
        self.data = data
        self.chatListEmbeddedState = chatListEmbeddedState
    }
}
