/// What a new database starts with and how the app's namespaces behave (Postbox's `SeedConfiguration`).
public struct SeedConfiguration: Sendable {
    /// The hole a new chat list starts with (the sync layer fetches the first page of dialogs when it sees it),
    /// per group; nil: no hole.
    public var initializeChatListWithHole: (topLevel: ChatListHole?, groups: ChatListHole?)
    /// The message holes a peer gets when it is first seen: per peer namespace, per message namespace, the
    /// tag spaces to seed (`[]` meaning everywhere) with the hole `1...Int32.max - 1`.
    public var messageHoles: [PeerId.Namespace: [MessageId.Namespace: Set<MessageTags>]]
    /// The read state of a namespace for a peer that has none yet.
    public var defaultMessageNamespaceReadStates: [MessageId.Namespace: PeerReadState]
    /// The message namespaces that hold chat messages (count for unread counters and the chat list top).
    public var chatMessagesNamespaces: Set<MessageId.Namespace>
    /// Whether message text goes into the full-text index (Postbox limits it to some peer namespaces; Boxwood
    /// indexes every chat or none).
    public var indexMessageText: Bool
    /// (Peer namespace, message namespace) pairs whose message ids are account-wide (looked up by
    /// `Transaction.getMessageId(globalId:)`).
    public var globalMessageIdsNamespaces: Set<GlobalMessageIdsNamespace>

    public init(initializeChatListWithHole: (topLevel: ChatListHole?, groups: ChatListHole?) = (nil, nil),
                messageHoles: [PeerId.Namespace: [MessageId.Namespace: Set<MessageTags>]] = [:],
                defaultMessageNamespaceReadStates: [MessageId.Namespace: PeerReadState] = [:],
                chatMessagesNamespaces: Set<MessageId.Namespace> = [0],
                indexMessageText: Bool = true, globalMessageIdsNamespaces: Set<GlobalMessageIdsNamespace> = []) {
        self.initializeChatListWithHole = initializeChatListWithHole
        self.messageHoles = messageHoles
        self.defaultMessageNamespaceReadStates = defaultMessageNamespaceReadStates
        self.chatMessagesNamespaces = chatMessagesNamespaces
        self.indexMessageText = indexMessageText
        self.globalMessageIdsNamespaces = globalMessageIdsNamespaces
    }
}

extension SeedConfiguration {
    /// What the message-history tables take from it.
    var historyConfiguration: MessageHistoryConfiguration {
        var configuration = MessageHistoryConfiguration()
        configuration.messageHoles = messageHoles
        configuration.defaultReadStates = defaultMessageNamespaceReadStates
        configuration.chatMessagesNamespaces = chatMessagesNamespaces
        configuration.globalMessageIdsNamespaces = globalMessageIdsNamespaces
        configuration.indexMessageText = indexMessageText
        return configuration
    }
}
