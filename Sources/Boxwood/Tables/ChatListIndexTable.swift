import BoxwoodStore
/// Table 8: each peer's chat-list state (Postbox's `ChatListIndexTable`): its inclusion (group, pinning, minimum
/// timestamp), its top message and its interface state's `overrideChatTimestamp`, both as last placed in the chat
/// list. Int64 keys (the PeerId) → little-endian value:
///
/// ```
/// kind UInt8: 0 not included, 1 included if it has messages or is pinned or has a minimum timestamp
///   kind 1: groupId Int32, flags UInt8 (0x01 pinned, 0x02 min timestamp), [pinningIndex UInt16], [minTimestamp Int32]
/// hasTop UInt8: 0 or 1
///   1: top message namespace Int32, id Int32, timestamp Int32 (the peer is the key)
/// [only when the chat has an override timestamp: 1 UInt8, overrideChatTimestamp Int32]
/// ```
///
/// A peer without an entry has ``MessageHistoryConfiguration/defaultInclusion`` and no top message. Write-through
/// with a read cache. Every peer changed in a transaction keeps its entry from before the first change
/// (``initialEntries``): the chat list (table 9) still reflects those until ``ChatListTable/replay`` moves them,
/// and the total unread state is updated from the difference (``commitTotalUnreadStates``).
final class ChatListIndexTable: Table {
    static let tableId: Int32 = 8

    struct Entry: Hashable {
        var inclusion: PeerChatListInclusion
        var topMessageIndex: MessageIndex?
        /// The chat's ``StoredPeerChatInterfaceState/overrideChatTimestamp`` as last placed (a draft's time).
        var overrideTimestamp: Int32? = nil

        /// Where the peer is listed: its group and chat-list index, or nil when it is not listed. The index's
        /// timestamp is the latest of the top message's, the minimum timestamp and the override timestamp (an
        /// override alone does not list a chat).
        func listing(_ peerId: PeerId) -> (groupId: PeerGroupId, index: ChatListIndex)? {
            guard case let .ifHasMessagesOrOneOf(groupId, pinningIndex, minTimestamp) = inclusion else { return nil }
            guard topMessageIndex != nil || pinningIndex != nil || minTimestamp != nil else { return nil }
            var messageIndex = topMessageIndex
            if let minTimestamp, messageIndex.map({ $0.timestamp < minTimestamp }) ?? true {
                messageIndex = MessageIndex(id: MessageId(peerId: peerId, namespace: 0, id: 0), timestamp: minTimestamp)
            }
            var index = messageIndex ?? MessageIndex(id: MessageId(peerId: peerId, namespace: 0, id: 0), timestamp: 0)
            if let overrideTimestamp, overrideTimestamp > index.timestamp {
                index = MessageIndex(id: index.id, timestamp: overrideTimestamp)
            }
            return (groupId, ChatListIndex(pinningIndex: pinningIndex, messageIndex: index))
        }
    }

    private let defaultInclusion: PeerChatListInclusion
    private var cache: [PeerId: Entry] = [:]

    /// The entry each peer changed in this transaction had before its first change.
    private(set) var initialEntries: [PeerId: Entry] = [:]
    /// Inclusions set in this transaction (Postbox's `currentUpdatedChatListInclusions`).
    private(set) var updatedInclusions: [PeerId: PeerChatListInclusion] = [:]
    /// Total unread states changed in this transaction.
    private(set) var updatedTotalUnreadStates: [PeerGroupId: ChatListTotalUnreadState] = [:]

    init(valueBox: ValueBox, defaultInclusion: PeerChatListInclusion, useCaches: Bool = true) {
        self.defaultInclusion = defaultInclusion
        super.init(valueBox: valueBox, table: ValueBoxTable(id: Self.tableId, keyType: .int64), useCaches: useCaches)
    }

    override func clearMemoryCache() {
        cache.removeAll()
        initialEntries.removeAll()
        updatedInclusions.removeAll()
        updatedTotalUnreadStates.removeAll()
    }

