import BoxwoodStore
/// The message-history tables wired together, and the end-of-transaction steps in Postbox's order (§4.2 of the
/// reference): ``prepareCommit()`` (chat-list replay, then total unread states) before the change record is
/// built from the accumulators, then ``resetChanges()``, then ``beforeCommit()`` (write-back flushes) before the
/// value box commits. After an aborted value-box transaction, call ``clearMemoryCache()``.
final class MessageHistoryTables {
    let valueBox: ValueBox
    let configuration: MessageHistoryConfiguration

    let metadata: MessageHistoryMetadataTable
    let index: MessageHistoryIndexTable
    let tags: MessageHistoryTagsTable
    let tagsSummary: MessageHistoryTagsSummaryTable
    /// Drafts and other per-chat app state; its `overrideChatTimestamp` places chats in the chat list.
    let interfaceStates: PeerChatInterfaceStateTable
    let globalIds: GlobalMessageIdsTable
    let globallyUniqueIds: MessageGloballyUniqueIdTable
    let holes: MessageHistoryHoleIndexTable
    let readStates: MessageHistoryReadStateTable
    let textIndex: MessageHistoryTextIndexTable
    let unsent: MessageHistoryUnsentTable
    let media: MessageMediaTable
    let history: MessageHistoryTable
    let chatListIndex: ChatListIndexTable
    let chatList: ChatListTable
    /// The chats the filtered unread totals leave out (``PostboxTables`` wires in the notification settings).
    var totalUnreadFilter = TotalUnreadFilter.none

    init(valueBox: ValueBox, configuration: MessageHistoryConfiguration,
         initialChatListHoles: (topLevel: ChatListHole?, groups: ChatListHole?) = (nil, nil),
         useCaches: Bool = true) throws(PostboxTypeRegistrationError) {
        // Stored messages may hold the library's `SharedMediaReference`: its type must be known before any is read.
        try LibraryCodingTypes.ensureRegistered()
        self.valueBox = valueBox
        self.configuration = configuration
        metadata = MessageHistoryMetadataTable(valueBox: valueBox, useCaches: useCaches)
        index = MessageHistoryIndexTable(valueBox: valueBox, useCaches: useCaches)
        tags = MessageHistoryTagsTable(valueBox: valueBox, useCaches: useCaches)
        tagsSummary = MessageHistoryTagsSummaryTable(valueBox: valueBox, summaryTags: configuration.messageTagsWithSummary, useCaches: useCaches)
        interfaceStates = PeerChatInterfaceStateTable(valueBox: valueBox, useCaches: useCaches)
        globalIds = GlobalMessageIdsTable(valueBox: valueBox, useCaches: useCaches)
        globallyUniqueIds = MessageGloballyUniqueIdTable(valueBox: valueBox, useCaches: useCaches)
        holes = MessageHistoryHoleIndexTable(valueBox: valueBox, metadataTable: metadata, seedHoles: configuration.messageHoles, useCaches: useCaches)
        readStates = MessageHistoryReadStateTable(valueBox: valueBox, defaultStates: configuration.defaultMessageNamespaceReadStates, useCaches: useCaches)
        textIndex = MessageHistoryTextIndexTable(valueBox: valueBox)
        unsent = MessageHistoryUnsentTable(valueBox: valueBox, useCaches: useCaches)
        media = MessageMediaTable(valueBox: valueBox, useCaches: useCaches)
        history = MessageHistoryTable(valueBox: valueBox, configuration: configuration, metadataTable: metadata, indexTable: index,
                                      tagsTable: tags, tagsSummaryTable: tagsSummary, globalIdsTable: globalIds, globallyUniqueIdTable: globallyUniqueIds,
                                      holeTable: holes, readStateTable: readStates, textIndexTable: textIndex,
                                      unsentTable: unsent, mediaTable: media, useCaches: useCaches)
        chatListIndex = ChatListIndexTable(valueBox: valueBox, defaultInclusion: configuration.defaultInclusion, useCaches: useCaches)
        chatList = ChatListTable(valueBox: valueBox, indexTable: chatListIndex, metadataTable: metadata, initialHoles: initialChatListHoles,
                                 chatMessagesNamespaces: configuration.chatMessagesNamespaces, useCaches: useCaches)
    }

    var tables: [Table] { [metadata, index, tags, tagsSummary, interfaceStates, globalIds, globallyUniqueIds, holes, readStates, unsent, media, history, chatListIndex, chatList] }

    /// Derives the chat-list operations from the transaction's history operations, inclusion changes and interface
    /// states set (their `overrideChatTimestamp`), then
    /// brings the total unread states up to date (Postbox's `chatListTable.replay` and
    /// `chatListIndexTable.commitWithTransaction`).
    func prepareCommit() throws {
        try chatList.replay(historyOperationsByPeerId: history.operationsByPeerId, historyTable: history,
                            interfaceStates: interfaceStates.updatedStates)
        try chatListIndex.commitTotalUnreadStates(readStateTable: readStates, metadataTable: metadata, filter: totalUnreadFilter)
    }

    /// Clears every accumulator (after the change record was built).
    func resetChanges() {
        history.resetChanges()
        tagsSummary.resetChanges()
        interfaceStates.resetChanges()
        holes.resetChanges()
        unsent.resetChanges()
        readStates.resetChanges()
        chatListIndex.resetChanges()
        chatList.resetChanges()
    }

    /// Flushes the write-back tables.
    func beforeCommit() throws {
        for table in tables { try table.beforeCommit() }
    }

    /// Drops every cache (after an abort or an external commit).
    func clearMemoryCache() {
        for table in tables { table.clearMemoryCache() }
    }

    /// The total unread state of `groupId` recounted from the chat list and the read states (to check the
    /// maintained one).
    func recountTotalUnreadState(groupId: PeerGroupId) throws -> ChatListTotalUnreadState {
        var result = ChatListTotalUnreadState()
        for entry in try chatList.earlierEntries(groupId: groupId, index: nil, count: 0) {
            guard case let .message(index, _) = entry else { continue }
            let peerId = index.messageIndex.id.peerId
            let listing = (groupId: groupId, index: index)
            if let (_, contribution) = ChatListIndexTable.contribution(listing, try readStates.get(peerId),
                                                                       removed: try totalUnreadFilter.isRemoved(peerId)) {
                result.add(contribution)
            }
        }
        return result
    }

    /// Replaces every stored total unread state written before the filtered counters existed by a recount (in the
    /// first transaction of a writable open, before anything changed, so the recount is the state).
    func recountLegacyTotalUnreadStates() throws {
        for groupId in try metadata.groupsWithTotalUnreadState() where try metadata.hasLegacyTotalUnreadState(groupId: groupId) {
            try metadata.setTotalUnreadState(groupId: groupId, try recountTotalUnreadState(groupId: groupId))
        }
    }
}
