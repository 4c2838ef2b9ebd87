import BoxwoodStore
/// Table 9: the chat list, ordered (Postbox's `ChatListTable`). Binary keys (24 bytes, big-endian):
///
/// `groupId(4) ‖ pinKey UInt16(2) ‖ timestamp(4) ‖ namespace UInt8(1) ‖ id(4) ‖ peerId(8) ‖ type(1)`
///
/// `pinKey` is 0 for unpinned chats and `max(1, 65534 − pinningIndex)` for pinned ones, so pinned chats sort
/// above the rest and pinning index 0 highest (big-endian, unlike Postbox's native-order UInt16 which orders
/// correctly only up to index 254). The namespace is truncated to its low byte. `type` is 1 for a chat, 2 for a
/// hole. A chat's value is `hasTop UInt8 ‖ [top message namespace Int32 LE, id Int32 LE, timestamp Int32 LE]`; a
/// hole's value is empty. Reading the list from the greatest key down gives Postbox's order (``ChatListIndex``,
/// descending) for timestamps and ids ≥ 0, namespaces 0…255 and peer ids below 2³².
///
/// Write-through. The chat list follows the history in ``replay(historyOperationsByPeerId:historyTable:)``, run at
/// the end of each transaction: it moves every peer whose top message or inclusion changed and records
/// ``ChatListOperation``s per group in ``operations``.
final class ChatListTable: Table {
    static let tableId: Int32 = 9

    enum Entry: Hashable, CustomStringConvertible {
        /// A listed chat and its top message (nil for a pinned or `minTimestamp` chat without messages).
        case message(ChatListIndex, topMessage: MessageIndex?)
        case hole(ChatListHole)

        var description: String {
            switch self {
            case let .message(index, top): return "chat(\(index), top: \(top.map { "\($0)" } ?? "none"))"
            case let .hole(hole): return "\(hole)"
            }
        }
    }

    private struct Shown: Hashable {
        var groupId: PeerGroupId
        var index: ChatListIndex
        var top: MessageIndex?
    }

    let indexTable: ChatListIndexTable
    let metadataTable: MessageHistoryMetadataTable
    /// `SeedConfiguration.initializeChatListWithHole`: the hole an empty chat list starts with (root, other groups).
    let initialHoles: (topLevel: ChatListHole?, groups: ChatListHole?)
    /// The namespaces whose messages can be a top message (nil: all).
    let chatMessagesNamespaces: Set<MessageId.Namespace>?

    /// Chat-list changes of the current transaction, per group, in order.
    private(set) var operations: [PeerGroupId: [ChatListOperation]] = [:]
    /// Where replays of this transaction left each peer they touched (nil: unlisted).
    private var shown: [PeerId: Shown?] = [:]
    /// A read cache of each group's holes (``holes(groupId:)`` walks the whole group otherwise): dropped by every
    /// change of the group's holes here, and with the other caches on abort and after another process committed.
    private var holesByGroup: [PeerGroupId: [ChatListHole]] = [:]

    init(valueBox: ValueBox, indexTable: ChatListIndexTable, metadataTable: MessageHistoryMetadataTable,
         initialHoles: (topLevel: ChatListHole?, groups: ChatListHole?) = (nil, nil),
         chatMessagesNamespaces: Set<MessageId.Namespace>?, useCaches: Bool = true) {
        self.indexTable = indexTable
        self.metadataTable = metadataTable
        self.initialHoles = initialHoles
        self.chatMessagesNamespaces = chatMessagesNamespaces
        super.init(valueBox: valueBox, table: ValueBoxTable(id: Self.tableId, keyType: .binary, compactValuesOnCreation: true), useCaches: useCaches)
    }

    override func clearMemoryCache() {
        shown.removeAll()
        holesByGroup.removeAll()
    }

    func resetChanges() {
        operations.removeAll()
        shown.removeAll()
    }

    // MARK: Keys

