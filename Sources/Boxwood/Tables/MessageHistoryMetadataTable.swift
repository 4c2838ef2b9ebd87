import BoxwoodStore
/// Table 10: counters and flags of the history (Postbox's `MessageHistoryMetadataTable`). Binary keys: global keys
/// start with a 1-byte prefix, per-peer keys are `peerId(8) ‖ prefix(1) ‖ …`. Values are little-endian.
///
/// | key | value |
/// |---|---|
/// | `0x00 ‖ groupId(4)` | empty: the chat list of the group was initialised (seeded with its hole) |
/// | `peerId(8) ‖ 0x01 ‖ namespace(4)` | Int32: the next id to assign in that peer and namespace |
/// | `0x02` | UInt32: the next stable message id |
/// | `0x03 ‖ groupId(4)` | Int64 messages ‖ Int64 chats: the group's total unread state |
/// | `peerId(8) ‖ 0x04` | empty: the peer's history was initialised (seeded with its holes) |
/// | `0x05` | empty: the unsent-message index (table 11) covers every stored message |
///
/// Write-through with a read cache of every value it has seen (``clearMemoryCache()`` after an abort or an
/// external commit).
final class MessageHistoryMetadataTable: Table {
    static let tableId: Int32 = 10

    enum Prefix: UInt8 {
        case chatListInitialized = 0
        case peerNextMessageIdByNamespace = 1
        case nextStableMessageId = 2
        case totalUnreadState = 3
        case peerHistoryInitialized = 4
        case unsentIndexBuilt = 5
    }

    private struct NamespaceKey: Hashable {
        let peerId: PeerId
        let namespace: MessageId.Namespace
    }

