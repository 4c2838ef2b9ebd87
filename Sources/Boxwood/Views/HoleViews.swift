/// Which way a network layer fills a hole a history view shows (Postbox's
/// `MessageHistoryViewRelativeHoleDirection`).
public enum MessageHistoryHoleDirection: Hashable, Sendable {
    /// From the hole's upper end down: the view sits above the hole (the newest messages, or an anchor above
    /// it), so the messages nearest the view are the hole's newest.
    case upperToLower
    /// From the hole's lower end up: the view's anchor lies below the hole.
    case lowerToUpper
    /// Around this message: the view's anchor lies inside the hole.
    case aroundId(MessageId)
}

/// One hole a live history view shows (what a network layer fetches on demand; Postbox's
/// `MessageHistoryHolesViewEntry`): the hole, which way to fill it, the space it is in and how many messages
/// the view wants.
public struct MessageHistoryHolesViewEntry: Hashable, Sendable {
    public let peerId: PeerId
    public let namespace: MessageId.Namespace
    public let space: MessageHistoryHoleSpace
    public let range: ClosedRange<MessageId.Id>
    public let direction: MessageHistoryHoleDirection
    /// The `count` of the view that shows the hole.
    public let count: Int
}

/// The holes every live message-history view shows (Postbox's `MessageHistoryHolesView`); emits only when
/// the set changes.
public struct MessageHistoryHolesView: PostboxView {
    public let entries: Set<MessageHistoryHolesViewEntry>
}

/// The holes every live chat-list view shows, per group; emits only when the set changes.
public struct ChatListHolesView: PostboxView {
    public let entries: Set<ChatListHolesViewEntry>
}

public struct ChatListHolesViewEntry: Hashable, Sendable {
    public let groupId: PeerGroupId
    public let hole: ChatListHole
}

/// A view derived from the other live views (the tracker updates it after them): a set recomputed from the
/// tracker on every update, which reports a change only when the set differs.
final class MutableDerivedSetView<Entry: Hashable>: MutablePostboxView {
    private weak var tracker: ViewTracker?
    private let compute: (ViewTracker) -> Set<Entry>
    private let snapshot: (Set<Entry>) -> any PostboxView
    private var entries: Set<Entry> = []

    init(tracker: ViewTracker, compute: @escaping (ViewTracker) -> Set<Entry>, snapshot: @escaping (Set<Entry>) -> any PostboxView) {
        self.tracker = tracker
        self.compute = compute
        self.snapshot = snapshot
        entries = compute(tracker)
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool { try refresh(tables: tables) }

    func refresh(tables: PostboxTables) throws -> Bool {
        guard let tracker else { return false }
        let fresh = compute(tracker)
        defer { entries = fresh }
        return fresh != entries
    }

    func immutableView() -> any PostboxView { snapshot(entries) }
}

extension MutableDerivedSetView where Entry == MessageHistoryHolesViewEntry {
    /// The holes every live history view shows.
    static func messageHistoryHoles(tracker: ViewTracker) -> MutableDerivedSetView {
        MutableDerivedSetView(tracker: tracker, compute: { tracker in
            var result = Set<MessageHistoryHolesViewEntry>()
            for view in tracker.liveViews(of: MutableMessageHistoryView.self) {
                for range in view.holes {
                    result.insert(MessageHistoryHolesViewEntry(peerId: view.peerId, namespace: view.namespace, space: view.space, range: range,
                                                               direction: view.fillDirection(of: range), count: view.count))
                }
            }
            return result
        }, snapshot: { MessageHistoryHolesView(entries: $0) })
    }
}

extension MutableDerivedSetView where Entry == ChatListHolesViewEntry {
    /// The holes every live chat-list view shows.
    static func chatListHoles(tracker: ViewTracker) -> MutableDerivedSetView {
        MutableDerivedSetView(tracker: tracker, compute: { tracker in
            var result = Set<ChatListHolesViewEntry>()
            for view in tracker.liveViews(of: MutableChatListView.self) {
                for case let .hole(hole) in view.entries { result.insert(ChatListHolesViewEntry(groupId: view.groupId, hole: hole)) }
            }
            return result
        }, snapshot: { ChatListHolesView(entries: $0) })
    }
}