    func resetChanges() {
        initialEntries.removeAll()
        updatedInclusions.removeAll()
        updatedTotalUnreadStates.removeAll()
    }

    private func corrupt(_ reason: String) -> HistoryTableError { .corrupt(table: Self.tableId, reason: reason) }

    // MARK: Entries

    func get(_ peerId: PeerId) throws -> Entry {
        if let cached = cache[peerId] { return cached }
        var entry = Entry(inclusion: defaultInclusion, topMessageIndex: nil)
        if let buffer = try valueBox.get(table, key: ValueBoxKey(int64: peerId.toInt64())) {
            entry = try decode(peerId, buffer)
        }
        cache[peerId] = entry
        return entry
    }

    private func decode(_ peerId: PeerId, _ buffer: MemoryBuffer) throws -> Entry {
        let (entry, trailingBytes) = try buffer.read(orThrow: corrupt("entry of \(peerId)")) { (reader) throws(ByteReadError) in
            let inclusion: PeerChatListInclusion
            let tagOffset = reader.offset
            switch try reader.uint8() {
            case 0:
                inclusion = .notIncluded
            case 1:
                let group = try reader.int32()
                let flags = try reader.uint8()
                let pinningIndex: UInt16? = flags & 1 != 0 ? try reader.uint16() : nil
                let minTimestamp: Int32? = flags & 2 != 0 ? try reader.int32() : nil
                inclusion = .ifHasMessagesOrOneOf(groupId: PeerGroupId(rawValue: group), pinningIndex: pinningIndex, minTimestamp: minTimestamp)
            case let tag:
                throw .undefinedByte(tag, offset: tagOffset)
            }
            let top = try reader.optionalMessageIndex(peerId: peerId)
            var overrideTimestamp: Int32?
            if reader.remaining > 0 {
                let flagOffset = reader.offset
                let flag = try reader.uint8()
                guard flag == 1 else { throw .undefinedByte(flag, offset: flagOffset) }
                overrideTimestamp = try reader.int32()
            }
            return (Entry(inclusion: inclusion, topMessageIndex: top, overrideTimestamp: overrideTimestamp), reader.remaining)
        }
        guard trailingBytes == 0 else { throw corrupt("entry of \(peerId) has trailing bytes") }
        return entry
    }

    private func set(_ peerId: PeerId, _ entry: Entry) throws {
        let current = try get(peerId)
        guard current != entry else { return }
        if initialEntries[peerId] == nil { initialEntries[peerId] = current }
        let value = ByteBuffer(capacity: 64)
        switch entry.inclusion {
        case .notIncluded:
            value.append(UInt8(0))
        case let .ifHasMessagesOrOneOf(groupId, pinningIndex, minTimestamp):
            value.append(UInt8(1))
            value.append(groupId.rawValue)
            value.append(UInt8((pinningIndex != nil ? 1 : 0) | (minTimestamp != nil ? 2 : 0)))
            if let pinningIndex { value.append(pinningIndex) }
            if let minTimestamp { value.append(minTimestamp) }
        }
        value.appendOptionalMessageIndex(entry.topMessageIndex)
        if let overrideTimestamp = entry.overrideTimestamp {
            value.append(UInt8(1))
            value.append(overrideTimestamp)
        }
        try valueBox.set(table, key: ValueBoxKey(int64: peerId.toInt64()), value: value)
        cache[peerId] = entry
    }

    /// Sets how `peerId` is included in the chat list; the chat list follows at ``ChatListTable/replay``.
    func setInclusion(_ peerId: PeerId, _ inclusion: PeerChatListInclusion) throws {
        var entry = try get(peerId)
        guard entry.inclusion != inclusion else { return }
        entry.inclusion = inclusion
        try set(peerId, entry)
        updatedInclusions[peerId] = inclusion
    }

