import BoxwoodStore
/// Every table of a Postbox, over one value box.
final class PostboxTables {
    let metadata: MetadataTable
    let peers: PeerTable
    let peerChatStates: PeerChatStateTable
    let cachedPeerData: CachedPeerDataTable
    let peerPresences: PeerPresenceTable
    let peerNotificationSettings: PeerNotificationSettingsTable
    let contacts: ContactTable
    let preferences: PreferencesTable
    let orderedItemLists: OrderedItemListTable
    let operationLogMetadata: PeerOperationLogMetadataTable
    let mergedOperationLogIndex: PeerMergedOperationLogIndexTable
    let operationLog: PeerOperationLogTable
    /// Message history, holes, read states and the chat list.
    let history: MessageHistoryTables
    /// All of them, in the order their `beforeCommit` runs.
    let all: [Table]

    init(valueBox: ValueBox, seedConfiguration: SeedConfiguration, useCaches: Bool) throws(PostboxTypeRegistrationError) {
        metadata = MetadataTable(valueBox: valueBox, useCaches: useCaches)
        peers = PeerTable(valueBox: valueBox, useCaches: useCaches)
        peerChatStates = PeerChatStateTable(valueBox: valueBox, useCaches: useCaches)
        cachedPeerData = CachedPeerDataTable(valueBox: valueBox, useCaches: useCaches)
        peerPresences = PeerPresenceTable(valueBox: valueBox, useCaches: useCaches)
        peerNotificationSettings = PeerNotificationSettingsTable(valueBox: valueBox, useCaches: useCaches)
        contacts = ContactTable(valueBox: valueBox, useCaches: useCaches)
        preferences = try PreferencesTable(valueBox: valueBox, useCaches: useCaches)
        orderedItemLists = try OrderedItemListTable(valueBox: valueBox, useCaches: useCaches)
        operationLogMetadata = PeerOperationLogMetadataTable(valueBox: valueBox, useCaches: useCaches)
        mergedOperationLogIndex = PeerMergedOperationLogIndexTable(valueBox: valueBox, useCaches: useCaches)
        operationLog = PeerOperationLogTable(valueBox: valueBox, metadataTable: operationLogMetadata,
                                             mergedIndexTable: mergedOperationLogIndex, useCaches: useCaches)
        history = try MessageHistoryTables(valueBox: valueBox, configuration: seedConfiguration.historyConfiguration,
                                       initialChatListHoles: seedConfiguration.initializeChatListWithHole, useCaches: useCaches)
        let settings = peerNotificationSettings
        history.totalUnreadFilter = TotalUnreadFilter(
            isRemoved: { [unowned settings] peerId in try settings.get(peerId)?.isRemovedFromTotalUnreadCount(default: false) ?? false },
            removedBefore: { [unowned settings] in
                settings.updatedSettings.mapValues { $0.old?.isRemovedFromTotalUnreadCount(default: false) ?? false }
            })
        all = [metadata, peers, peerChatStates, cachedPeerData, peerPresences, peerNotificationSettings, contacts,
               preferences, orderedItemLists, operationLogMetadata, mergedOperationLogIndex, operationLog] + history.tables
    }

    /// The change record of the transaction so far. First derives the chat-list operations and total unread
    /// states from the history operations (Postbox's `chatListTable.replay` and `chatListIndexTable.commit`).
    /// With `renderingMessages` (someone observes the record) the history operations are listed, inserted messages
    /// rendered as they read at the end of the transaction; without, only the chats they touch are (the views
    /// reload what they show from the tables, so rendering every inserted message would be work no one reads).
    func collectChanges(renderingMessages: Bool) throws -> PostboxChanges {
        try history.prepareCommit()
        var changes = PostboxChanges()
        let table = history.history
        changes.historyPeerIds = Set(table.operationsByPeerId.keys)
        var touched = Set<MessageId>()
        for operations in table.operationsByPeerId.values {
            for operation in operations {
                switch operation {
                case let .insertMessage(message): touched.insert(message.id)
                case let .remove(entries): for (index, _) in entries { touched.insert(index.id) }
                case let .updateTimestamp(index, _): touched.insert(index.id)
                case .updateReadState: break  // not part of a rendered message
                }
            }
        }
        changes.historyMessageIds = touched
        let renderer = MessageRenderer(tables: self)
        if renderingMessages { changes.operationsByPeerId = try table.operationsByPeerId.mapValues { operations in
            try operations.compactMap { operation -> MessageHistoryOperation? in
                switch operation {
                case let .insertMessage(message):
                    // A message that refers to shared media is rendered as it reads at the end of the transaction: a
                    // later deletion may have freed the entry its recorded copy refers to. If it was deleted later in
                    // the transaction its insert is dropped (its remove follows). Other messages render as recorded,
                    // without another read.
                    guard message.media.contains(where: { $0 is SharedMediaReference }) else { return .insertMessage(try renderer.render(message)) }
                    guard let current = try table.message(at: message.index) ?? table.getMessage(message.id) else { return nil }
                    return .insertMessage(try renderer.render(current))
                case let .remove(entries): return .remove(entries)
                case let .updateReadState(peerId, state): return .updateReadState(peerId, state)
                case let .updateTimestamp(index, timestamp): return .updateTimestamp(index, timestamp)
                }
            }
        } }
        changes.updatedMedia = history.history.updatedMedia
        changes.holeOperations = history.holes.operations
        changes.chatListOperations = history.chatList.operations
        changes.unsentMessageOperations = history.unsent.operations
        changes.alteredInitialPeerCombinedReadStates = history.readStates.initialStates
        changes.updatedChatListInclusions = history.chatListIndex.updatedInclusions
        changes.updatedTotalUnreadStates = history.chatListIndex.updatedTotalUnreadStates
        changes.updatedState = metadata.updatedState
        changes.replacedRemoteContactCount = metadata.updatedRemoteContactCount
        changes.updatedMasterClientId = metadata.updatedMasterClientId
        changes.updatedPeers = try peers.updatedPeers()
        changes.updatedPeerChatStates = peerChatStates.updatedPeerIds
        changes.updatedPeerChatInterfaceStates = history.interfaceStates.updatedStates
        changes.updatedMessageTagSummaries = history.tagsSummary.updatedSummaries
        changes.updatedCachedPeerData = cachedPeerData.updatedCachedPeerData
        changes.updatedPeerPresences = peerPresences.updatedPresences
        changes.updatedPeerNotificationSettings = peerNotificationSettings.updatedSettings
        changes.replacedContactPeerIds = contacts.replacedPeerIds
        changes.preferencesOperations = preferences.operations
        changes.orderedItemListOperations = orderedItemLists.operations
        changes.peerMergedOperationLogOperations = operationLog.mergedOperations
        return changes
    }

    /// Clears every table's accumulators (after the record was built, or after a rollback).
    func resetChanges() {
        metadata.resetChanges()
        peers.resetChanges()
        peerChatStates.resetChanges()
        cachedPeerData.resetChanges()
        peerPresences.resetChanges()
        peerNotificationSettings.resetChanges()
        contacts.resetChanges()
        preferences.resetChanges()
        orderedItemLists.resetChanges()
        operationLogMetadata.resetChanges()
        mergedOperationLogIndex.resetChanges()
        operationLog.resetChanges()
        history.resetChanges()
    }

    /// Drops every cache (another process committed, or the transaction rolled back).
    func clearMemoryCaches() {
        for table in all { table.clearMemoryCache() }
    }
}
