/// What one transaction changed (Postbox's `PostboxTransaction`): built from the tables' accumulators at
/// the end of every transaction, handed to the observers (the view tracker) before the value box commits.
/// Empty when the transaction changed nothing observable; only a non-empty record bumps the
/// TransactionStateVersion.
public struct PostboxChanges {
    /// History changes per chat, in order (inserted and removed messages, read states, timestamps). Built — its
    /// inserted messages rendered — only for transaction observers (``Postbox/addTransactionObserver(_:)``): when
    /// none is registered it stays empty and only ``historyPeerIds`` says which chats changed.
    public var operationsByPeerId: [PeerId: [MessageHistoryOperation]] = [:]
    /// The chats whose history changed (every chat ``operationsByPeerId`` would list), whether or not the
    /// operations were rendered: what the views test.
    public var historyPeerIds: Set<PeerId> = []
    /// The messages the history changes of ``historyPeerIds`` touched (inserted, removed, updated or moved), by
    /// id; nil when not known. A history view keeps its other rendered messages instead of rendering them again
    /// (`MutableMessageHistoryView.replay`).
    var historyMessageIds: Set<MessageId>? = nil
    /// Shared media changed in place (``Transaction/updateMedia(_:update:)``), with their new values: every message
    /// that carries one shows the new value.
    public var updatedMedia: [MediaId: any Media] = [:]
    /// Hole changes per (peer, namespace, space).
    public var holeOperations: [MessageHistoryHoleOperationKey: [MessageHistoryHoleOperation]] = [:]
    /// Chat-list changes per group, in the order views apply them.
    public var chatListOperations: [PeerGroupId: [ChatListOperation]] = [:]
    /// For each chat whose read state changed, the state before the transaction (nil: it had none).
    public var alteredInitialPeerCombinedReadStates: [PeerId: CombinedPeerReadState?] = [:]
    public var updatedChatListInclusions: [PeerId: PeerChatListInclusion] = [:]
    /// New unread totals per chat-list group.
    public var updatedTotalUnreadStates: [PeerGroupId: ChatListTotalUnreadState] = [:]
    /// The account state set by `setState` (the last one set).
    public var updatedState: (any PostboxCoding)?
    /// Peers whose record changed, with their new value.
    public var updatedPeers: [PeerId: any Peer] = [:]
    /// Peers whose chat state (channel pts and similar) changed.
    public var updatedPeerChatStates: Set<PeerId> = []
    /// Chats whose interface state (draft, scroll position) was set, with the new state (nil: removed).
    public var updatedPeerChatInterfaceStates: [PeerId: StoredPeerChatInterfaceState?] = [:]
    /// Tag summaries changed by the history or replaced from the server, with their new values.
    public var updatedMessageTagSummaries: [MessageHistoryTagsSummaryKey: MessageHistoryTagNamespaceSummary] = [:]
    public var updatedCachedPeerData: [PeerId: any CachedPeerData] = [:]
    public var updatedPeerPresences: [PeerId: any PeerPresence] = [:]
    /// Notification settings changes: the value before the transaction and the new one.
    public var updatedPeerNotificationSettings: [PeerId: PeerNotificationSettingsUpdate] = [:]
    /// The new contact set, when it was replaced.
    public var replacedContactPeerIds: Set<PeerId>?
    public var replacedRemoteContactCount: Int32?
    public var preferencesOperations: [PreferencesOperation] = []
    public var orderedItemListOperations: [Int32: [OrderedItemListOperation]] = [:]
    /// Changes of the unsent-message index (messages stored, moved or removed while waiting to be sent), in
    /// order.
    public var unsentMessageOperations: [UnsentMessageOperation] = []
    /// Changes of the operation log's merged queues (appends, removals, content updates), in order.
    public var peerMergedOperationLogOperations: [PeerMergedOperationLogOperation] = []
    /// The MasterClientId, when this transaction made this Postbox the master.
    public var updatedMasterClientId: Int64?
    /// True when the transaction began after commits of another process (caches were dropped; views must
    /// reload). Does not by itself make the record non-empty.
    public var sawExternalCommits = false

    public init() {}

    /// True when nothing observable changed.
    public var isEmpty: Bool {
        operationsByPeerId.isEmpty && historyPeerIds.isEmpty && updatedMedia.isEmpty && holeOperations.isEmpty && chatListOperations.isEmpty
            && alteredInitialPeerCombinedReadStates.isEmpty && updatedChatListInclusions.isEmpty && updatedTotalUnreadStates.isEmpty
            && updatedState == nil && updatedPeers.isEmpty && updatedPeerChatStates.isEmpty && updatedCachedPeerData.isEmpty
            && updatedPeerChatInterfaceStates.isEmpty && updatedMessageTagSummaries.isEmpty
            && updatedPeerPresences.isEmpty && updatedPeerNotificationSettings.isEmpty && replacedContactPeerIds == nil
            && replacedRemoteContactCount == nil && preferencesOperations.isEmpty && orderedItemListOperations.isEmpty
            && unsentMessageOperations.isEmpty && peerMergedOperationLogOperations.isEmpty && updatedMasterClientId == nil
    }
}
