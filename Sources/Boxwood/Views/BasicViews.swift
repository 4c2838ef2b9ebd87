import BoxwoodStore
/// The account state. (`@unchecked Sendable`: the state object is never mutated after it is stored.)
public struct PostboxStateView: PostboxView, @unchecked Sendable {
    public let state: (any PostboxCoding)?
}

final class MutablePostboxStateView: MutablePostboxView {
    private var state: (any PostboxCoding)?

    init(tables: PostboxTables) throws { state = try tables.metadata.state() }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        guard let updated = changes.updatedState else { return false }
        state = updated
        return true
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let fresh = try tables.metadata.state()
        defer { state = fresh }
        return !ViewValueComparison.sameEncoding(fresh, state)
    }

    func immutableView() -> any PostboxView { PostboxStateView(state: state) }
}

/// One peer's record (nil when unknown).
public struct BasicPeerView: PostboxView {
    public let peerId: PeerId
    public let peer: (any Peer)?
}

final class MutableBasicPeerView: MutablePostboxView {
    let peerId: PeerId
    private var peer: (any Peer)?

    init(peerId: PeerId, tables: PostboxTables) throws {
        self.peerId = peerId
        peer = try tables.peers.get(peerId)
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        guard let updated = changes.updatedPeers[peerId] else { return false }
        if let peer, peer.isEqual(updated) { return false }
        peer = updated
        return true
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let current = try tables.peers.get(peerId)
        if let peer, let current, peer.isEqual(current) { return false }
        if peer == nil && current == nil { return false }
        peer = current
        return true
    }

    func immutableView() -> any PostboxView { BasicPeerView(peerId: peerId, peer: peer) }
}

/// Preferences entries by key (absent keys are missing from `values`).
public struct PreferencesView: PostboxView {
    public let values: [ValueBoxKey: any PreferencesEntry]
}

final class MutablePreferencesView: MutablePostboxView {
    let keys: Set<ValueBoxKey>
    private var values: [ValueBoxKey: any PreferencesEntry] = [:]

    init(keys: Set<ValueBoxKey>, tables: PostboxTables) throws {
        self.keys = keys
        _ = try refresh(tables: tables)
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        var changed = false
        for operation in changes.preferencesOperations where keys.contains(operation.key) {
            switch operation {
            case let .update(key, entry):
                if let old = values[key], old.isEqual(to: entry) { continue }
                values[key] = entry
                changed = true
            case let .remove(key):
                if values.removeValue(forKey: key) != nil { changed = true }
            }
        }
        return changed
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        var fresh: [ValueBoxKey: any PreferencesEntry] = [:]
        for key in keys { if let entry = try tables.preferences.get(key) { fresh[key] = entry } }
        let same = fresh.count == values.count && fresh.allSatisfy { key, entry in values[key].map { $0.isEqual(to: entry) } ?? false }
        values = fresh
        return !same
    }

    func immutableView() -> any PostboxView { PreferencesView(values: values) }
}

/// The head of a tag's merged operation-log queue.
public struct MergedOperationLogView: PostboxView, @unchecked Sendable {
    public let entries: [PeerOperationLogEntry]
}

final class MutableMergedOperationLogView: MutablePostboxView {
    let tag: PeerOperationLogTag
    let limit: Int
    private var entries: [PeerOperationLogEntry] = []

    init(tag: PeerOperationLogTag, limit: Int, tables: PostboxTables) throws {
        self.tag = tag
        self.limit = limit
        entries = try tables.operationLog.getMergedEntries(tag, fromIndex: 0, limit: limit)
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        let touched = changes.peerMergedOperationLogOperations.contains { operation in
            switch operation {
            case let .append(entry), let .updateContents(entry): return entry.tag == tag
            case let .remove(tag, _): return tag == self.tag
            }
        }
        guard touched else { return false }
        return try refresh(tables: tables)
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let fresh = try tables.operationLog.getMergedEntries(tag, fromIndex: 0, limit: limit)
        defer { entries = fresh }
        return fresh.count != entries.count || !zip(fresh, entries).allSatisfy { a, b in
            a.peerId == b.peerId && a.tag == b.tag && a.tagLocalIndex == b.tagLocalIndex && a.mergedIndex == b.mergedIndex
                && ViewValueComparison.sameEncoding(a.contents, b.contents)
        }
    }

    func immutableView() -> any PostboxView { MergedOperationLogView(entries: entries) }
}

/// The unread totals of a chat-list group.
public struct TotalUnreadView: PostboxView {
    public let groupId: PeerGroupId
    public let state: ChatListTotalUnreadState
}

final class MutableTotalUnreadView: MutablePostboxView {
    let groupId: PeerGroupId
    private var state: ChatListTotalUnreadState

    init(groupId: PeerGroupId, tables: PostboxTables) throws {
        self.groupId = groupId
        state = try tables.history.metadata.totalUnreadState(groupId: groupId)
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        guard let updated = changes.updatedTotalUnreadStates[groupId], updated != state else { return false }
        state = updated
        return true
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let current = try tables.history.metadata.totalUnreadState(groupId: groupId)
        defer { state = current }
        return current != state
    }

    func immutableView() -> any PostboxView { TotalUnreadView(groupId: groupId, state: state) }
}

/// One chat's read state (nil: none stored).
public struct CombinedReadStateView: PostboxView {
    public let peerId: PeerId
    public let state: CombinedPeerReadState?
}

final class MutableCombinedReadStateView: MutablePostboxView {
    let peerId: PeerId
    private var state: CombinedPeerReadState?

    init(peerId: PeerId, tables: PostboxTables) throws {
        self.peerId = peerId
        state = try tables.history.readStates.get(peerId)
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        guard changes.alteredInitialPeerCombinedReadStates.keys.contains(peerId) else { return false }
        return try refresh(tables: tables)
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let current = try tables.history.readStates.get(peerId)
        defer { state = current }
        return current != state
    }

    func immutableView() -> any PostboxView { CombinedReadStateView(peerId: peerId, state: state) }
}
