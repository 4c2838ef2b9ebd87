import Boxwood

/// How the sync layer stores server objects in Postbox tables; every write here is idempotent.
enum SyncStorage {
    /// The message tag of pinned messages.
    static let pinnedTag = SyncMessageTags.pinned

    // MARK: Conversions

    static func messageId(_ message: ApiMessage) -> MessageId {
        MessageId(peerId: message.peerId, namespace: SyncNamespaces.cloudMessages, id: message.id)
    }

    /// The message as stored; `unreadMention` overrides whether it is tagged an unread mention (default: its flags).
    static func storeMessage(_ message: ApiMessage, unreadMention: Bool? = nil) -> StoreMessage {
        let parts = SyncMessageContent.storeParts(message.content, text: message.text, peerId: message.peerId)
        return StoreMessage(
            id: .id(messageId(message)),
            globallyUniqueId: message.randomId != 0 ? message.randomId : nil,
            groupingKey: parts.groupingKey,
            timestamp: message.date,
            flags: message.outgoing ? [] : [.incoming],
            tags: SyncMessageTags.tags(of: message.content, pinned: message.pinned, unreadMention: unreadMention ?? message.isUnreadMention),
            forwardInfo: parts.forwardInfo,
            authorId: message.fromId,
            text: message.text,
            attributes: [SyncMessageAttribute(editVersion: message.editVersion, revision: message.content.revision)] + parts.attributes,
            media: parts.media
        )
    }

    static func storeMessage(encrypted message: ApiEncryptedMessage) -> StoreMessage {
        StoreMessage(
            id: .id(MessageId(peerId: message.chatId, namespace: SyncNamespaces.cloudMessages, id: message.id)),
            globallyUniqueId: message.randomId,
            timestamp: message.date,
            flags: [.incoming],
            authorId: message.chatId,
            text: message.text,
            attributes: [SyncMessageAttribute(editVersion: 0)]
        )
    }

    static func editVersion(_ message: Message) -> Int32 {
        message.attributes.lazy.compactMap { ($0 as? SyncMessageAttribute)?.editVersion }.first ?? 0
    }

    /// The stored message's (revision, edit version): a server copy is applied when its pair is greater.
    static func version(_ message: Message) -> (Int32, Int32) {
        let attribute = message.attributes.lazy.compactMap { $0 as? SyncMessageAttribute }.first
        return (attribute?.revision ?? 0, attribute?.editVersion ?? 0)
    }

    // MARK: Messages

    /// A message newly stored by ``addMessages(_:location:accountPeerId:in:)``.
    struct Added {
        let messageId: MessageId
        let outgoing: Bool
    }

    /// Stores the messages not stored yet; a message the account sent replaces its local copy (matched by random
    /// id); stored ones get newer content. `fetched`: the messages are a fetched answer, current on the server (see
    /// ``updateIfNewer(_:fetched:accountPeerId:in:)``). Returns the messages that were new.
    static func addMessages(_ messages: [ApiMessage], location: AddMessagesLocation, fetched: Bool = false, accountPeerId: PeerId,
                            in transaction: Transaction) throws -> [Added] {
        var added: [Added] = []
        var toStore: [StoreMessage] = []
        for message in messages {
            let id = messageId(message)
            if try transaction.getMessageIndex(id) != nil {
                try updateIfNewer(message, fetched: fetched, accountPeerId: accountPeerId, in: transaction)
                continue
            }
            if message.outgoing, message.randomId != 0,
               let local = try transaction.getMessageId(peerId: message.peerId, globallyUniqueId: message.randomId),
               local.namespace == SyncNamespaces.localMessages {
                try transaction.deleteMessages([local])
            }
            try includeInChatList(message.peerId, in: transaction)
            try ensureReadState(message.peerId, in: transaction)
            toStore.append(storeMessage(message))
            added.append(Added(messageId: id, outgoing: message.outgoing))
        }
        if !toStore.isEmpty { try transaction.addMessages(toStore, location: location) }
        return added
    }

    /// The incoming messages of a fetched answer (a hole fill) that are news: not stored, and dated after the stored
    /// cursor's `date`. Their updates are still on the way (the cursor's date moves only with difference answers, so
    /// every older message was either applied or lay in a hole), and the fill stores them first: their updates will
    /// find them stored, so it is the fill that reports them (``SyncEvent/newMessages(_:_:)``, caught up).
    static func unstoredNews(_ messages: [ApiMessage], peerId: PeerId, in transaction: Transaction) throws -> [MessageId] {
        let date = (try transaction.getState() as? SyncAccountState)?.date ?? 0
        return try messages.filter { $0.peerId == peerId && !$0.outgoing && $0.date > date }.map(messageId)
            .filter { try transaction.getMessageIndex($0) == nil }
    }