    /// Records the top message the chat list placed `peerId` at (called by ``ChatListTable/replay``).
    func setTopMessageIndex(_ peerId: PeerId, _ index: MessageIndex?) throws {
        var entry = try get(peerId)
        entry.topMessageIndex = index
        try set(peerId, entry)
    }

    /// Records the override timestamp the chat list placed `peerId` at (called by ``ChatListTable/replay``).
    func setOverrideTimestamp(_ peerId: PeerId, _ timestamp: Int32?) throws {
        var entry = try get(peerId)
        entry.overrideTimestamp = timestamp
        try set(peerId, entry)
    }

    /// Where `peerId` is listed now (after the last replay, plus inclusion changes not replayed yet).
    func listing(_ peerId: PeerId) throws -> (groupId: PeerGroupId, index: ChatListIndex)? {
        try get(peerId).listing(peerId)
    }

    // MARK: Total unread state

    /// What one chat adds to its group's totals: its unread count and whether it is unread, in the filtered
    /// counters too unless it is `removed` from the total (muted).
    static func contribution(_ listing: (groupId: PeerGroupId, index: ChatListIndex)?, _ state: CombinedPeerReadState?,
                             removed: Bool) -> (PeerGroupId, ChatListTotalUnreadState)? {
        guard let listing, let state else { return nil }
        var result = ChatListTotalUnreadState()
        result.messageCount = Int64(state.count)
        result.chatCount = state.isUnread ? 1 : 0
        if !removed {
            result.filteredMessageCount = result.messageCount
            result.filteredChatCount = result.chatCount
        }
        return result.isEmpty ? nil : (listing.groupId, result)
    }

    /// Brings the stored total unread states up to date with the listings, read states and removals from the total
    /// (`filter`: notification settings) changed in this transaction (run after ``ChatListTable/replay``, before the
    /// read states are flushed). A group's totals count the listed chats of the group: their unread incoming
    /// messages, and the chats with anything unread; the filtered counters leave out the chats `filter` removes.
    func commitTotalUnreadStates(readStateTable: MessageHistoryReadStateTable, metadataTable: MessageHistoryMetadataTable,
                                 filter: TotalUnreadFilter) throws {
        let initialStates = readStateTable.initialStates
        let removedBefore = try filter.removedBefore()
        var peers = Set(initialEntries.keys)
        peers.formUnion(initialStates.keys)
        peers.formUnion(removedBefore.keys)
        var deltas: [PeerGroupId: ChatListTotalUnreadState] = [:]
        for peerId in peers.sorted() {
            let currentEntry = try get(peerId)
            let initialEntry = initialEntries[peerId] ?? currentEntry
            let currentState = try readStateTable.get(peerId)
            let initialState: CombinedPeerReadState? = initialStates[peerId] ?? currentState
            let listingBefore = initialEntry.listing(peerId), listingAfter = currentEntry.listing(peerId)
            // A chat that is listed with a read state neither before nor after adds nothing: its settings are not read.
            guard (listingBefore != nil && initialState != nil) || (listingAfter != nil && currentState != nil) else { continue }
            let removedNow = try filter.isRemoved(peerId)
            let before = Self.contribution(listingBefore, initialState, removed: removedBefore[peerId] ?? removedNow)
            let after = Self.contribution(listingAfter, currentState, removed: removedNow)
            if let before { deltas[before.0, default: ChatListTotalUnreadState()].add(before.1, sign: -1) }
            if let after { deltas[after.0, default: ChatListTotalUnreadState()].add(after.1) }
        }
        for (groupId, delta) in deltas.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where !delta.isEmpty {
            var state = try metadataTable.totalUnreadState(groupId: groupId)
            state.add(delta)
            try metadataTable.setTotalUnreadState(groupId: groupId, state)
            updatedTotalUnreadStates[groupId] = state
        }
    }

    /// Every peer with a stored entry (for recounts and checks).
    func allPeerIds() throws -> [PeerId] {
        var result: [PeerId] = []
        try valueBox.scanInt64(table, keys: { key in
            result.append(PeerId(key))
            return true
        })
        return result
    }
}
