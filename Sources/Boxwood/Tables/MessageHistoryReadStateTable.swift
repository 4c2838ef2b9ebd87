import BoxwoodStore
/// Table 14: each chat's read states, per message namespace (Postbox's `MessageHistoryReadStateTable`). Int64 keys
/// (the PeerId) → the ``CombinedPeerReadState`` object's fields (PostboxEncoder, not root-wrapped: `n` the
/// namespaces ascending, `s` the ``PeerReadState`` objects).
///
/// Write-back: states are read into a cache, changed there, and written by ``beforeCommit()``. The first change
/// of a peer in a transaction remembers its state before (``initialStates``: Postbox's
/// `alteredInitialPeerCombinedReadStates` are built from it). A peer without a stored state starts with
/// ``MessageHistoryConfiguration/defaultMessageNamespaceReadStates`` (nil when those are empty).
///
/// The unread `count` of a namespace is kept equal to the number of stored incoming messages it has not read, as
/// long as the history is complete: incoming adds and deletes adjust it, reads subtract the incoming messages they
/// cover (or recount above the new mark when the read range has holes, where the server's count is unknown).
final class MessageHistoryReadStateTable: Table {
    static let tableId: Int32 = 14

    private let defaultStates: [MessageId.Namespace: PeerReadState]
    private var cache: [PeerId: CombinedPeerReadState?] = [:]
    private var dirty = Set<PeerId>()

    /// The state each peer changed in this transaction had before its first change (nil: no state).
    private(set) var initialStates: [PeerId: CombinedPeerReadState?] = [:]

    init(valueBox: ValueBox, defaultStates: [MessageId.Namespace: PeerReadState], useCaches: Bool = true) {
        self.defaultStates = defaultStates
        super.init(valueBox: valueBox, table: ValueBoxTable(id: Self.tableId, keyType: .int64), useCaches: useCaches)
    }

    /// Drops the cache, including changes not yet written (call after an aborted transaction).
    override func clearMemoryCache() {
        cache.removeAll()
        dirty.removeAll()
        initialStates.removeAll()
    }

    func resetChanges() {
        initialStates.removeAll()
    }

    /// The peers whose state changed in this transaction.
    var updatedPeerIds: Set<PeerId> { Set(initialStates.keys) }

    // MARK: Reads

    func get(_ peerId: PeerId) throws -> CombinedPeerReadState? {
        if let cached = cache[peerId] { return cached }
        var state: CombinedPeerReadState?
        if let buffer = try valueBox.get(table, key: ValueBoxKey(int64: peerId.toInt64())) {
            do {
                state = try CombinedPeerReadState(decoder: PostboxDecoder(buffer: buffer))
            } catch {
                throw HistoryTableError.corrupt(table: Self.tableId, reason: "read state of \(peerId): \(error)")
            }
        } else if !defaultStates.isEmpty {
            state = CombinedPeerReadState(states: defaultStates)
        }
        cache[peerId] = .some(state)
        return state
    }

    private func set(_ peerId: PeerId, _ state: CombinedPeerReadState) throws {
        if initialStates[peerId] == nil {
            initialStates[peerId] = .some(try get(peerId))
        }
        cache[peerId] = .some(state)
        dirty.insert(peerId)
    }

    override func beforeCommit() throws {
        for peerId in dirty.sorted() {
            guard let entry = cache[peerId], let state = entry else { continue }
            let encoder = PostboxEncoder()
            state.encode(encoder)
            try valueBox.set(table, key: ValueBoxKey(int64: peerId.toInt64()), encoder: encoder)
        }
        dirty.removeAll()
        if !useCaches { cache.removeAll() }
    }

    // MARK: Counter maintenance

    /// Counts newly stored incoming messages as unread where their namespace's state has not read them. Returns
    /// the new state when it changed.
    func addIncomingMessages(_ peerId: PeerId, indices: [MessageIndex]) throws -> CombinedPeerReadState? {
        guard !indices.isEmpty, let combined = try get(peerId) else { return nil }
        var states = combined.states
        var changed = false
        for (namespace, group) in Dictionary(grouping: indices, by: { $0.id.namespace }) {
            guard let state = states[namespace] else { continue }
            var added: Int32 = 0
            var maxId: Int32 = .min
            for index in group where !state.isIncomingMessageIndexRead(index) {
                added &+= 1
                maxId = max(maxId, index.id.id)
            }
            guard added != 0 else { continue }
            var updated = state.withAddedCount(added)
            if case let .idBased(incoming, outgoing, maxKnownId, count, marked) = updated, maxId > maxKnownId {
                updated = .idBased(maxIncomingReadId: incoming, maxOutgoingReadId: outgoing, maxKnownId: maxId, count: count, markedUnread: marked)
            }
            states[namespace] = updated
            changed = true
        }
        guard changed else { return nil }
        let result = CombinedPeerReadState(states: states)
        try set(peerId, result)
        return result
    }

    /// Uncounts removed incoming messages that were unread. Returns the new state when it changed.
    func deleteIncomingMessages(_ peerId: PeerId, indices: [MessageIndex]) throws -> CombinedPeerReadState? {
        guard !indices.isEmpty, let combined = try get(peerId) else { return nil }
        var states = combined.states
        var changed = false
        for (namespace, group) in Dictionary(grouping: indices, by: { $0.id.namespace }) {
            guard let state = states[namespace] else { continue }
            let removed = Int32(clamping: group.filter { !state.isIncomingMessageIndexRead($0) }.count)
            guard removed != 0, state.count != 0 else { continue }
            states[namespace] = state.withAddedCount(-removed)
            changed = true
        }
        guard changed else { return nil }
        let result = CombinedPeerReadState(states: states)
        try set(peerId, result)
        return result
    }

