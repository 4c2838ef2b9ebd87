/// Message history, holes, read states and the chat list.
extension Transaction {
    var history: MessageHistoryTables { get throws { try tables.history } }

    // MARK: Messages

    /// Stores messages; partial ids get the next id of their (peer, namespace). `.upperHistoryBlock` marks
    /// everything from each chat's lowest added id upwards as known (removes it from the holes).
    ///
    /// A message whose id is already stored is not stored again and does not overwrite the stored one (as in
    /// Postbox; ``updateMessage(_:_:)`` changes a message): the result lists its id in
    /// ``AddMessagesResult/existing``.
    ///
    /// - Returns: The ids added, the ids that already existed, and the assigned ids by `globallyUniqueId`.
    @discardableResult
    public func addMessages(_ messages: [StoreMessage], location: AddMessagesLocation) throws -> AddMessagesResult {
        try history.history.addMessages(messages, location: location)
    }

    /// Deletes messages (ids not stored are ignored) with every index entry they have.
    ///
    /// - Parameter forEachMedia: Called with each media item that goes with them — every item a deleted message
    ///   carried alone, and every shared item (one with a ``MediaId``) whose last carrier was deleted — so that the
    ///   app can delete the files behind it. An item still carried by another message is not passed.
    public func deleteMessages(_ ids: [MessageId], forEachMedia: ((any Media) -> Void)? = nil) throws {
        try history.history.deleteMessages(ids, forEachMedia: forEachMedia)
    }

    /// The stored media item `id` (Postbox's `getMedia`): one copy, whichever messages carry it; nil when no stored
    /// message does.
    public func getMedia(_ id: MediaId) throws -> (any Media)? { try history.history.media(id) }

    /// Replaces the stored media item `id` for every message that carries it (Postbox's `updateMedia`), for example
    /// when its file finished downloading. Views showing one of those messages show the new value
    /// (``PostboxChanges/updatedMedia``). Nothing happens when no stored message carries `id`.
    ///
    /// - Parameter update: The new value; its ``Media/id`` must be `id` (else `invalidArgument`).
    /// - Returns: The index of the message whose stored value changed: the one that keeps the item embedded when it
    ///   alone carries it; empty when the item is shared (it is stored once, apart from the messages) or not stored.
    @discardableResult
    public func updateMedia(_ id: MediaId, update: any Media) throws -> Set<MessageIndex> {
        try history.history.updateMedia(id, to: update)
    }

    /// Replaces a message (its id, timestamp, tags and text may change; indices follow).
    public func updateMessage(_ id: MessageId, _ message: StoreMessage) throws { try history.history.updateMessage(id, message) }

    /// Replaces message `id` with what `update` makes of it, as ``updateMessage(_:_:)`` does: `update` gets the
    /// stored message as ``getMessageWithoutAssociatedMessages(_:)`` renders it and returns the replacement, or nil
    /// to leave it as it is. One read of the stored message for both (a read-compare-rewrite caller would read it
    /// twice otherwise). Returns false when the message is not stored or `update` returned nil.
    @discardableResult
    public func updateMessage(_ id: MessageId, update: (Message) throws -> StoreMessage?) throws -> Bool {
        let tables = try tables
        guard let stored = try tables.history.history.getMessage(id),
              let replacement = try update(try MessageRenderer(tables: tables).render(stored, resolvingAssociatedMessages: false)) else { return false }
        try tables.history.history.updateMessage(id, replacement, stored: stored)
        return true
    }

    /// The stored message `id` with its peers and the messages it refers to resolved; nil when there is none.
    public func getMessage(_ id: MessageId) throws -> Message? { try MessageRenderer(tables: try tables).message(id) }

    /// The stored message `id` with its media and peers resolved but not the messages it refers to
    /// (``Message/associatedMessages`` is empty): for a caller that only rewrites or inspects the message itself,
    /// one read of the message instead of one per reply. Nil when there is none.
    public func getMessageWithoutAssociatedMessages(_ id: MessageId) throws -> Message? {
        try MessageRenderer(tables: try tables).message(id, resolvingAssociatedMessages: false)
    }

    public func getMessageIndex(_ id: MessageId) throws -> MessageIndex? { try history.history.messageIndex(of: id) }

    /// Up to `limit` messages of a chat before (`.earlier`, newest first) or after (`.later`, oldest first)
    /// `anchor` (nil: from the newest or the oldest).
    public func getMessageHistory(peerId: PeerId, namespaces: Set<MessageId.Namespace>? = nil, anchor: MessageIndex?,
                                  direction: HistoryReadDirection, limit: Int) throws -> [Message] {
        let renderer = MessageRenderer(tables: try tables)
        return try history.history.messages(peerId: peerId, namespaces: namespaces, anchor: anchor, direction: direction, limit: limit)
            .map(renderer.render)
    }

    /// Like ``getMessageHistory(peerId:namespaces:anchor:direction:limit:)`` for the messages with `tag`.
    public func getTaggedMessageIndices(peerId: PeerId, tag: MessageTags, anchor: MessageIndex?,
                                        direction: HistoryReadDirection, limit: Int) throws -> [MessageIndex] {
        try history.history.tagIndices(peerId: peerId, tag: tag, anchor: anchor, direction: direction, limit: limit)
    }

    public func getTopMessageIndex(peerId: PeerId, namespace: MessageId.Namespace) throws -> MessageIndex? {
        try history.history.topIndex(peerId: peerId, namespace: namespace)
    }

    /// The message with an account-wide id (see ``SeedConfiguration/globalMessageIdsNamespaces``).
    public func getMessageId(globalId: Int32) throws -> MessageId? { try history.history.messageId(globalId: globalId) }

