import BoxwoodStore
/// An immutable snapshot of one live query, handed to consumers.
public protocol PostboxView: Sendable {}

/// The mutable state of one live query, kept and updated on the Postbox queue (Postbox's
/// `MutablePostboxView`).
protocol MutablePostboxView: AnyObject {
    /// Applies what a transaction changed (reading the tables, which show the transaction's state); true when
    /// the view changed and consumers need a new snapshot.
    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool
    /// Rebuilds the view from the tables (another process committed); true when it changed.
    func refresh(tables: PostboxTables) throws -> Bool
    /// The current snapshot.
    func immutableView() -> any PostboxView
}

/// What a live query watches (Postbox's `PostboxViewKey`).
public enum PostboxViewKey: Hashable, Sendable {
    /// The account state (`Transaction.setState`).
    case postboxState
    /// One peer's record.
    case basicPeer(PeerId)
    /// Preferences entries by key.
    case preferences(keys: Set<ValueBoxKey>)
    /// The first `limit` entries of a tag's merged operation-log queue (what a sync worker consumes).
    case peerMergedOperationLog(tag: PeerOperationLogTag, limit: Int)
    /// The unread totals of a chat-list group.
    case totalUnreadState(groupId: PeerGroupId)
    /// One chat's read state.
    case combinedReadState(peerId: PeerId)
    /// A window of a chat's history: the newest `count` messages (`anchor` nil) or `count` around `anchor`, in
    /// one namespace, optionally only those with `tag`; with the holes it overlaps.
    case messageHistory(peerId: PeerId, namespace: MessageId.Namespace, anchor: MessageIndex?, count: Int, tag: MessageTags?)
    /// The first `count` rows of a chat-list group.
    case chatList(groupId: PeerGroupId, anchor: ChatListIndex?, count: Int)
    /// The holes all live history views show (emits only when that set changes).
    case messageHistoryHoles
    /// The holes all live chat-list views show (emits only when that set changes).
    case chatListHoles
    /// A peer with what it refers to: its associated peers, their presences, its notification settings and
    /// contact status, and per `components` its cached data, the peers and messages that refers to, and its
    /// chat-list group (``PeerView``).
    case peer(PeerId, components: PeerViewComponents)
    /// One peer's chat state (``PeerChatStateView``).
    case peerChatState(PeerId)
    /// One peer's cached data (``CachedPeerDataView``).
    case cachedPeerData(PeerId)
    /// The presences of a set of peers (``PeerPresencesView``).
    case peerPresences(Set<PeerId>)
    /// The notification settings that apply to each of a set of peers (``PeerNotificationSettingsView``).
    case peerNotificationSettings(Set<PeerId>)
    /// The contact list with the contacts' peers and, when `includePresences`, presences (``ContactPeersView``).
    case contacts(includePresences: Bool)
    /// Whether one peer is a contact (``IsContactView``).
    case isContact(PeerId)
    /// The current message for each id that exists (``MessagesView``).
    case messages(Set<MessageId>)
    /// The items of one ordered item list (``OrderedItemListView``).
    case orderedItemList(id: Int32)
    /// The indices of the messages waiting to be sent (``UnsentMessagesView``).
    case unsentMessages

    /// Views derived from the other live views: updated after them.
    var isDerived: Bool {
        switch self {
        case .messageHistoryHoles, .chatListHoles: return true
        default: return false
        }
    }

    /// A fresh view of this key, built from the tables.
    func makeView(tables: PostboxTables, tracker: ViewTracker) throws -> any MutablePostboxView {
        switch self {
        case let .messageHistory(peerId, namespace, anchor, count, tag):
            return try MutableMessageHistoryView(peerId: peerId, namespace: namespace, anchor: anchor, count: count, tag: tag, tables: tables)
        case let .chatList(groupId, anchor, count): return try MutableChatListView(groupId: groupId, anchor: anchor, count: count, tables: tables)
        case .messageHistoryHoles: return MutableDerivedSetView.messageHistoryHoles(tracker: tracker)
        case .chatListHoles: return MutableDerivedSetView.chatListHoles(tracker: tracker)
        case .postboxState: return try MutablePostboxStateView(tables: tables)
        case let .basicPeer(peerId): return try MutableBasicPeerView(peerId: peerId, tables: tables)
        case let .preferences(keys): return try MutablePreferencesView(keys: keys, tables: tables)
        case let .peerMergedOperationLog(tag, limit): return try MutableMergedOperationLogView(tag: tag, limit: limit, tables: tables)
        case let .totalUnreadState(groupId): return try MutableTotalUnreadView(groupId: groupId, tables: tables)
        case let .combinedReadState(peerId): return try MutableCombinedReadStateView(peerId: peerId, tables: tables)
        case let .peer(peerId, components): return try MutablePeerView(peerId: peerId, components: components, tables: tables)
        case let .peerChatState(peerId): return try MutablePeerChatStateView(peerId: peerId, tables: tables)
        case let .cachedPeerData(peerId): return try MutableCachedPeerDataView(peerId: peerId, tables: tables)
        case let .peerPresences(peerIds): return try MutablePeerPresencesView(peerIds: peerIds, tables: tables)
        case let .peerNotificationSettings(peerIds): return try MutablePeerNotificationSettingsView(peerIds: peerIds, tables: tables)
        case let .contacts(includePresences): return try MutableContactPeersView(includePresences: includePresences, tables: tables)
        case let .isContact(peerId): return try MutableIsContactView(peerId: peerId, tables: tables)
        case let .messages(ids): return try MutableMessagesView(ids: ids, tables: tables)
        case let .orderedItemList(id): return try MutableOrderedItemListView(collectionId: id, tables: tables)
        case .unsentMessages: return try MutableUnsentMessagesView(tables: tables)
        }
    }
}

