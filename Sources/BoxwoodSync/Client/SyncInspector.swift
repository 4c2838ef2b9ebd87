import Boxwood

/// A stored message as the sync layer sees it (for tools and consistency checks).
public struct LocalMessage: Hashable, Sendable {
    public let id: Int32
    public let date: Int32
    public let text: String
    public let outgoing: Bool
    public let editVersion: Int32
    public let pinned: Bool
    public let authorId: PeerId?
    /// Media, entities, reply, forward, reactions, album and counters as stored (``SyncMessageContent/content(of:)``).
    public let content: ApiMessageContent
    /// Why the server refused to send it, for a local message flagged failed (``SyncSendFailureAttribute``).
    public let failureReason: String?
    /// Tagged as an unread mention of the account (``SyncMessageTags/unseenMention``).
    public var unreadMention = false
}

/// One chat as stored: cloud messages, holes, messages still waiting to be sent, read state, settings.
public struct LocalChatState: Hashable, Sendable {
    public let peerId: PeerId
    public var messages: [Int32: LocalMessage]
    /// Ranges of cloud message ids not known to be complete.
    public var holes: [ClosedRange<Int32>]
    /// Messages created here and not acknowledged by the server, still being sent.
    public var unsent: [LocalMessage]
    /// Messages created here that the server refused to send (flagged failed, with the reason).
    public var failed: [LocalMessage] = []
    public var readInboxMaxId: Int32?
    public var readOutboxMaxId: Int32?
    public var unreadCount: Int32?
    public var muteUntil: Int32?
    public var channelPts: Int32?
    /// The chat's draft text, nil when none.
    public var draft: String?
    /// The chat's unread-mention count (the tag summary the chat list shows).
    public var mentionCount: Int32 = 0
    /// Ranges of the unread-mention space not known to be complete.
    public var mentionHoles: [ClosedRange<Int32>] = []

    /// Whether message `id` lies in a hole.
    public func isInHole(_ id: Int32) -> Bool { holes.contains { $0.contains(id) } }
}

/// Everything the sync layer stored, read in one transaction.
public struct LocalSyncState: Sendable {
    public let cursor: SyncAccountState?
    public let chats: [PeerId: LocalChatState]
    public let users: [PeerId: SyncUser]
    public let titledChats: [PeerId: SyncChat]
    /// Entries still waiting in the outbound queues.
    public let pendingOutbound: Int
    /// The root chat list's holes, topmost first (the dialogs below the topmost are not known here).
    public var chatListHoles: [ChatListHole] = []

    /// The dialog-list offset below which dialogs are not known (the topmost chat-list hole's); nil when the whole
    /// list is known.
    public var chatListHoleOffset: ApiDialogsOffset? { chatListHoles.first.map(SyncChatListHoles.offset) }
}

/// Reads the sync layer's data back from a Postbox.
public enum SyncInspector {
    /// Reads the cursor and, for each of `peerIds`, the chat's stored state and peer record.
    public static func read(_ postbox: Postbox, peerIds: [PeerId]) async throws -> LocalSyncState {
        try await postbox.transaction { transaction in
            var chats: [PeerId: LocalChatState] = [:]
            var users: [PeerId: SyncUser] = [:]
            var titled: [PeerId: SyncChat] = [:]
            for peerId in peerIds {
                if let peer = try transaction.getPeer(peerId) {
                    if let user = peer as? SyncUser { users[peerId] = user }
                    if let chat = peer as? SyncChat { titled[peerId] = chat }
                }
                chats[peerId] = try chatState(peerId, in: transaction)
            }
            var pending = 0
            for tag in [SyncOperationLogTags.sendMessage, SyncOperationLogTags.synchronizeReadState, SyncOperationLogTags.messageActions,
                        SyncOperationLogTags.drafts, SyncOperationLogTags.readMentions] {
                pending += try transaction.getMergedOperationLogEntries(tag: tag, fromIndex: 0, limit: Int(Int32.max)).count
            }
            var state = LocalSyncState(cursor: try transaction.getState() as? SyncAccountState, chats: chats, users: users,
                                       titledChats: titled, pendingOutbound: pending)
            state.chatListHoles = try transaction.getChatListHoles(groupId: .root)
            return state
        }
    }

    /// One chat's stored state.
    public static func chatState(_ peerId: PeerId, in transaction: Transaction) throws -> LocalChatState {
        var messages: [Int32: LocalMessage] = [:]
        try SyncStorage.forEachHistoryPage(peerId, namespace: SyncNamespaces.cloudMessages, in: transaction) { page in
            for stored in page { messages[stored.id.id] = localMessage(stored) }
        }
        var local: [Message] = []
        try SyncStorage.forEachHistoryPage(peerId, namespace: SyncNamespaces.localMessages, in: transaction) { local += $0 }
        let unsent = local.filter { !$0.flags.contains(.failed) }.map(localMessage)
        let failed = local.filter { $0.flags.contains(.failed) }.map(localMessage)
        let holes = try transaction.getHoles(peerId: peerId, namespace: SyncNamespaces.cloudMessages)
        var inbox: Int32?, outbox: Int32?, count: Int32?
        if let state = try transaction.getCombinedPeerReadState(peerId)?.states[SyncNamespaces.cloudMessages],
           case let .idBased(maxIncoming, maxOutgoing, _, unread, _) = state {
            inbox = maxIncoming
            outbox = maxOutgoing
            count = unread
        }
        let settings = try transaction.getPeerNotificationSettings(peerId) as? SyncNotificationSettings
        var state = LocalChatState(peerId: peerId, messages: messages, holes: holes, unsent: unsent, readInboxMaxId: inbox,
                                   readOutboxMaxId: outbox, unreadCount: count, muteUntil: settings?.muteUntil,
                                   channelPts: try SyncStorage.channelPts(peerId, in: transaction))
        state.failed = failed
        state.draft = try SyncDrafts.draft(of: peerId, in: transaction)?.text
        state.mentionCount = try SyncMentions.count(peerId, in: transaction)
        state.mentionHoles = try SyncMentions.holes(peerId, in: transaction)
        return state
    }

    static func localMessage(_ stored: Message) -> LocalMessage {
        var message = LocalMessage(id: stored.id.id, date: stored.timestamp, text: stored.text, outgoing: !stored.flags.contains(.incoming),
                     editVersion: SyncStorage.editVersion(stored), pinned: stored.tags.contains(SyncStorage.pinnedTag),
                     authorId: stored.authorId, content: SyncMessageContent.content(of: stored),
                     failureReason: stored.attributes.lazy.compactMap { ($0 as? SyncSendFailureAttribute)?.reason }.first)
        message.unreadMention = stored.tags.contains(SyncMentions.tag)
        return message
    }
}
