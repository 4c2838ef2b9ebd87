/// The current message for each of a set of ids (those that exist), rendered. Shared by the messages view and
/// the peer view.
struct TrackedMessages {
    let ids: Set<MessageId>
    /// The chats the ids belong to.
    private let chats: Set<PeerId>
    private(set) var messages: [MessageId: Message] = [:]
    /// The peers the messages resolve and the chats of the messages they refer to: a change there re-renders.
    private var referencedPeerIds: Set<PeerId> = []
    private var referencedChats: Set<PeerId> = []
    /// The media the messages show: one updated in place re-renders.
    private var referencedMedia: Set<MediaId> = []

    init(ids: Set<MessageId>, tables: PostboxTables) throws {
        self.ids = ids
        chats = Set(ids.map(\.peerId))
        let renderer = MessageRenderer(tables: tables)
        for id in ids {
            if let message = try renderer.message(id) { messages[id] = message }
        }
        referencedPeerIds = Set(messages.values.flatMap(\.referencedPeerIds))
        referencedChats = Set(messages.values.flatMap { $0.associatedMessageIds.map(\.peerId) })
        referencedMedia = Set(messages.values.flatMap(\.mediaIds))
    }

    /// Reads the messages again when the change record touches their chats, the peers they resolve or the chats
    /// of the messages they refer to; true when a tracked message was added, changed, moved or removed (not
    /// when, say, one was added and removed again) or renders differently.
    mutating func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        guard !ids.isEmpty else { return false }
        guard ViewValueComparison.touches(chats, changes.historyPeerIds)
            || ViewValueComparison.touches(referencedChats, changes.historyPeerIds)
            || ViewValueComparison.touches(referencedPeerIds, changes.updatedPeers)
            || ViewValueComparison.touches(referencedMedia, changes.updatedMedia) else { return false }
        let fresh = try TrackedMessages(ids: ids, tables: tables)
        defer { self = fresh }
        return !fresh.isSame(messages)
    }

    /// Whether the messages held are `other`.
    func isSame(_ other: [MessageId: Message]) -> Bool {
        ViewValueComparison.same(messages, other) { ViewValueComparison.same($0, $1) }
    }
}
