/// One hole a live history view shows (what a network layer fetches on demand).
public struct MessageHistoryHolesViewEntry: Hashable, Sendable {
    public let peerId: PeerId
    public let namespace: MessageId.Namespace
    public let space: MessageHistoryHoleSpace
    public let range: ClosedRange<MessageId.Id>
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

/// Derived from the other live views, so the tracker updates it after them.
final class MutableMessageHistoryHolesView: MutablePostboxView {
    private weak var tracker: ViewTracker?
    private var entries: Set<MessageHistoryHolesViewEntry> = []

    init(tracker: ViewTracker) {
        self.tracker = tracker
        entries = compute()
    }

    private func compute() -> Set<MessageHistoryHolesViewEntry> {
        var result = Set<MessageHistoryHolesViewEntry>()
        for view in tracker?.liveViews(of: MutableMessageHistoryView.self) ?? [] {
            for range in view.holes {
                result.insert(MessageHistoryHolesViewEntry(peerId: view.peerId, namespace: view.namespace, space: view.space, range: range))
            }
        }
        return result
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool { try refresh(tables: tables) }

    func refresh(tables: PostboxTables) throws -> Bool {
        let fresh = compute()
        defer { entries = fresh }
        return fresh != entries
    }

    func immutableView() -> any PostboxView { MessageHistoryHolesView(entries: entries) }
}

final class MutableChatListHolesView: MutablePostboxView {
    private weak var tracker: ViewTracker?
    private var entries: Set<ChatListHolesViewEntry> = []

    init(tracker: ViewTracker) {
        self.tracker = tracker
        entries = compute()
    }

    private func compute() -> Set<ChatListHolesViewEntry> {
        var result = Set<ChatListHolesViewEntry>()
        for view in tracker?.liveViews(of: MutableChatListView.self) ?? [] {
            for case let .hole(hole) in view.entries { result.insert(ChatListHolesViewEntry(groupId: view.groupId, hole: hole)) }
        }
        return result
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool { try refresh(tables: tables) }

    func refresh(tables: PostboxTables) throws -> Bool {
        let fresh = compute()
        defer { entries = fresh }
        return fresh != entries
    }

    func immutableView() -> any PostboxView { ChatListHolesView(entries: entries) }
}
