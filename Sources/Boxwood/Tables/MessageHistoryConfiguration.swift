/// What the history tables need from Postbox's `SeedConfiguration`.
struct MessageHistoryConfiguration: Sendable {
    /// `SeedConfiguration.messageHoles`: the holes a peer's history starts with (1…Int32.max−1 in the everywhere
    /// space of each namespace, and in the space of each listed tag), by peer namespace.
    var messageHoles: [PeerId.Namespace: [MessageId.Namespace: Set<MessageTags>]] = [:]
    /// `SeedConfiguration.defaultMessageNamespaceReadStates`: read states a peer without stored ones starts with.
    var defaultMessageNamespaceReadStates: [MessageId.Namespace: PeerReadState] = [:]
    /// `SeedConfiguration.chatMessagesNamespaces`: the namespaces whose messages can be a chat's top message in
    /// the chat list (nil: every namespace).
    var chatMessagesNamespaces: Set<MessageId.Namespace>? = nil
    /// Namespace pairs whose message ids are account-wide (see ``GlobalMessageIdsNamespace``).
    var globalMessageIdsNamespaces: Set<GlobalMessageIdsNamespace> = []
    /// The inclusion of a peer that has no stored chat-list entry. Postbox starts every peer `.notIncluded` and
    /// lets the app include it; Boxwood's default lists a peer in the root group once it has messages.
    var defaultInclusion: PeerChatListInclusion = .ifHasMessagesOrOneOf(groupId: .root, pinningIndex: nil, minTimestamp: nil)
    /// `SeedConfiguration.messageTagsWithSummary`: the tag bits counted per chat and namespace (table 44).
    var messageTagsWithSummary: MessageTags = []
    /// `SeedConfiguration.chatListMentionTag`: the summary a chat-list row shows as its mention count.
    var chatListMentionTag: MessageTags? = nil
    /// Whether message text is put in the full-text index (table 41).
    var indexMessageText = true

    init() {}
}