    public func getMessageId(peerId: PeerId, globallyUniqueId: Int64) throws -> MessageId? {
        try history.history.messageId(peerId: peerId, globallyUniqueId: globallyUniqueId)
    }

    /// Full-text search of message text (prefix matching per word, as Postbox queries), in one chat or all,
    /// optionally only messages with `tags`; newest first.
    public func searchMessages(_ query: String, peerId: PeerId? = nil, tags: MessageTags? = nil) throws -> [MessageIndex] {
        try history.history.search(query, peerId: peerId, tags: tags)
    }

    // MARK: Holes

    public func addHole(peerId: PeerId, namespace: MessageId.Namespace, space: MessageHistoryHoleSpace, range: ClosedRange<MessageId.Id>) throws {
        try history.holes.addHole(peerId: peerId, namespace: namespace, space: space, range: range)
    }

    /// Marks `range` as known (the messages in it were fetched): removes it from the holes of `space`.
    public func removeHole(peerId: PeerId, namespace: MessageId.Namespace, space: MessageHistoryHoleSpace, range: ClosedRange<MessageId.Id>) throws {
        try history.holes.removeHole(peerId: peerId, namespace: namespace, space: space, range: range)
    }

    public func getHoles(peerId: PeerId, namespace: MessageId.Namespace, space: MessageHistoryHoleSpace = .everywhere) throws -> [ClosedRange<MessageId.Id>] {
        try history.holes.holes(peerId: peerId, namespace: namespace, space: space)
    }

    // MARK: Read states

    public func getCombinedPeerReadState(_ peerId: PeerId) throws -> CombinedPeerReadState? { try history.readStates.get(peerId) }

    /// Marks incoming messages up to `messageId` as read (unread count recomputed).
    public func applyIncomingReadMaxId(_ messageId: MessageId) throws { try history.history.applyIncomingMaxReadId(messageId) }

    public func applyOutgoingReadMaxId(_ messageId: MessageId) throws { try history.history.applyOutgoingMaxReadId(messageId) }

    public func markPeerUnread(_ peerId: PeerId, namespace: MessageId.Namespace, value: Bool) throws {
        try history.history.markUnread(peerId: peerId, namespace: namespace, value: value)
    }

    /// Replaces a chat's read states (the server's values after a gap).
    public func resetPeerReadStates(_ peerId: PeerId, states: [MessageId.Namespace: PeerReadState]) throws {
        try history.history.resetReadStates(peerId: peerId, states: states)
    }

    // MARK: Chat list

    public func updatePeerChatListInclusion(_ peerId: PeerId, inclusion: PeerChatListInclusion) throws {
        try history.chatListIndex.setInclusion(peerId, inclusion)
    }

    /// How `peerId` is included in the chat list now (Postbox's `getPeerChatListInclusion`), with the changes of
    /// this transaction.
    public func getPeerChatListInclusion(_ peerId: PeerId) throws -> PeerChatListInclusion {
        try history.chatListIndex.get(peerId).inclusion
    }

    /// Pins `peerIds` in this order in `groupId` (and unpins the others there).
    public func setPinnedPeers(groupId: PeerGroupId, _ peerIds: [PeerId]) throws {
        try history.chatList.setPinnedPeers(groupId: groupId, peerIds)
    }

    /// Up to `count` (0: all) rows of a chat list below `index` (nil: from the top), in display order, each chat
    /// with its peer, rendered top message, read state and notification settings.
    public func getChatListEntries(groupId: PeerGroupId, before index: ChatListIndex? = nil, count: Int) throws -> [ChatListEntry] {
        try ChatListItemLoader(tables: try tables).entries(groupId: groupId, before: index, count: count)
    }

    /// The positions of every chat of a chat-list group, in display order, without rendering their rows (the chat is
    /// `messageIndex.id.peerId`; holes are left out): what walking a whole list costs at the index alone, one
    /// ``ChatListIndex`` per chat in memory.
    public func getChatListIndices(groupId: PeerGroupId) throws -> [ChatListIndex] {
        try history.chatList.earlierEntries(groupId: groupId, index: nil, count: 0).compactMap { entry in
            if case let .message(index, _) = entry { return index }
            return nil
        }
    }

    /// The chats listed above `index` in a chat-list group (pinned chats included), in ascending list order, read
    /// from the chat-list index alone: for example the chats above the group's topmost hole, those whose place in the
    /// list is known.
    public func getChatListIndices(groupId: PeerGroupId, above index: MessageIndex) throws -> [ChatListIndex] {
        try history.chatList.laterEntries(groupId: groupId, index: ChatListIndex(pinningIndex: nil, messageIndex: index), count: 0)
            .compactMap { entry in
                if case let .message(listed, _) = entry, listed > ChatListIndex(pinningIndex: nil, messageIndex: index) { return listed }
                return nil
            }
    }

    /// The holes of a chat-list group, topmost first (read from the chat-list index alone).
    public func getChatListHoles(groupId: PeerGroupId) throws -> [ChatListHole] {
        try history.chatList.holes(groupId: groupId)
    }

    public func addChatListHole(groupId: PeerGroupId, _ hole: ChatListHole) throws {
        try history.chatList.addHole(groupId: groupId, hole)
    }

    /// Replaces the hole at `index` with `hole` (nil: removes it), as a fetched page of dialogs does.
    public func replaceChatListHole(groupId: PeerGroupId, index: MessageIndex, hole: ChatListHole?) throws {
        try history.chatList.replaceHole(groupId: groupId, index: index, hole: hole)
    }

    /// The unread totals of a chat-list group.
    public func getTotalUnreadState(groupId: PeerGroupId) throws -> ChatListTotalUnreadState {
        try history.metadata.totalUnreadState(groupId: groupId)
    }
}