    /// Those of `ids` stored now.
    static func storedIds(_ ids: [MessageId], in transaction: Transaction) throws -> [MessageId] {
        try ids.filter { try transaction.getMessageIndex($0) != nil }
    }

    /// Replaces a stored message with `message` when the server's copy is newer (revision, then edit version) or
    /// differs in the pinned flag or the unread mention; does nothing when the message is not stored (an edit or a
    /// reaction for a message deleted here).
    ///
    /// The unread mention of a copy carried by an update only ever clears the tag: a copy that still says unread
    /// may predate a read done here that the server has not applied yet. A `fetched` copy (a hole fill, a dialog's
    /// messages) is the server's current state and sets the tag either way; a read done here before it is applied
    /// again when the server answers it (``OutboundQueue``).
    @discardableResult
    static func updateIfNewer(_ message: ApiMessage, fetched: Bool = false, accountPeerId: PeerId, in transaction: Transaction) throws -> MessageChange {
        let id = messageId(message)
        var change = MessageChange.none
        // Only the message itself is compared and rewritten: the message a reply refers to is not read (and the
        // stored message is read once for the comparison and the update).
        try transaction.updateMessage(id) { stored in
            let newer = (message.content.revision, message.editVersion) > version(stored)
            let pinnedDiffers = stored.tags.contains(pinnedTag) != message.pinned
            // A mention, once seen, stays seen (the flag only goes from unread to read): a copy that still says unread
            // is older than the read applied here.
            let unreadMention = message.isUnreadMention && (fetched || stored.tags.contains(SyncMentions.tag))
            let mentionDiffers = stored.tags.contains(SyncMentions.tag) != unreadMention
            guard newer || pinnedDiffers || mentionDiffers else { return nil }
            guard newer else {
                change = .other
                var tags = message.pinned ? stored.tags.union(pinnedTag) : stored.tags.subtracting(pinnedTag)
                if unreadMention { tags.insert(SyncMentions.tag) } else { tags.remove(SyncMentions.tag) }
                return restored(stored, tags: tags)
            }
            if message.editVersion > editVersion(stored) || message.text != stored.text {
                change = .edited
            } else {
                change = SyncMessageContent.content(of: stored).reactions != message.content.reactions ? .reactions : .other
            }
            return storeMessage(message, unreadMention: unreadMention)
        }
        return change
    }

    /// What ``updateIfNewer(_:accountPeerId:in:)`` changed in a stored message.
    enum MessageChange {
        case none
        /// The text or the media (a new edit version).
        case edited
        /// Only the reactions (and perhaps counters).
        case reactions
        /// Something else: the pin, counters.
        case other
    }

    static func setPinned(_ id: MessageId, _ pinned: Bool, in transaction: Transaction) throws {
        try transaction.updateMessage(id) { stored in
            guard stored.tags.contains(pinnedTag) != pinned else { return nil }
            return restored(stored, tags: pinned ? stored.tags.union(pinnedTag) : stored.tags.subtracting(pinnedTag))
        }
    }

    /// A stored message as a `StoreMessage`, with the given fields replaced.
    static func restored(_ message: Message, tags: MessageTags? = nil, text: String? = nil, flags: MessageFlags? = nil,
                         attributes: [any MessageAttribute]? = nil) -> StoreMessage {
        let stored = message.storeMessage
        return StoreMessage(id: stored.id, globallyUniqueId: stored.globallyUniqueId, groupingKey: stored.groupingKey,
                            threadId: stored.threadId, timestamp: stored.timestamp, flags: flags ?? stored.flags, tags: tags ?? stored.tags,
                            globalTags: stored.globalTags, localTags: stored.localTags, forwardInfo: stored.forwardInfo,
                            authorId: stored.authorId, text: text ?? stored.text, attributes: attributes ?? stored.attributes, media: stored.media)
    }

    /// A stored message as a `StoreMessage` showing `reactions`.
    static func restored(_ message: Message, reactions: [ApiReaction]) -> StoreMessage {
        var attributes = message.attributes.filter { !($0 is SyncReactionsAttribute) }
        if !reactions.isEmpty { attributes.append(SyncReactionsAttribute(reactions: reactions)) }
        return restored(message, attributes: attributes)
    }