    /// Marks incoming messages of an id-based namespace read up to `messageId`. `countIncoming(range)` counts the
    /// stored incoming messages with ids in a range; `rangeHasHoles(range)` tells whether the history there is
    /// incomplete. Clears the manual unread mark. Returns the new state when it changed.
    func applyIncomingMaxReadId(_ messageId: MessageId, countIncoming: (ClosedRange<Int32>) throws -> Int32,
                                rangeHasHoles: (ClosedRange<Int32>) throws -> Bool) throws -> CombinedPeerReadState? {
        guard let combined = try get(messageId.peerId), let state = combined.states[messageId.namespace] else { return nil }
        guard case let .idBased(maxIncomingReadId, maxOutgoingReadId, maxKnownId, count, markedUnread) = state else { return nil }
        guard maxIncomingReadId < messageId.id || markedUnread else { return nil }
        var newCount = count
        var newMax = maxIncomingReadId
        if maxIncomingReadId < messageId.id {
            newMax = messageId.id
            let range = (maxIncomingReadId + 1)...messageId.id
            if try rangeHasHoles(range) {
                newCount = messageId.id == .max ? 0 : try countIncoming((messageId.id + 1)...Int32.max)
            } else {
                newCount = Int32(clamping: max(0, Int64(count) - Int64(try countIncoming(range))))
            }
        }
        var states = combined.states
        states[messageId.namespace] = .idBased(maxIncomingReadId: newMax, maxOutgoingReadId: maxOutgoingReadId,
                                               maxKnownId: max(maxKnownId, newMax), count: newCount, markedUnread: false)
        let result = CombinedPeerReadState(states: states)
        try set(messageId.peerId, result)
        return result
    }

    /// Marks incoming messages of an index-based namespace read up to `index`. `countIncoming(lower, upper)` counts
    /// stored incoming messages of the namespace with lower < index ≤ upper. Returns the new state when it changed.
    func applyIncomingMaxReadIndex(_ index: MessageIndex, countIncoming: (MessageIndex, MessageIndex) throws -> Int32) throws -> CombinedPeerReadState? {
        guard let combined = try get(index.id.peerId), let state = combined.states[index.id.namespace] else { return nil }
        guard case let .indexBased(maxIncomingReadIndex, maxOutgoingReadIndex, count, markedUnread) = state else { return nil }
        guard maxIncomingReadIndex < index || markedUnread else { return nil }
        var newCount = count
        var newMax = maxIncomingReadIndex
        if maxIncomingReadIndex < index {
            newMax = index
            newCount = Int32(clamping: max(0, Int64(count) - Int64(try countIncoming(maxIncomingReadIndex, index))))
        }
        var states = combined.states
        states[index.id.namespace] = .indexBased(maxIncomingReadIndex: newMax, maxOutgoingReadIndex: maxOutgoingReadIndex,
                                                 count: newCount, markedUnread: false)
        let result = CombinedPeerReadState(states: states)
        try set(index.id.peerId, result)
        return result
    }

    /// Marks outgoing messages read by the other side up to `messageId` (id-based namespaces). Returns the new
    /// state when it changed.
    func applyOutgoingMaxReadId(_ messageId: MessageId) throws -> CombinedPeerReadState? {
        guard let combined = try get(messageId.peerId), let state = combined.states[messageId.namespace] else { return nil }
        guard case let .idBased(incoming, outgoing, maxKnownId, count, marked) = state, outgoing < messageId.id else { return nil }
        var states = combined.states
        states[messageId.namespace] = .idBased(maxIncomingReadId: incoming, maxOutgoingReadId: messageId.id,
                                               maxKnownId: maxKnownId, count: count, markedUnread: marked)
        let result = CombinedPeerReadState(states: states)
        try set(messageId.peerId, result)
        return result
    }

    /// Marks outgoing messages read up to `index` (index-based namespaces).
    func applyOutgoingMaxReadIndex(_ index: MessageIndex) throws -> CombinedPeerReadState? {
        guard let combined = try get(index.id.peerId), let state = combined.states[index.id.namespace] else { return nil }
        guard case let .indexBased(incoming, outgoing, count, marked) = state, outgoing < index else { return nil }
        var states = combined.states
        states[index.id.namespace] = .indexBased(maxIncomingReadIndex: incoming, maxOutgoingReadIndex: index, count: count, markedUnread: marked)
        let result = CombinedPeerReadState(states: states)
        try set(index.id.peerId, result)
        return result
    }

    /// Sets the manual unread mark on `namespace` (`value` true), or clears it on every namespace (false).
    func markUnread(_ peerId: PeerId, namespace: MessageId.Namespace, value: Bool) throws -> CombinedPeerReadState? {
        guard let combined = try get(peerId) else { return nil }
        var states = combined.states
        if value {
            guard let state = states[namespace], !state.markedUnread else { return nil }
            states[namespace] = state.withMarkedUnread(true)
        } else {
            guard combined.markedUnread else { return nil }
            for (namespace, state) in states where state.markedUnread { states[namespace] = state.withMarkedUnread(false) }
        }
        let result = CombinedPeerReadState(states: states)
        try set(peerId, result)
        return result
    }

    /// Replaces the states of the given namespaces (others are kept), as the server reported them.
    func resetStates(_ peerId: PeerId, states newStates: [MessageId.Namespace: PeerReadState]) throws -> CombinedPeerReadState? {
        var states = try get(peerId)?.states ?? [:]
        for (namespace, state) in newStates { states[namespace] = state }
        let result = CombinedPeerReadState(states: states)
        if result == (try get(peerId)) { return nil }
        try set(peerId, result)
        return result
    }
}
