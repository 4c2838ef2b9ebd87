/// How a history snapshot came about (Postbox's `ViewUpdateType`).
public enum ViewUpdateType: Sendable, Equatable {
    /// The first snapshot.
    case initial
    /// Messages changed.
    case generic
    /// Holes of this chat were filled (the messages arrived from the network).
    case fillHole
    /// Rebuilt after another process's commits.
    case updateVisible
}

/// A window of one chat's history in one namespace (optionally only messages with `tag`): up to `count`
/// messages — the newest ones, or around `anchor` — in ascending order, and the holes that overlap the id span
/// the window covers (where messages may be missing).
public struct MessageHistoryView: PostboxView, @unchecked Sendable {
    public let peerId: PeerId
    public let namespace: MessageId.Namespace
    /// The messages, ascending, with their peers and the messages they refer to resolved.
    public let entries: [Message]
    /// Holes of the view's space overlapping the span it covers, ascending.
    public let holes: [ClosedRange<MessageId.Id>]
    public let updateType: ViewUpdateType

    /// The ids and texts, for comparisons.
    var fingerprint: String {
        "\(entries.map { "\($0.id.id)@\($0.timestamp):\($0.text):\($0.tags.rawValue)" }) holes \(holes)"
    }
}

final class MutableMessageHistoryView: MutablePostboxView {
    let peerId: PeerId
    let namespace: MessageId.Namespace
    let anchor: MessageIndex?
    let count: Int
    let tag: MessageTags?
    private(set) var entries: [Message] = []
    /// The peers the entries and the messages they refer to resolve (or would, once stored), and the chats of the
    /// messages they refer to: a change there re-renders the window.
    private var referencedPeerIds: Set<PeerId> = []
    private var referencedChats: Set<PeerId> = []
    /// The media the entries and the messages they refer to show: one updated in place re-renders the window.
    private var referencedMedia: Set<MediaId> = []
    private(set) var holes: [ClosedRange<MessageId.Id>] = []
    private var updateType = ViewUpdateType.initial

    init(peerId: PeerId, namespace: MessageId.Namespace, anchor: MessageIndex?, count: Int, tag: MessageTags?, tables: PostboxTables) throws {
        self.peerId = peerId
        self.namespace = namespace
        self.anchor = anchor
        self.count = max(1, count)
        self.tag = tag
        try load(tables)
    }

    var space: MessageHistoryHoleSpace { tag.map { .tag($0) } ?? .everywhere }

    /// Which way to fill one of the view's holes: a newest-first window sits above every hole it shows; an
    /// anchored one is above, below or inside it.
    func fillDirection(of hole: ClosedRange<MessageId.Id>) -> MessageHistoryHoleDirection {
        guard let anchor else { return .upperToLower }
        if hole.contains(anchor.id.id) { return .aroundId(anchor.id) }
        return hole.upperBound < anchor.id.id ? .upperToLower : .lowerToUpper
    }

    private func indices(_ tables: PostboxTables, anchor: MessageIndex?, direction: HistoryReadDirection, limit: Int) throws -> [MessageIndex] {
        let history = tables.history.history
        if let tag {
            return try history.tagIndices(peerId: peerId, tag: tag, namespaces: [namespace], anchor: anchor, direction: direction, limit: limit)
        }
        return try history.indices(peerId: peerId, namespaces: [namespace], anchor: anchor, direction: direction, limit: limit)
    }

