import BoxwoodStore
/// Table 4: which messages exist, by id (Postbox's `MessageHistoryIndexTable`). Binary keys
/// `peerId(8) ‖ namespace(4) ‖ id(4)` (big-endian) → `flags(1) ‖ timestamp Int32 LE(4)`; flag 0x01 = incoming,
/// 0x02 = counted as incoming. Turns a ``MessageId`` into its ``MessageIndex`` (the key of the history table).
///
/// Write-through, with a read cache of the namespaces each peer has messages in (Postbox caches
/// `existingNamespaces` the same way): history reads merge one key range per namespace.
final class MessageHistoryIndexTable: Table {
    static let tableId: Int32 = 4

    struct Entry: Hashable {
        let timestamp: Int32
        let incoming: Bool
        let countedAsIncoming: Bool
    }

    private var namespacesCache: [PeerId: Set<MessageId.Namespace>] = [:]

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: ValueBoxTable(id: Self.tableId, keyType: .binary, compactValuesOnCreation: true), useCaches: useCaches)
    }

    override func clearMemoryCache() {
        namespacesCache.removeAll()
    }

    private func key(_ id: MessageId) -> ValueBoxKey {
        var key = ValueBoxKey(length: 16)
        key.setInt64(0, value: id.peerId.toInt64())
        key.setInt32(8, value: id.namespace.rawValue)
        key.setInt32(12, value: id.id)
        return key
    }

    private func corrupt(_ reason: String) -> HistoryTableError { .corrupt(table: Self.tableId, reason: reason) }

    func get(_ id: MessageId) throws -> Entry? {
        var length = 0
        return try valueBox.readValue(table, key: key(id), orThrow: corrupt("index entry of \(id) has \(length) bytes")) { (reader) throws(ByteReadError) in
            length = reader.buffer.count
            let entry = try Entry(&reader)
            try reader.requireEnd()
            return entry
        }
    }

    func exists(_ id: MessageId) throws -> Bool {
        try valueBox.exists(table, key: key(id))
    }

    func set(_ message: IntermediateMessage) throws {
        let value = ByteBuffer(capacity: 64)
        var flags: UInt8 = 0
        if message.flags.contains(.incoming) { flags |= 1 }
        if message.flags.contains(.countedAsIncoming) { flags |= 2 }
        value.append(flags)
        value.append(message.timestamp)
        try valueBox.set(table, key: key(message.id), value: value)
        if var namespaces = namespacesCache[message.id.peerId] {
            if namespaces.insert(message.id.namespace).inserted { namespacesCache[message.id.peerId] = namespaces }
        }
    }

    func remove(_ id: MessageId) throws {
        try valueBox.remove(table, key: key(id))
    }

    /// The namespaces `peerId` has (or had, since the cache was filled) messages in: found by one seek per
    /// namespace.
    func existingNamespaces(_ peerId: PeerId) throws -> Set<MessageId.Namespace> {
        if let cached = namespacesCache[peerId] { return cached }
        var result = Set<MessageId.Namespace>()
        var prefix = ValueBoxKey(length: 8)
        prefix.setInt64(0, value: peerId.toInt64())
        let end = prefix.paddedWithFF(9)
        var start = prefix
        while true {
            guard let key = try valueBox.firstKey(table, start: start, end: end) else { break }
            guard key.length == 16 else { throw corrupt("key of \(key.length) bytes") }
            let namespace = key.getInt32(8)
            result.insert(MessageId.Namespace(namespace))
            // Every key of this namespace is below prefix ‖ namespace ‖ 0xFF….
            start = key.prefix(12).paddedWithFF(4)
            if UInt32(bitPattern: namespace) == UInt32.max { break }
        }
        namespacesCache[peerId] = result
        return result
    }

    /// The greatest non-negative id stored in (peer, namespace).
    func topNonNegativeId(peerId: PeerId, namespace: MessageId.Namespace) throws -> MessageId.Id? {
        var prefix = ValueBoxKey(length: 12)
        prefix.setInt64(0, value: peerId.toInt64())
        prefix.setInt32(8, value: namespace.rawValue)
        var start = ValueBoxKey(length: 16)
        start.setInt64(0, value: peerId.toInt64())
        start.setInt32(8, value: namespace.rawValue)
        start.setInt32(12, value: .max)
        var result: MessageId.Id?
        try valueBox.range(table, start: start.immediateSuccessor, end: prefix, keys: { key in
            if key.length == 16 { result = key.getInt32(12) }
            return false
        }, limit: 1)
        return result
    }

    /// The ids of (peer, namespace) in `range`, ascending, with their entries.
    /// Negative ids are not covered (keys order ids as unsigned).
    func ids(peerId: PeerId, namespace: MessageId.Namespace, in range: ClosedRange<MessageId.Id>) throws -> [(MessageId.Id, Entry)] {
        guard range.upperBound >= 0 else { return [] }
        let range = max(0, range.lowerBound)...range.upperBound
        var prefix = ValueBoxKey(length: 12)
        prefix.setInt64(0, value: peerId.toInt64())
        prefix.setInt32(8, value: namespace.rawValue)
        var lower = ValueBoxKey(length: 16)
        lower.setInt64(0, value: peerId.toInt64())
        lower.setInt32(8, value: namespace.rawValue)
        lower.setInt32(12, value: range.lowerBound)
        var upper = lower
        upper.setInt32(12, value: range.upperBound)
        var result: [(MessageId.Id, Entry)] = []
        var failure: HistoryTableError?
        try valueBox.range(table, start: lower.predecessorOrPrefix(prefix), end: upper.immediateSuccessor, values: { key, value in
            do throws(HistoryTableError) {
                guard key.length == 16 else { throw self.corrupt("entry \(key)") }
                let entry = try value.read(orThrow: self.corrupt("entry \(key)")) { (reader) throws(ByteReadError) in try Entry(&reader) }
                result.append((key.getInt32(12), entry))
                return true
            } catch {
                failure = error
                return false
            }
        }, limit: 0)
        if let failure { throw failure }
        return result
    }
}

extension ValueBoxKey {
    /// An exclusive lower bound that includes this key: the prefix itself when this key is the first possible key
    /// after it (all zero bytes after the prefix), otherwise this key's predecessor.
    func predecessorOrPrefix(_ prefix: ValueBoxKey) -> ValueBoxKey {
        var allZero = true
        for i in prefix.length..<length where getUInt8(i) != 0 {
            allZero = false
            break
        }
        return allZero ? prefix : predecessor
    }
}

extension MessageHistoryIndexTable.Entry {
    /// Reads a stored value: `flags(1) ‖ timestamp Int32 LE(4)`.
    init(_ reader: inout ByteReader) throws(ByteReadError) {
        let flags = try reader.uint8()
        self.init(timestamp: try reader.int32(), incoming: flags & 1 != 0, countedAsIncoming: flags & 2 != 0)
    }
}
