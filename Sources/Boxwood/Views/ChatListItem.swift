/// One row of a chat list: a chat with its top message, or a hole the sync layer fills.
public enum ChatListEntry: Sendable {
    case chat(ChatListItem)
    case hole(ChatListHole)

    /// The row's position in its group.
    public var index: ChatListIndex {
        switch self {
        case let .chat(item): return item.index
        case let .hole(hole): return ChatListIndex(pinningIndex: nil, messageIndex: hole.index)
        }
    }
}

/// A chat as a chat-list row shows it (Postbox's `ChatListView` message entry): the peer, the top message
/// rendered (author, media, reply), the read state with the unread count, the notification settings that
/// apply, the draft (from the chat's interface state, table 67) and the tag counts such as unread mentions (from
/// the tag summaries, table 44) — everything a row renders, without another read.
public struct ChatListItem: Sendable {
    public let peerId: PeerId
    /// The row's position: pinning, then the top message's index (or the chat's minimum timestamp), with the
    /// timestamp of the interface state's ``StoredPeerChatInterfaceState/overrideChatTimestamp`` when that is later.
    public let index: ChatListIndex
    /// The chat and its ``Peer/associatedPeerId`` (for example the user of a secret chat), those that are stored.
    public let peers: [PeerId: any Peer]
    /// The newest message of the chat-message namespaces, rendered; nil for a chat listed without messages.
    public let topMessage: Message?
    /// The chat's read state, nil when it has none.
    public let readState: CombinedPeerReadState?
    /// The settings that apply: those of the peer's ``Peer/notificationSettingsPeerId``, else its own.
    public let notificationSettings: (any PeerNotificationSettings)?
    /// The draft as the row shows it: the ``StoredPeerChatInterfaceState/chatListEmbeddedState`` of the chat's
    /// interface state; nil without one.
    public let embeddedState: ChatListEmbeddedState?
    /// For each tag of ``SeedConfiguration/messageTagsWithSummary`` (one bit each), the chat's count summed over
    /// ``SeedConfiguration/chatMessagesNamespaces`` (0 when no summary is stored).
    public let tagSummaryCounts: [MessageTags: Int32]
    /// The count of ``SeedConfiguration/chatListMentionTag`` (unread mentions); 0 when no mention tag is configured.
    public let mentionCount: Int32

    /// The chat, if stored.
    public var peer: (any Peer)? { peers[peerId] }
    /// Whether the chat is pinned in its group.
    public var isPinned: Bool { index.pinningIndex != nil }
    /// Unread messages over the read state's namespaces.
    public var unreadCount: Int32 { readState?.count ?? 0 }
    /// Whether the user marked the chat unread.
    public var isMarkedUnread: Bool { readState?.markedUnread ?? false }

    /// Whether the row shows the same as `other` (peers and settings by `isEqual`, messages by version and what
    /// they resolve).
    func isSame(as other: ChatListItem) -> Bool {
        peerId == other.peerId && index == other.index && readState == other.readState
            && ViewValueComparison.same(peers, other.peers) { $0.isEqual($1) }
            && ViewValueComparison.same(topMessage, other.topMessage)
            && ViewValueComparison.same(notificationSettings, other.notificationSettings)
            && embeddedState == other.embeddedState && tagSummaryCounts == other.tagSummaryCounts && mentionCount == other.mentionCount
    }

    /// The peers whose change changes the row: the chat, its associated peer, the settings' peer, and those the
    /// top message resolves.
    var referencedPeerIds: [PeerId] {
        var ids = [peerId]
        if let id = peer?.associatedPeerId { ids.append(id) }
        if let id = peer?.notificationSettingsPeerId { ids.append(id) }
        if let topMessage { ids += topMessage.referencedPeerIds }
        return ids
    }
}

/// Builds chat-list rows from the chat-list table's entries.
struct ChatListItemLoader {
    let tables: PostboxTables

    /// Up to `count` (0: all) rows of `groupId` below `anchor` (nil: from the top), in display order.
    func entries(groupId: PeerGroupId, before anchor: ChatListIndex?, count: Int) throws -> [ChatListEntry] {
        let renderer = MessageRenderer(tables: tables)
        return try tables.history.chatList.earlierEntries(groupId: groupId, index: anchor, count: count).map { entry in
            switch entry {
            case let .message(index, top): return .chat(try item(index: index, top: top, renderer: renderer))
            case let .hole(hole): return .hole(hole)
            }
        }
    }

    private func item(index: ChatListIndex, top: MessageIndex?, renderer: MessageRenderer) throws -> ChatListItem {
        let peerId = index.messageIndex.id.peerId
        var peers: [PeerId: any Peer] = [:]
        let peer = try tables.peers.get(peerId)
        if let peer { peers[peerId] = peer }
        if let id = peer?.associatedPeerId, let associated = try tables.peers.get(id) { peers[id] = associated }
        let topMessage = try top.flatMap { try tables.history.history.message(at: $0) }.map(renderer.render)
        let counts = try tagSummaryCounts(peerId)
        let mentionTag = tables.history.configuration.chatListMentionTag?.singleTags.first
        return ChatListItem(
            peerId: peerId, index: index, peers: peers, topMessage: topMessage,
            readState: try tables.history.readStates.get(peerId),
            notificationSettings: try tables.peerNotificationSettings.get(peer?.notificationSettingsPeerId ?? peerId),
            embeddedState: try tables.history.interfaceStates.get(peerId)?.chatListEmbeddedState,
            tagSummaryCounts: counts, mentionCount: mentionTag.flatMap { counts[$0] } ?? 0)
    }

    /// The chat's count of each summarized tag, over the chat-message namespaces (all the chat has, when the
    /// configuration does not name them).
    private func tagSummaryCounts(_ peerId: PeerId) throws -> [MessageTags: Int32] {
        let history = tables.history
        let tags = history.configuration.messageTagsWithSummary.singleTags
        guard !tags.isEmpty else { return [:] }
        let namespaces = try history.configuration.chatMessagesNamespaces ?? history.index.existingNamespaces(peerId)
        var result: [MessageTags: Int32] = [:]
        for tag in tags {
            var total: Int64 = 0
            for namespace in namespaces {
                total += Int64(try history.tagsSummary.get(MessageHistoryTagsSummaryKey(tag: tag, peerId: peerId, namespace: namespace))?.count ?? 0)
            }
            result[tag] = Int32(clamping: total)
        }
        return result
    }
}