    /// Loads the window. With `keeping` (the ids of the messages the transaction touched, see
    /// ``PostboxChanges/historyMessageIds``), a message still in the window at the same index is kept as rendered
    /// unless it or a message it refers to was touched, or a peer or medium one of those it refers to resolves:
    /// then its stored value and everything its rendering reads are unchanged (the caller reloads everything when
    /// a peer, medium or other chat the window's messages refer to changed).
    private func load(_ tables: PostboxTables, keeping touched: Set<MessageId>? = nil, changes: PostboxChanges? = nil) throws {
        var list: [MessageIndex]
        // A side of the window that got fewer messages than it wants reaches the end of the history that way: the
        // holes out there are in view. (An anchored window short above its anchor still ends below at its oldest
        // message, and the other way round.)
        var coversTop: Bool
        var coversBottom: Bool
        if let anchor {
            let earlier = try indices(tables, anchor: anchor.successor(), direction: .earlier, limit: (count + 1) / 2)
            let later = try indices(tables, anchor: anchor, direction: .later, limit: count / 2)
            list = earlier.reversed() + later
            coversTop = later.count < count / 2
            coversBottom = earlier.count < (count + 1) / 2
        } else {
            list = try indices(tables, anchor: nil, direction: .earlier, limit: count).reversed()
            coversTop = true
            coversBottom = list.count < count
        }
        let renderer = MessageRenderer(tables: tables)
        var kept: [MessageIndex: Message] = [:]
        if let touched {
            for message in entries where !touched.contains(message.id) && !message.associatedMessageIds.contains(where: touched.contains)
                && !message.associatedMessages.values.contains(where: { Self.touches($0, changes) }) {
                kept[message.index] = message
            }
        }
        entries = try list.compactMap { index in
            if let message = kept[index] { return message }
            return try tables.history.history.message(at: index).map(renderer.render)
        }
        // The messages the entries refer to render their own peers and media (a reply shows its target's author).
        referencedPeerIds = Set(entries.flatMap { $0.referencedPeerIds + $0.associatedMessages.values.flatMap(\.referencedPeerIds) })
        referencedMedia = Set(entries.flatMap { $0.mediaIds + $0.associatedMessages.values.flatMap(\.mediaIds) })
        referencedChats = Set(entries.flatMap { $0.associatedMessageIds.map(\.peerId) })
        referencedChats.remove(peerId)
        let lowest: MessageId.Id = coversBottom ? 1 : (list.first?.id.id ?? 1)
        let highest: MessageId.Id = coversTop ? Int32.max - 1 : (list.last?.id.id ?? Int32.max - 1)
        holes = lowest <= highest
            ? try tables.history.holes.holes(peerId: peerId, namespace: namespace, space: space, overlapping: lowest...highest) : []
    }

    /// Whether `changes` updated a peer or medium that rendered message `message` resolves.
    private static func touches(_ message: Message, _ changes: PostboxChanges?) -> Bool {
        guard let changes else { return true }
        return ViewValueComparison.touches(Set(message.referencedPeerIds), changes.updatedPeers)
            || ViewValueComparison.touches(Set(message.mediaIds), changes.updatedMedia)
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        // A change to what the rendered messages refer to outside this chat's history renders them all again.
        let touchedReferences = ViewValueComparison.touches(referencedChats, changes.historyPeerIds)
            || ViewValueComparison.touches(referencedPeerIds, changes.updatedPeers)
            || ViewValueComparison.touches(referencedMedia, changes.updatedMedia)
        let touchedHistory = touchedReferences || changes.historyPeerIds.contains(peerId)
        let holeOperations = changes.holeOperations.filter { $0.key.peerId == peerId && $0.key.namespace == namespace }
        guard touchedHistory || !holeOperations.isEmpty else { return false }
        let before = (entries, holes)
        try load(tables, keeping: touchedReferences ? nil : changes.historyMessageIds, changes: changes)
        guard holes != before.1 || !ViewValueComparison.same(entries, before.0) else { return false }
        let filled = holeOperations.values.contains { $0.contains { if case .remove = $0 { return true } else { return false } } }
        updateType = filled ? .fillHole : .generic
        return true
    }

    /// Reloads after other processes' commits; a change only when the window or its holes differ (a commit to
    /// another chat wakes no history view).
    func refresh(tables: PostboxTables) throws -> Bool {
        let before = (entries, holes)
        try load(tables)
        guard holes != before.1 || !ViewValueComparison.same(entries, before.0) else { return false }
        updateType = .updateVisible
        return true
    }

    func immutableView() -> any PostboxView {
        MessageHistoryView(peerId: peerId, namespace: namespace, entries: entries, holes: holes, updateType: updateType)
    }
}

/// Up to `count` rows of a chat-list group in display order (pinned first, then by top message) — the first ones,
/// or those below `anchor` for the next page — holes included, each chat with what its row shows
/// (``ChatListItem``).
public struct ChatListView: PostboxView {
    public let groupId: PeerGroupId
    /// The row the page starts below (nil: the top of the list).
    public let anchor: ChatListIndex?
    public let entries: [ChatListEntry]

    /// Where the next page starts: the last row's index (pass it as the next view's or read's anchor).
    public var nextPageAnchor: ChatListIndex? { entries.last?.index }

