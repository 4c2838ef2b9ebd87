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
    /// Peer namespaces whose messages go into the full-text index.
    public var peerNamespacesRequiringMessageTextIndex: Set<PeerId.Namespace>

    public init(initializeChatListWithHole: (topLevel: ChatListHole?, groups: ChatListHole?) = (nil, nil),
                messageHoles: [PeerId.Namespace: [MessageId.Namespace: Set<MessageTags>]] = [:],
                defaultMessageNamespaceReadStates: [MessageId.Namespace: PeerReadState] = [:],
                chatMessagesNamespaces: Set<MessageId.Namespace> = [0],
                peerNamespacesRequiringMessageTextIndex: Set<PeerId.Namespace> = []) {
        self.initializeChatListWithHole = initializeChatListWithHole
        self.messageHoles = messageHoles
        self.defaultMessageNamespaceReadStates = defaultMessageNamespaceReadStates
        self.chatMessagesNamespaces = chatMessagesNamespaces
        self.peerNamespacesRequiringMessageTextIndex = peerNamespacesRequiringMessageTextIndex
    }
}
