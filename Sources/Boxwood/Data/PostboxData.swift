/// One typed piece of data an app reads or follows (TelegramCore's `EngineData` items): `.peer(id)`,
/// `.message(id)`, `.chatList(count:)`, `.unreadCount()`… Read it once with ``Postbox/get(_:)`` or follow it with
/// ``Postbox/subscribe(_:)``; the value has its type, so caller code has no casts.
///
/// ```swift
/// let author = try await postbox.get(.peer(message.authorId!))          // (any Peer)?
/// for try await unread in postbox.subscribe(.unreadCount()) { badge = unread }   // Int64
/// ```
///
/// Each item is one live view (``PostboxViewQuery``) and what to take from its snapshot: `get` builds the view
/// once in a transaction, `subscribe` follows it and yields a value each time it differs from the last one.
public struct PostboxDataItem<Value: Sendable>: Sendable {
    /// Builds the view once in a transaction of `postbox` and takes the value.
    let read: @Sendable (Postbox) async throws -> Value
    /// Follows the view on `postbox`, yielding the value when it differs from the last one.
    let follow: @Sendable (Postbox) -> AsyncThrowingStream<Value, any Error>

    /// An item reading and following with these closures.
    init(read: @escaping @Sendable (Postbox) async throws -> Value, follow: @escaping @Sendable (Postbox) -> AsyncThrowingStream<Value, any Error>) {
        self.read = read
        self.follow = follow
    }

    /// An item over `query`'s view, taking `value` from each snapshot; `same` tells a repeat.
    init<View: PostboxView>(_ query: PostboxViewQuery<View>, same: @escaping @Sendable (Value, Value) -> Bool,
                            _ value: @escaping @Sendable (View) -> Value) {
        read = { postbox in
            try await postbox.transaction { tx in
                try value(query.makeSnapshot(tables: try tx.tables, tracker: postbox.viewTracker))
            }
        }
        follow = { postbox in Self.distinct(postbox.view(query), same: same, value) }
    }
}

extension PostboxDataItem {
    /// `source`'s elements as values, each yielded only when it differs from the last one (`same`). Ending the
    /// iteration cancels the task, which ends `source` (and so unregisters the view it follows).
    static func distinct<Source: Sendable>(_ source: AsyncThrowingStream<Source, any Error>, same: @escaping @Sendable (Value, Value) -> Bool,
                                           _ value: @escaping @Sendable (Source) -> Value) -> AsyncThrowingStream<Value, any Error> {
        AsyncThrowingStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task {
                var last: Value?
                do {
                    for try await element in source {
                        let next = value(element)
                        if let last, same(last, next) { continue }
                        last = next
                        continuation.yield(next)
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// An item whose value is `transform` of this one's: how a layer above (or the app) builds its own typed items
    /// over the Postbox's (``BoxwoodSync`` reads a message's reactions this way). `same` tells a repeat, so a
    /// subscription yields only when the transformed value changed.
    public func map<T: Sendable>(same: @escaping @Sendable (T, T) -> Bool, _ transform: @escaping @Sendable (Value) -> T) -> PostboxDataItem<T> {
        let read = read
        let follow = follow
        return PostboxDataItem<T>(
            read: { postbox in transform(try await read(postbox)) },
            follow: { postbox in PostboxDataItem<T>.distinct(follow(postbox), same: same, transform) })
    }
}

extension PostboxDataItem where Value == (any Peer)? {
    /// A peer's record, nil when not stored.
    public static func peer(_ id: PeerId) -> Self {
        Self(.basicPeer(id), same: { ViewValueComparison.same($0, $1) }) { $0.peer }
    }
}

extension PostboxDataItem where Value == Message? {
    /// A message, rendered (author, peers, replied-to messages), nil when not stored.
    public static func message(_ id: MessageId) -> Self {
        Self(.messages([id]), same: { ViewValueComparison.same($0, $1) }) { $0.messages[id] }
    }
}

extension PostboxDataItem where Value == [ChatListEntry] {
    /// `count` rows of a chat list (the first, or those below `anchor`), each chat with what its row shows.
    public static func chatList(groupId: PeerGroupId = .root, anchor: ChatListIndex? = nil, count: Int) -> Self {
        Self(.chatList(groupId: groupId, anchor: anchor, count: count), same: { MutableChatListView.same($0, $1) }) { $0.entries }
    }
}

extension PostboxDataItem where Value == Int64 {
    /// Unread messages in a chat-list group: the badge. Muted chats (whose notification settings remove them from
    /// the total unread count) are left out unless `includingMuted`.
    public static func unreadCount(groupId: PeerGroupId = .root, includingMuted: Bool = false) -> Self {
        Self(.totalUnreadState(groupId: groupId), same: ==) { includingMuted ? $0.state.messageCount : $0.state.filteredMessageCount }
    }
}

extension PostboxDataItem where Value == CombinedPeerReadState? {
    /// A chat's read state (with its unread count), nil when it has none.
    public static func readState(_ peerId: PeerId) -> Self {
        Self(.combinedReadState(peerId: peerId), same: ==) { $0.state }
    }
}

extension PostboxDataItem where Value == (any PeerNotificationSettings)? {
    /// The notification settings that apply to a peer (those of its ``Peer/notificationSettingsPeerId``, else its
    /// own), nil when none.
    public static func notificationSettings(_ peerId: PeerId) -> Self {
        Self(.peerNotificationSettings([peerId]), same: { ViewValueComparison.same($0, $1) }) { $0.notificationSettings[peerId] }
    }
}

extension PostboxDataItem where Value == (any PeerPresence)? {
    /// A peer's presence, nil when none.
    public static func presence(_ peerId: PeerId) -> Self {
        Self(.peerPresences([peerId]), same: { ViewValueComparison.same($0, $1) }) { $0.presences[peerId] }
    }
}

extension PostboxDataItem where Value == Bool {
    /// Whether a peer is in the contact list.
    public static func isContact(_ peerId: PeerId) -> Self {
        Self(.isContact(peerId), same: ==) { $0.isContact }
    }
}

extension Postbox {
    /// Reads `item` now, in a transaction: `try await postbox.get(.peer(id))`.
    /// - Throws: What a transaction throws (``PostboxError/closed``, a storage error, a decoding error).
    public func get<Value>(_ item: PostboxDataItem<Value>) async throws -> Value {
        try await item.read(self)
    }

    /// Follows `item`: its current value first, then a value after each transaction (of any process) that changed
    /// it. A slow consumer gets the newest value. Throws as ``view(_:)`` does (the view failed, the Postbox was
    /// suspended, watching other processes failed); ends without an error when the Postbox closes. Ending the
    /// iteration unregisters the view.
    public func subscribe<Value>(_ item: PostboxDataItem<Value>) -> AsyncThrowingStream<Value, any Error> {
        item.follow(self)
    }
}