    static func pinKey(_ pinningIndex: UInt16?) -> UInt16 {
        guard let pinningIndex else { return 0 }
        return pinningIndex >= UInt16.max - 2 ? 1 : UInt16.max - 1 - pinningIndex
    }

    private func groupPrefix(_ groupId: PeerGroupId) -> ValueBoxKey {
        var key = ValueBoxKey(length: 4)
        key.setInt32(0, value: groupId.rawValue)
        return key
    }

    private func key(_ groupId: PeerGroupId, _ index: ChatListIndex, type: UInt8) -> ValueBoxKey {
        var key = ValueBoxKey(length: 24)
        key.setInt32(0, value: groupId.rawValue)
        key.setUInt16(4, value: Self.pinKey(index.pinningIndex))
        key.setInt32(6, value: index.messageIndex.timestamp)
        key.setUInt8(10, value: UInt8(truncatingIfNeeded: index.messageIndex.id.namespace.rawValue))
        key.setInt32(11, value: index.messageIndex.id.id)
        key.setInt64(15, value: index.messageIndex.id.peerId.toInt64())
        key.setUInt8(23, value: type)
        return key
    }

    private func corrupt(_ reason: String) -> HistoryTableError { .corrupt(table: Self.tableId, reason: reason) }

    private func decode(_ key: ValueBoxKey, _ value: ReadBuffer) throws -> Entry {
        guard key.length == 24 else { throw corrupt("key of \(key.length) bytes") }
        let pinKey = key.getUInt16(4)
        let timestamp = key.getInt32(6)
        let namespace = Int32(key.getUInt8(10))
        let id = key.getInt32(11)
        let peerId = PeerId(key.getInt64(15))
        var keyIndex = MessageIndex(id: MessageId(peerId: peerId, namespace: MessageId.Namespace(namespace), id: id), timestamp: timestamp)
        switch key.getUInt8(23) {
        case 1:
            let top = try value.read(orThrow: corrupt("value of \(key)")) { (reader) throws(ByteReadError) in
                let top = try reader.optionalMessageIndex(peerId: peerId)
                try reader.requireEnd()
                return top
            }
            if let top, top.timestamp == timestamp, top.id.id == id, UInt8(truncatingIfNeeded: top.id.namespace.rawValue) == UInt8(namespace) {
                keyIndex = top
            }
            let pinningIndex: UInt16? = pinKey == 0 ? nil : (pinKey >= UInt16.max - 1 ? 0 : UInt16.max - 1 - pinKey)
            return .message(ChatListIndex(pinningIndex: pinningIndex, messageIndex: keyIndex), topMessage: top)
        case 2:
            return .hole(ChatListHole(index: keyIndex))
        default:
            throw corrupt("entry type of \(key)")
        }
    }

    private func setEntry(_ groupId: PeerGroupId, _ index: ChatListIndex, top: MessageIndex?) throws {
        let value = ByteBuffer(capacity: 64)
        value.appendOptionalMessageIndex(top)
        try valueBox.set(table, key: key(groupId, index, type: 1), value: value)
    }

    private func append(_ groupId: PeerGroupId, _ operation: ChatListOperation) {
        operations[groupId, default: []].append(operation)
    }

    // MARK: Holes

    /// Adds the configured initial hole to the group's list the first time it is called for the group.
    func ensureInitialized(groupId: PeerGroupId) throws {
        if try metadataTable.isChatListInitialized(groupId: groupId) { return }
        try metadataTable.setChatListInitialized(groupId: groupId)
        if let hole = groupId == .root ? initialHoles.topLevel : initialHoles.groups {
            try valueBox.set(table, key: key(groupId, ChatListIndex(pinningIndex: nil, messageIndex: hole.index), type: 2), bytes: [])
            holesByGroup[groupId] = nil
            append(groupId, .insertHole(hole))
        }
    }