    var fingerprint: String {
        entries.map { entry -> String in
            switch entry {
            case let .chat(item):
                let top = item.topMessage.map { "\($0.id) v\($0.stableVersion) \($0.text)" } ?? "-"
                return "\(item.peerId)@\(item.index) top \(top) unread \(item.unreadCount) peers \(item.peers.count)"
                    + " mentions \(item.mentionCount) draft \(item.embeddedState?.text ?? "-")"
            case let .hole(hole):
                return "hole \(hole)"
            }
        }.joined(separator: ", ")
    }
}

final class MutableChatListView: MutablePostboxView {
    let groupId: PeerGroupId
    let anchor: ChatListIndex?
    let count: Int
    private(set) var entries: [ChatListEntry] = []
    /// The chats listed, the peers their rows resolve, and the chats of the messages their top messages refer to.
    private var listed: Set<PeerId> = []
    private var referencedPeerIds: Set<PeerId> = []
    private var referencedChats: Set<PeerId> = []
    /// The media of the rows' top messages: one updated in place reloads the rows.
    private var referencedMedia: Set<MediaId> = []

    init(groupId: PeerGroupId, anchor: ChatListIndex?, count: Int, tables: PostboxTables) throws {
        self.groupId = groupId
        self.anchor = anchor
        self.count = max(1, count)
        try load(tables)
    }

    /// Loads the window. With `keeping` (the ids of the messages the transaction touched, see
    /// ``PostboxChanges/historyMessageIds``), a message still in the window at the same index is kept as rendered
    /// unless it or a message it refers to was touched, or a peer or medium one of those it refers to resolves:
    /// then its stored value and everything its rendering reads are unchanged (the caller reloads everything when
    /// a peer, medium or other chat the window's messages refer to changed).
    private func load(_ tables: PostboxTables, keeping touched: Set<MessageId>? = nil, changes: PostboxChanges? = nil) throws {
        entries = try ChatListItemLoader(tables: tables).entries(groupId: groupId, before: anchor, count: count)
        let items = entries.compactMap { entry -> ChatListItem? in if case let .chat(item) = entry { item } else { nil } }
        listed = Set(items.map(\.peerId))
        referencedPeerIds = Set(items.flatMap(\.referencedPeerIds))
        referencedMedia = Set(items.flatMap { $0.topMessage?.mediaIds ?? [] })
        referencedChats = Set(items.flatMap { $0.topMessage?.associatedMessageIds.map(\.peerId) ?? [] })
    }

    /// Reloads when the group's order changed or when something a row shows changed: a listed chat's history (its
    /// top message edited, its read state), a peer a row resolves, a read state or notification settings, a listed
    /// chat's interface state (draft) or tag summaries.
    /// Whether `changes` updated a peer or medium that rendered message `message` resolves.
    private static func touches(_ message: Message, _ changes: PostboxChanges?) -> Bool {
        guard let changes else { return true }
        return ViewValueComparison.touches(Set(message.referencedPeerIds), changes.updatedPeers)
            || ViewValueComparison.touches(Set(message.mediaIds), changes.updatedMedia)
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        let touched = !(changes.chatListOperations[groupId]?.isEmpty ?? true)
            || ViewValueComparison.touches(listed, changes.historyPeerIds)
            || ViewValueComparison.touches(referencedChats, changes.historyPeerIds)
            || ViewValueComparison.touches(referencedPeerIds, changes.updatedPeers)
            || ViewValueComparison.touches(listed, changes.alteredInitialPeerCombinedReadStates)
            || ViewValueComparison.touches(referencedPeerIds, changes.updatedPeerNotificationSettings)
            || ViewValueComparison.touches(referencedMedia, changes.updatedMedia)
            || ViewValueComparison.touches(listed, changes.updatedPeerChatInterfaceStates)
            || changes.updatedMessageTagSummaries.keys.contains { listed.contains($0.peerId) }
        guard touched else { return false }
        return try refresh(tables: tables)
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let before = entries
        try load(tables)
        return !Self.same(before, entries)
    }

    static func same(_ a: [ChatListEntry], _ b: [ChatListEntry]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { pair in
            switch pair {
            case let (.chat(x), .chat(y)): return x.isSame(as: y)
            case let (.hole(x), .hole(y)): return x == y
            default: return false
            }
        }
    }

    func immutableView() -> any PostboxView { ChatListView(groupId: groupId, anchor: anchor, entries: entries) }
}
