/// What a new database starts with and how the app's namespaces behave (Postbox's `SeedConfiguration`).
///
/// `SeedConfiguration()` gives a working single-namespace setup: chat messages in message namespace 0, counted
/// as unread until read (an empty read state for namespace 0), text indexed for search, no holes. Name the
/// namespaces of your app, and the read state each starts with, when they differ.
public struct SeedConfiguration: Sendable {
    /// The hole a new chat list starts with (the sync layer fetches the first page of dialogs when it sees it),
    /// for the root group (`topLevel`) and for the other groups (`groups`).
    ///
    /// Default `(nil, nil)`: no hole, the chat list is taken as complete — right for a database the app fills
    /// itself, wrong for one synced from a server, whose first dialogs would never be fetched.
    public var initializeChatListWithHole: (topLevel: ChatListHole?, groups: ChatListHole?)

    /// The message holes a chat gets when it is first seen: per peer namespace, per message namespace, the tag
    /// spaces to seed (`[]`, the empty ``MessageTags``, meaning everywhere) with the hole `1...Int32.max - 1`.
    ///
    /// Default `[:]`: no holes, a chat's history is taken as complete — right for a database the app fills
    /// itself; a synced app lists its namespaces here so that history views report what is still to be fetched.
    public var messageHoles: [PeerId.Namespace: [MessageId.Namespace: Set<MessageTags>]]

    /// The read state each message namespace starts with in a chat that has none stored yet. Only namespaces
    /// listed here keep read states: their incoming messages count as unread (per chat, and in the chat list's
    /// total unread state) until ``Transaction/applyIncomingReadMaxId(_:)`` reads them.
    ///
    /// Default: an empty id-based state (``PeerReadState/idBased(maxIncomingReadId:maxOutgoingReadId:maxKnownId:count:markedUnread:)``
    /// with every id and the count 0) for each of ``chatMessagesNamespaces``, see ``emptyReadStates(for:)``.
    /// Without a state for a namespace (`[:]` turns them all off), its messages are never counted as unread,
    /// ``Transaction/getCombinedPeerReadState(_:)`` returns nil for a chat without stored states, and
    /// ``Transaction/applyIncomingReadMaxId(_:)`` does nothing there.
    public var defaultMessageNamespaceReadStates: [MessageId.Namespace: PeerReadState]

    /// The message namespaces that hold a chat's messages: the chat list shows a chat's newest message of these
    /// namespaces as its top message, and (unless ``defaultMessageNamespaceReadStates`` is given) each of them
    /// gets a read state.
    ///
    /// Default `[0]`. A message in another namespace is stored and shown in history views, but never becomes the
    /// chat list's top message.
    public var chatMessagesNamespaces: Set<MessageId.Namespace>

    /// Whether message text goes into the full-text index (``Transaction/searchMessages(_:peerId:tags:)``).
    /// Postbox limits it to some peer namespaces; Boxwood indexes every chat or none.
    ///
    /// Default `true`. Without it, adding messages is faster and search finds nothing.
    public var indexMessageText: Bool

    /// (Peer namespace, message namespace) pairs whose message ids are account-wide, looked up by
    /// ``Transaction/getMessageId(globalId:)`` (Telegram's private chats and basic groups).
    ///
    /// Default `[]`: no namespace is account-wide, and `getMessageId(globalId:)` finds nothing.
    public var globalMessageIdsNamespaces: Set<GlobalMessageIdsNamespace>

    /// The tag bits counted per chat and message namespace (Postbox's `messageTagsWithSummary`, for example unread
    /// mentions): read with ``Transaction/getMessageTagSummary(peerId:tagMask:namespace:)``, set from the server with
    /// ``Transaction/replaceMessageTagSummary(peerId:tagMask:namespace:count:maxId:)``, shown in chat-list rows
    /// (``ChatListItem/tagSummaryCounts``).
    ///
    /// Default `[]`: nothing is counted. ``chatListMentionTag`` is always counted.
    public var messageTagsWithSummary: MessageTags

    /// The tag whose summary a chat-list row shows as ``ChatListItem/mentionCount`` (summed over
    /// ``chatMessagesNamespaces``).
    ///
    /// Default nil: rows show a mention count of 0.
    public var chatListMentionTag: MessageTags?

    /// A configuration; every parameter has the default its property describes.
    ///
    /// - Parameter defaultMessageNamespaceReadStates: nil (the default) for an empty read state in each of
    ///   `chatMessagesNamespaces`; `[:]` for none.
    public init(initializeChatListWithHole: (topLevel: ChatListHole?, groups: ChatListHole?) = (nil, nil),
                messageHoles: [PeerId.Namespace: [MessageId.Namespace: Set<MessageTags>]] = [:],
                defaultMessageNamespaceReadStates: [MessageId.Namespace: PeerReadState]? = nil,
                chatMessagesNamespaces: Set<MessageId.Namespace> = [0],
                indexMessageText: Bool = true, globalMessageIdsNamespaces: Set<GlobalMessageIdsNamespace> = [],
                messageTagsWithSummary: MessageTags = [], chatListMentionTag: MessageTags? = nil) {
        self.initializeChatListWithHole = initializeChatListWithHole
        self.messageHoles = messageHoles
        self.defaultMessageNamespaceReadStates = defaultMessageNamespaceReadStates ?? Self.emptyReadStates(for: chatMessagesNamespaces)
        self.chatMessagesNamespaces = chatMessagesNamespaces
        self.indexMessageText = indexMessageText
        self.globalMessageIdsNamespaces = globalMessageIdsNamespaces
        self.messageTagsWithSummary = messageTagsWithSummary
        self.chatListMentionTag = chatListMentionTag
    }

    /// An empty id-based read state — nothing read, nothing known, no unread message — for each of `namespaces`:
    /// the default of ``defaultMessageNamespaceReadStates``.
    public static func emptyReadStates(for namespaces: Set<MessageId.Namespace>) -> [MessageId.Namespace: PeerReadState] {
        Dictionary(uniqueKeysWithValues: namespaces.map {
            ($0, .idBased(maxIncomingReadId: 0, maxOutgoingReadId: 0, maxKnownId: 0, count: 0, markedUnread: false))
        })
    }
}

extension SeedConfiguration {
    /// What the message-history tables take from it.
    var historyConfiguration: MessageHistoryConfiguration {
        var configuration = MessageHistoryConfiguration()
        configuration.messageHoles = messageHoles
        configuration.defaultMessageNamespaceReadStates = defaultMessageNamespaceReadStates
        configuration.chatMessagesNamespaces = chatMessagesNamespaces
        configuration.globalMessageIdsNamespaces = globalMessageIdsNamespaces
        configuration.indexMessageText = indexMessageText
        configuration.messageTagsWithSummary = messageTagsWithSummary.union(chatListMentionTag ?? [])
        configuration.chatListMentionTag = chatListMentionTag
        return configuration
    }
}