    func addHole(groupId: PeerGroupId, _ hole: ChatListHole) throws {
        try ensureInitialized(groupId: groupId)
        let key = key(groupId, ChatListIndex(pinningIndex: nil, messageIndex: hole.index), type: 2)
        guard try !valueBox.exists(table, key: key) else { return }
        try valueBox.set(table, key: key, bytes: [])
        holesByGroup[groupId] = nil
        append(groupId, .insertHole(hole))
    }

    /// Removes the hole at `index` (if any) and adds `hole` (if given): Postbox's `replaceChatListHole`, used as
    /// chat-list pages are loaded.
    func replaceHole(groupId: PeerGroupId, index: MessageIndex, hole: ChatListHole?) throws {
        try ensureInitialized(groupId: groupId)
        let oldKey = key(groupId, ChatListIndex(pinningIndex: nil, messageIndex: index), type: 2)
        if try valueBox.exists(table, key: oldKey) {
            try valueBox.remove(table, key: oldKey)
            holesByGroup[groupId] = nil
            append(groupId, .removeHoles([ChatListHole(index: index)]))
        }
        if let hole { try addHole(groupId: groupId, hole) }
    }

    /// The group's holes, newest first (cached: see ``holesByGroup``).
    func holes(groupId: PeerGroupId) throws -> [ChatListHole] {
        if let cached = holesByGroup[groupId] { return cached }
        let holes = try earlierEntries(groupId: groupId, index: nil, count: 0).compactMap { entry -> ChatListHole? in
            if case let .hole(hole) = entry { return hole }
            return nil
        }
        if useCaches { holesByGroup[groupId] = holes }
        return holes
    }

    // MARK: Pinning

    /// Pins exactly `peerIds` in `groupId`, in this order (index 0 on top), and unpins every other chat pinned
    /// there. Peers are moved to the group when they are in another one.
    func setPinnedPeers(groupId: PeerGroupId, _ peerIds: [PeerId]) throws {
        var currentlyPinned = Set<PeerId>()
        for entry in try pinnedEntries(groupId: groupId) {
            if case let .message(index, _) = entry { currentlyPinned.insert(index.messageIndex.id.peerId) }
        }
        for (peerId, inclusion) in indexTable.updatedInclusions where inclusion.groupId == groupId && inclusion.pinningIndex != nil {
            currentlyPinned.insert(peerId)
        }
        let wanted = Set(peerIds)
        for peerId in currentlyPinned.subtracting(wanted).sorted() {
            let inclusion = try indexTable.get(peerId).inclusion
            // Pinned here as stored, but moved elsewhere in this transaction: not ours to unpin.
            guard inclusion.groupId == groupId, inclusion.pinningIndex != nil else { continue }
            try indexTable.setInclusion(peerId, inclusion.withPinningIndex(nil))
        }
        var seen = Set<PeerId>()
        for (position, peerId) in peerIds.enumerated() where seen.insert(peerId).inserted {
            let current = try indexTable.get(peerId).inclusion
            let minTimestamp: Int32?
            if case let .ifHasMessagesOrOneOf(_, _, value) = current { minTimestamp = value } else { minTimestamp = nil }
            try indexTable.setInclusion(peerId, .ifHasMessagesOrOneOf(groupId: groupId, pinningIndex: UInt16(clamping: position), minTimestamp: minTimestamp))
        }
    }

    /// The pinned chats of the group as stored, pinning index 0 first.
    func pinnedEntries(groupId: PeerGroupId) throws -> [Entry] {
        var start = ValueBoxKey(length: 6)
        start.setInt32(0, value: groupId.rawValue)
        start.setUInt16(4, value: 0)
        var result: [Entry] = []
        var failure: Error?
        try valueBox.range(table, start: groupPrefix(groupId).paddedWithFF(21), end: start.paddedWithFF(18), values: { key, value in
            do {
                result.append(try self.decode(key, value))
                return true
            } catch {
                failure = error
                return false
            }
        }, limit: 0)
        if let failure { throw failure }
        return result
    }

    // MARK: Replay