    private var nextIdCache: [NamespaceKey: Int32] = [:]
    private var nextStableIdCache: UInt32?
    private var initializedPeers: [PeerId: Bool] = [:]
    private var initializedChatLists: [PeerGroupId: Bool] = [:]
    private var totalUnreadCache: [PeerGroupId: ChatListTotalUnreadState] = [:]

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: ValueBoxTable(id: Self.tableId, keyType: .binary, compactValuesOnCreation: true), useCaches: useCaches)
    }

    override func clearMemoryCache() {
        nextIdCache.removeAll()
        nextStableIdCache = nil
        initializedPeers.removeAll()
        initializedChatLists.removeAll()
        totalUnreadCache.removeAll()
    }

    // MARK: Keys

    private func peerKey(_ peerId: PeerId, _ prefix: Prefix, extra: Int = 0) -> ValueBoxKey {
        var key = ValueBoxKey(length: 9 + extra)
        key.setInt64(0, value: peerId.toInt64())
        key.setUInt8(8, value: prefix.rawValue)
        return key
    }

    func globalKey(_ prefix: Prefix, groupId: PeerGroupId? = nil) -> ValueBoxKey {
        var key = ValueBoxKey(length: groupId == nil ? 1 : 5)
        key.setUInt8(0, value: prefix.rawValue)
        if let groupId { key.setInt32(1, value: groupId.rawValue) }
        return key
    }

    private func corrupt(_ reason: String) -> HistoryTableError { .corrupt(table: Self.tableId, reason: reason) }

    // MARK: Next message id

    /// The id the next partial message of (peer, namespace) gets (1 when none was assigned).
    func nextMessageId(peerId: PeerId, namespace: MessageId.Namespace) throws -> Int32 {
        let cacheKey = NamespaceKey(peerId: peerId, namespace: namespace)
        if let cached = nextIdCache[cacheKey] { return cached }
        var key = peerKey(peerId, .peerNextMessageIdByNamespace, extra: 4)
        key.setInt32(9, value: namespace.rawValue)
        var value: Int32 = 1
        if let stored = try valueBox.readValue(table, key: key, orThrow: corrupt("next message id of \(peerId)/\(namespace)"), { (reader) throws(ByteReadError) in
            let stored = try reader.int32()
            try reader.requireEnd()
            return stored
        }) {
            value = stored
        }
        nextIdCache[cacheKey] = value
        return value
    }

    func setNextMessageId(peerId: PeerId, namespace: MessageId.Namespace, _ value: Int32) throws {
        var key = peerKey(peerId, .peerNextMessageIdByNamespace, extra: 4)
        key.setInt32(9, value: namespace.rawValue)
        try valueBox.setInt32(table, key: key, value)
        nextIdCache[NamespaceKey(peerId: peerId, namespace: namespace)] = value
    }

    // MARK: Stable ids

    /// The next stable id (1 when none was assigned).
    func nextStableMessageId() throws -> UInt32 {
        if let nextStableIdCache { return nextStableIdCache }
        var value: UInt32 = 1
        if let buffer = try valueBox.get(table, key: globalKey(.nextStableMessageId)) {
            value = try buffer.read(orThrow: corrupt("next stable message id")) { (reader) throws(ByteReadError) in
                let stored = try reader.uint32()
                try reader.requireEnd()
                return stored
            }
        }
        nextStableIdCache = value
        return value
    }

    func setNextStableMessageId(_ value: UInt32) throws {
        try valueBox.setInt32(table, key: globalKey(.nextStableMessageId), Int32(bitPattern: value))
        nextStableIdCache = value
    }

    // MARK: Flags

    func isPeerHistoryInitialized(_ peerId: PeerId) throws -> Bool {
        if let cached = initializedPeers[peerId] { return cached }
        let value = try valueBox.exists(table, key: peerKey(peerId, .peerHistoryInitialized))
        initializedPeers[peerId] = value
        return value
    }

    func setPeerHistoryInitialized(_ peerId: PeerId) throws {
        try valueBox.set(table, key: peerKey(peerId, .peerHistoryInitialized), bytes: [])
        initializedPeers[peerId] = true
    }

    func isChatListInitialized(groupId: PeerGroupId) throws -> Bool {
        if let cached = initializedChatLists[groupId] { return cached }
        let value = try valueBox.exists(table, key: globalKey(.chatListInitialized, groupId: groupId))
        initializedChatLists[groupId] = value
        return value
    }

    func setChatListInitialized(groupId: PeerGroupId) throws {
        try valueBox.set(table, key: globalKey(.chatListInitialized, groupId: groupId), bytes: [])
        initializedChatLists[groupId] = true
    }

    /// Whether the unsent-message index was built (not cached: read once per open).
    func isUnsentIndexBuilt() throws -> Bool {
        try valueBox.exists(table, key: globalKey(.unsentIndexBuilt))
    }

    func setUnsentIndexBuilt() throws {
        try valueBox.set(table, key: globalKey(.unsentIndexBuilt), bytes: [])
    }

    // MARK: Total unread state

    /// The total unread state of `groupId` (zeros when none is stored). A value written before the filtered
    /// counters existed (16 bytes) reads with filtered = absolute until ``hasLegacyTotalUnreadState(groupId:)``'s
    /// recount replaces it (`MessageHistoryTables.recountLegacyTotalUnreadStates`, at the first writable open).
    func totalUnreadState(groupId: PeerGroupId) throws -> ChatListTotalUnreadState {
        if let cached = totalUnreadCache[groupId] { return cached }
        var state = ChatListTotalUnreadState()
        if let buffer = try valueBox.get(table, key: globalKey(.totalUnreadState, groupId: groupId)) {
            state = try buffer.read(orThrow: corrupt("total unread state of \(groupId)")) { (reader) throws(ByteReadError) in
                let messages = try reader.int64()
                let chats = try reader.int64()
                if reader.isAtEnd { return ChatListTotalUnreadState(unfilteredMessageCount: messages, chatCount: chats) }
                let filteredMessages = try reader.int64()
                let filteredChats = try reader.int64()
                try reader.requireEnd()
                return ChatListTotalUnreadState(messageCount: messages, chatCount: chats, filteredMessageCount: filteredMessages,
                                                filteredChatCount: filteredChats)
            }
        }
        totalUnreadCache[groupId] = state
        return state
    }

    /// True when `groupId`'s stored total unread state predates the filtered counters (16 bytes).
    func hasLegacyTotalUnreadState(groupId: PeerGroupId) throws -> Bool {
        try valueBox.withValue(table, key: globalKey(.totalUnreadState, groupId: groupId)) { $0.count == 16 } ?? false
    }

    func setTotalUnreadState(groupId: PeerGroupId, _ state: ChatListTotalUnreadState) throws {
        let value = ByteBuffer(capacity: 64)
        value.append(state.messageCount)
        value.append(state.chatCount)
        value.append(state.filteredMessageCount)
        value.append(state.filteredChatCount)
        try valueBox.set(table, key: globalKey(.totalUnreadState, groupId: groupId), value: value)
        totalUnreadCache[groupId] = state
    }

    /// Every group with a stored total unread state.
    func groupsWithTotalUnreadState() throws -> [PeerGroupId] {
        var result: [PeerGroupId] = []
        let start = globalKey(.totalUnreadState)
        try valueBox.range(table, start: start, end: start.paddedWithFF(5), keys: { key in
            if key.length == 5 { result.append(PeerGroupId(rawValue: key.getInt32(1))) }
            return true
        }, limit: 0)
        return result
    }
}