    /// Makes `range` of a chat match the server: `messages` (everything the server has in the range) are stored
    /// or updated, stored messages in the range the server no longer has are deleted, and the range stops being
    /// a hole. Messages of other chats or outside the range are ignored. Returns the number of messages stored.
    /// The stored history is walked one page (``historyPageSize``) at a time.
    @discardableResult
    static func fill(peerId: PeerId, range: ClosedRange<Int32>, messages: [ApiMessage], accountPeerId: PeerId,
                     in transaction: Transaction) throws -> Int {
        let stored = try storeRange(peerId: peerId, range: range, messages: messages, accountPeerId: accountPeerId, in: transaction)
        try SyncMentions.recountIfComplete(peerId, in: transaction)
        return stored
    }

    /// ``fill(peerId:range:messages:accountPeerId:in:)`` without the mention recount (a reset sets the count itself
    /// and recounts after).
    @discardableResult
    private static func storeRange(peerId: PeerId, range: ClosedRange<Int32>, messages: [ApiMessage], accountPeerId: PeerId,
                                   in transaction: Transaction) throws -> Int {
        let messages = messages.filter { $0.peerId == peerId && range.contains($0.id) }
        let present = Set(messages.map(\.id))
        try forEachHistoryPage(peerId, namespace: SyncNamespaces.cloudMessages, in: transaction) { page in
            let stale = page.map(\.id).filter { range.contains($0.id) && !present.contains($0.id) }
            if !stale.isEmpty { try transaction.deleteMessages(stale) }
        }
        let added = try addMessages(messages, location: .random, fetched: true, accountPeerId: accountPeerId, in: transaction)
        // Every message of the range is known now, and so is each tag space (media and unread mentions) there.
        for space in [MessageHistoryHoleSpace.everywhere] + SyncMessageTags.holeSpaces.map(MessageHistoryHoleSpace.tag) {
            try transaction.removeHole(peerId: peerId, namespace: SyncNamespaces.cloudMessages, space: space, range: range)
        }
        return added.count
    }

    /// Stores a page of `filter`'s messages of `peerId` that fills `range` of that media space: its messages are
    /// added (the rest of the range in that space is known to be empty) and the space's hole is removed. Stored
    /// messages are not deleted here — one missing from the answer may have lost its media, not be gone — and the
    /// everywhere holes stay.
    static func fill(peerId: PeerId, range: ClosedRange<Int32>, filter: ApiSearchFilter, messages: [ApiMessage], accountPeerId: PeerId,
                     in transaction: Transaction) throws -> Int {
        let messages = messages.filter { $0.peerId == peerId && range.contains($0.id) && filter.matches($0.content) }
        let added = try addMessages(messages, location: .random, fetched: true, accountPeerId: accountPeerId, in: transaction)
        try transaction.removeHole(peerId: peerId, namespace: SyncNamespaces.cloudMessages, space: .tag(filter.tag), range: range)
        return added.count
    }

    // MARK: Chats

    /// Lists the chat in the root chat list unless it is listed already (a listed chat keeps its group and pin).
    static func includeInChatList(_ peerId: PeerId, in transaction: Transaction) throws {
        if case .ifHasMessagesOrOneOf = try transaction.getPeerChatListInclusion(peerId) { return }
        try transaction.updatePeerChatListInclusion(peerId, inclusion: .ifHasMessagesOrOneOf(groupId: .root, pinningIndex: nil, minTimestamp: nil))
    }

    static func ensureReadState(_ peerId: PeerId, in transaction: Transaction) throws {
        guard try transaction.getCombinedPeerReadState(peerId) == nil else { return }
        try transaction.resetPeerReadStates(peerId, states: [
            SyncNamespaces.cloudMessages: .idBased(maxIncomingReadId: 0, maxOutgoingReadId: 0, maxKnownId: 0, count: 0, markedUnread: false),
        ])
    }

    /// Moves the chat's inbox read position forward to `maxId` (creating the read state when missing).
    static func markInboxRead(_ peerId: PeerId, maxId: Int32, in transaction: Transaction) throws {
        try ensureReadState(peerId, in: transaction)
        try transaction.applyIncomingReadMaxId(MessageId(peerId: peerId, namespace: SyncNamespaces.cloudMessages, id: maxId))
    }