    /// Moves the chat-list entries of every peer whose history changed in this transaction (a new, deleted or moved
    /// top message), whose interface state's `overrideChatTimestamp` changed (`interfaceStates`: the states set in
    /// this transaction) or whose inclusion changed: a peer is listed at its ``ChatListIndexTable/Entry/listing(_:)``,
    /// unlisted when that is nil (no messages left and neither pinned nor given a minimum timestamp). Records
    /// `.removeEntry` / `.insertEntry` operations. Run once at the end of each transaction, before
    /// ``ChatListIndexTable/commitTotalUnreadStates``.
    func replay(historyOperationsByPeerId: [PeerId: [HistoryTableOperation]], historyTable: MessageHistoryTable,
                interfaceStates: [PeerId: StoredPeerChatInterfaceState?] = [:]) throws {
        var peers = Set(indexTable.initialEntries.keys)
        peers.formUnion(interfaceStates.keys)
        for (peerId, operations) in historyOperationsByPeerId {
            let movesTop = operations.contains { operation in
                if case .updateReadState = operation { return false }
                return true
            }
            if movesTop { peers.insert(peerId) }
        }
        for peerId in peers.sorted() {
            var entry = try indexTable.get(peerId)
            let before: Shown?
            if let replayed = shown[peerId] {
                before = replayed
            } else {
                let initial = indexTable.initialEntries[peerId] ?? entry
                before = initial.listing(peerId).map { Shown(groupId: $0.groupId, index: $0.index, top: initial.topMessageIndex) }
            }
            if historyOperationsByPeerId[peerId] != nil {
                let top = try historyTable.topIndex(peerId: peerId, namespaces: chatMessagesNamespaces)
                if top != entry.topMessageIndex {
                    try indexTable.setTopMessageIndex(peerId, top)
                    entry.topMessageIndex = top
                }
            }
            if let state = interfaceStates[peerId] {
                let timestamp = state?.overrideChatTimestamp
                if timestamp != entry.overrideTimestamp {
                    try indexTable.setOverrideTimestamp(peerId, timestamp)
                    entry.overrideTimestamp = timestamp
                }
            }
            let after = entry.listing(peerId).map { Shown(groupId: $0.groupId, index: $0.index, top: entry.topMessageIndex) }
            guard before != after else { continue }
            if let before {
                try valueBox.remove(table, key: key(before.groupId, before.index, type: 1))
                append(before.groupId, .removeEntry([before.index]))
            }
            if let after {
                try ensureInitialized(groupId: after.groupId)
                try setEntry(after.groupId, after.index, top: after.top)
                append(after.groupId, .insertEntry(after.index, after.top))
            }
            shown[peerId] = .some(after)
        }
    }

    // MARK: Reads

    /// Up to `count` (0: all) entries of the group below `index` (nil: from the top), in list order (descending).
    func earlierEntries(groupId: PeerGroupId, index: ChatListIndex?, count: Int) throws -> [Entry] {
        let start = index.map { key(groupId, $0, type: 0) } ?? groupPrefix(groupId).paddedWithFF(21)
        return try entries(start: start, end: groupPrefix(groupId), count: count)
    }

    /// Up to `count` (0: all) entries of the group above `index` (nil: from the bottom), ascending.
    func laterEntries(groupId: PeerGroupId, index: ChatListIndex?, count: Int) throws -> [Entry] {
        let start = index.map { key(groupId, $0, type: 0xff) } ?? groupPrefix(groupId)
        return try entries(start: start, end: groupPrefix(groupId).paddedWithFF(21), count: count)
    }

    private func entries(start: ValueBoxKey, end: ValueBoxKey, count: Int) throws -> [Entry] {
        var result: [Entry] = []
        var failure: Error?
        try valueBox.range(table, start: start, end: end, values: { key, value in
            do {
                result.append(try self.decode(key, value))
                return true
            } catch {
                failure = error
                return false
            }
        }, limit: count)
        if let failure { throw failure }
        return result
    }
}
