import BoxwoodStore

/// A live query with the type of its snapshots: a ``PostboxViewKey`` that knows which ``PostboxView`` it makes,
/// so that ``Postbox/view(_:)`` and ``CombinedView/subscript(_:)`` hand out that type without casts.
///
/// ```swift
/// for try await chatList in postbox.view(.chatList(count: 50)) {
///     render(chatList.entries)          // a ChatListView
/// }
/// ```
public struct PostboxViewQuery<View: PostboxView>: Hashable, Sendable {
    /// The key the query registers.
    public let key: PostboxViewKey

    /// Only the factories below make queries: each pairs a key with the view type it builds.
    private init(_ key: PostboxViewKey) { self.key = key }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.key == rhs.key }
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }

    /// The view built from the tables now, once (not registered).
    /// - Throws: What building the view throws; a ``PostboxViewError`` if the key built another view type (the
    ///   factories below pair each key with its type, so this is a bug in Boxwood, reported rather than trapped).
    func makeSnapshot(tables: PostboxTables, tracker: ViewTracker) throws -> View {
        let view = try key.makeView(tables: tables, tracker: tracker).immutableView()
        guard let typed = view as? View else {
            throw PostboxViewError(key: key, underlying: ViewTypeMismatch(expected: "\(View.self)", built: "\(type(of: view))"))
        }
        return typed
    }
}

/// A query's key built a view of another type than the query names (a Boxwood bug).
struct ViewTypeMismatch: Error, CustomStringConvertible {
    let expected: String
    let built: String
    var description: String { "the view key built a \(built), not the \(expected) its query names" }
}

extension PostboxViewQuery where View == PostboxStateView {
    /// The account state (`Transaction.setState`).
    public static var postboxState: Self { Self(.postboxState) }
}

extension PostboxViewQuery where View == BasicPeerView {
    /// One peer's record.
    public static func basicPeer(_ peerId: PeerId) -> Self { Self(.basicPeer(peerId)) }
}

extension PostboxViewQuery where View == PreferencesView {
    /// Preferences entries by key.
    public static func preferences(keys: Set<ValueBoxKey>) -> Self { Self(.preferences(keys: keys)) }
}

extension PostboxViewQuery where View == MergedOperationLogView {
    /// The first `limit` entries of a tag's merged operation-log queue.
    public static func peerMergedOperationLog(tag: PeerOperationLogTag, limit: Int) -> Self {
        Self(.peerMergedOperationLog(tag: tag, limit: limit))
    }
}

extension PostboxViewQuery where View == TotalUnreadView {
    /// The unread totals of a chat-list group.
    public static func totalUnreadState(groupId: PeerGroupId = .root) -> Self { Self(.totalUnreadState(groupId: groupId)) }
}

extension PostboxViewQuery where View == CombinedReadStateView {
    /// One chat's read state.
    public static func combinedReadState(peerId: PeerId) -> Self { Self(.combinedReadState(peerId: peerId)) }
}

extension PostboxViewQuery where View == MessageHistoryView {
    /// A window of a chat's history: the newest `count` messages (`anchor` nil) or `count` around `anchor`, in one
    /// namespace, optionally only those with `tag`; with the holes it overlaps.
    public static func messageHistory(peerId: PeerId, namespace: MessageId.Namespace = 0, anchor: MessageIndex? = nil,
                                      count: Int, tag: MessageTags? = nil) -> Self {
        Self(.messageHistory(peerId: peerId, namespace: namespace, anchor: anchor, count: count, tag: tag))
    }
}

extension PostboxViewQuery where View == ChatListView {
    /// `count` rows of a chat-list group: the first ones, or those below `anchor` (a page further down: pass the
    /// previous page's ``ChatListView/nextPageAnchor``).
    public static func chatList(groupId: PeerGroupId = .root, anchor: ChatListIndex? = nil, count: Int) -> Self {
        Self(.chatList(groupId: groupId, anchor: anchor, count: count))
    }
}

extension PostboxViewQuery where View == MessageHistoryHolesView {
    /// The holes all live history views show.
    public static var messageHistoryHoles: Self { Self(.messageHistoryHoles) }
}

extension PostboxViewQuery where View == ChatListHolesView {
    /// The holes all live chat-list views show.
    public static var chatListHoles: Self { Self(.chatListHoles) }
}

extension PostboxViewQuery where View == PeerView {
    /// A peer with what it refers to (``PeerView``).
    public static func peer(_ peerId: PeerId, components: PeerViewComponents = []) -> Self {
        Self(.peer(peerId, components: components))
    }
}

extension PostboxViewQuery where View == PeerChatStateView {
    /// One peer's chat state.
    public static func peerChatState(_ peerId: PeerId) -> Self { Self(.peerChatState(peerId)) }
}

extension PostboxViewQuery where View == CachedPeerDataView {
    /// One peer's cached data.
    public static func cachedPeerData(_ peerId: PeerId) -> Self { Self(.cachedPeerData(peerId)) }
}

extension PostboxViewQuery where View == PeerPresencesView {
    /// The presences of a set of peers.
    public static func peerPresences(_ peerIds: Set<PeerId>) -> Self { Self(.peerPresences(peerIds)) }
}

extension PostboxViewQuery where View == PeerNotificationSettingsView {
    /// The notification settings that apply to each of a set of peers.
    public static func peerNotificationSettings(_ peerIds: Set<PeerId>) -> Self { Self(.peerNotificationSettings(peerIds)) }
}

extension PostboxViewQuery where View == ContactPeersView {
    /// The contact list with the contacts' peers and, when `includePresences`, presences.
    public static func contacts(includePresences: Bool) -> Self { Self(.contacts(includePresences: includePresences)) }
}

extension PostboxViewQuery where View == IsContactView {
    /// Whether one peer is a contact.
    public static func isContact(_ peerId: PeerId) -> Self { Self(.isContact(peerId)) }
}

extension PostboxViewQuery where View == MessagesView {
    /// The current message for each id that exists.
    public static func messages(_ ids: Set<MessageId>) -> Self { Self(.messages(ids)) }
}

extension PostboxViewQuery where View == OrderedItemListView {
    /// The items of one ordered item list.
    public static func orderedItemList(id: Int32) -> Self { Self(.orderedItemList(id: id)) }
}

extension PostboxViewQuery where View == UnsentMessagesView {
    /// The indices of the messages waiting to be sent.
    public static var unsentMessages: Self { Self(.unsentMessages) }
}