    /// Rebuilds a chat from its dialog and its newest `messages`: messages above the dialog's top are deleted
    /// (the server deleted them), everything below the newest fetched message becomes a hole, the read state,
    /// notification settings and (channels) pts are the server's.
    static func resetChat(_ dialog: ApiDialog, messages: [ApiMessage], accountPeerId: PeerId, in transaction: Transaction) throws {
        let peerId = dialog.peerId
        let cloud = SyncNamespaces.cloudMessages
        try includeInChatList(peerId, in: transaction)
        let fetched = messages.filter { $0.peerId == peerId && $0.id <= dialog.topMessage }
        let lowest = fetched.map(\.id).min() ?? dialog.topMessage
        if dialog.topMessage > 0 {
            // Everything from the lowest fetched message up is known: store it exactly. (Up to Int32.max, which
            // is a valid id: `lowest` may be it, and a range ending below it would be empty — a trap.)
            try storeRange(peerId: peerId, range: lowest...Int32.max, messages: fetched, accountPeerId: accountPeerId, in: transaction)
            if lowest > 1 {
                for space in [MessageHistoryHoleSpace.everywhere] + SyncMessageTags.mediaSpaces.map(MessageHistoryHoleSpace.tag) {
                    try transaction.addHole(peerId: peerId, namespace: cloud, space: space, range: 1...(lowest - 1))
                }
            }
        } else {
            try storeRange(peerId: peerId, range: 1...Int32.max, messages: [], accountPeerId: accountPeerId, in: transaction)
        }
        try SyncMentions.reset(dialog, lowestFetched: dialog.topMessage > 0 ? lowest : 1, in: transaction)
        try transaction.resetPeerReadStates(peerId, states: [
            cloud: .idBased(maxIncomingReadId: dialog.readInboxMaxId, maxOutgoingReadId: dialog.readOutboxMaxId,
                            maxKnownId: dialog.topMessage, count: dialog.unreadCount, markedUnread: false),
        ])
        try transaction.updatePeerNotificationSettings([peerId: SyncNotificationSettings(muteUntil: dialog.muteUntil)])
        if let pts = dialog.pts { try setChannelPts(peerId, pts, in: transaction) }
    }

    /// Takes a chat's dialog without touching its history (a chat discovered below the chat list's hole, whose
    /// messages are arriving by update): the read state (with the dialog's top as the newest known id, so that the
    /// messages up to it that updates still bring are not counted again), notification settings, the unread-mention
    /// count (the same way) and the draft. Its stored history keeps its holes; its messages come by update, in order.
    /// A channel's pts is not taken: updates the dialog already covers would be skipped and their messages lost.
    static func refreshChat(_ dialog: ApiDialog, in transaction: Transaction) throws {
        let peerId = dialog.peerId
        try includeInChatList(peerId, in: transaction)
        try transaction.resetPeerReadStates(peerId, states: [
            SyncNamespaces.cloudMessages: .idBased(maxIncomingReadId: dialog.readInboxMaxId, maxOutgoingReadId: dialog.readOutboxMaxId,
                                                   maxKnownId: dialog.topMessage, count: dialog.unreadCount, markedUnread: false),
        ])
        try transaction.updatePeerNotificationSettings([peerId: SyncNotificationSettings(muteUntil: dialog.muteUntil)])
        try SyncMentions.refresh(dialog, in: transaction)
    }

    // MARK: Channel cursors

    /// The chat's stored ``SyncChatState`` (empty when none).
    static func chatState(_ peerId: PeerId, in transaction: Transaction) throws -> SyncChatState {
        guard let entry = try transaction.getPeerChatState(peerId) else { return SyncChatState() }
        return try entry.get(SyncChatState.self)
    }

    static func setChatState(_ peerId: PeerId, _ state: SyncChatState, in transaction: Transaction) throws {
        try transaction.setPeerChatState(peerId, state: try CodableEntry(state))
    }

    static func channelPts(_ peerId: PeerId, in transaction: Transaction) throws -> Int32? {
        try chatState(peerId, in: transaction).pts
    }

    static func setChannelPts(_ peerId: PeerId, _ pts: Int32, in transaction: Transaction) throws {
        var state = try chatState(peerId, in: transaction)
        guard state.pts != pts else { return }
        state.pts = pts
        try setChatState(peerId, state, in: transaction)
    }
}
