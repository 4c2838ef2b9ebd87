import BoxwoodStore
/// Table 3: account-wide message ids (Postbox's `GlobalMessageIdsTable`). Int64 keys: the global Int32 id
/// (sign-extended) → `peerId Int64 LE ‖ namespace Int32 LE`. Only messages of the
/// ``MessageHistoryConfiguration/globalMessageIdsNamespaces`` pairs are indexed. Write-through.
final class GlobalMessageIdsTable: Table {
    static let tableId: Int32 = 3

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: ValueBoxTable(id: Self.tableId, keyType: .int64), useCaches: useCaches)
    }

    func set(globalId: Int32, id: MessageId) throws {
        let value = ByteBuffer(capacity: 64)
        value.append(id.peerId.toInt64())
        value.append(id.namespace.rawValue)
        try valueBox.set(table, key: ValueBoxKey(int64: Int64(globalId)), value: value)
    }

    func get(globalId: Int32) throws -> MessageId? {
        try valueBox.readValue(table, key: ValueBoxKey(int64: Int64(globalId)),
                               orThrow: .corrupt(table: Self.tableId, reason: "global id \(globalId)")) { (reader) throws(ByteReadError) in
            let peer = try reader.int64()
            let namespace = try reader.int32()
            try reader.requireEnd()
            return MessageId(peerId: PeerId(peer), namespace: MessageId.Namespace(namespace), id: globalId)
        }
    }

    /// Removes `globalId` if it points at `id` (a newer message may own it).
    func remove(globalId: Int32, id: MessageId) throws {
        if try get(globalId: globalId) == id {
            try valueBox.remove(table, key: ValueBoxKey(int64: Int64(globalId)))
        }
    }
}

/// Table 32: client-chosen random ids (Postbox's `MessageGloballyUniqueIdTable`). Binary keys
/// `peerId(8) ‖ globallyUniqueId(8)` (big-endian) → `namespace Int32 LE ‖ id Int32 LE`. Write-through.
final class MessageGloballyUniqueIdTable: Table {
    static let tableId: Int32 = 32

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: ValueBoxTable(id: Self.tableId, keyType: .binary, compactValuesOnCreation: true), useCaches: useCaches)
    }

    private func key(peerId: PeerId, globallyUniqueId: Int64) -> ValueBoxKey {
        var key = ValueBoxKey(length: 16)
        key.setInt64(0, value: peerId.toInt64())
        key.setInt64(8, value: globallyUniqueId)
        return key
    }

    func set(globallyUniqueId: Int64, id: MessageId) throws {
        let value = ByteBuffer(capacity: 64)
        value.append(id.namespace.rawValue)
        value.append(id.id)
        try valueBox.set(table, key: key(peerId: id.peerId, globallyUniqueId: globallyUniqueId), value: value)
    }

    func get(peerId: PeerId, globallyUniqueId: Int64) throws -> MessageId? {
        try valueBox.readValue(table, key: key(peerId: peerId, globallyUniqueId: globallyUniqueId),
                               orThrow: .corrupt(table: Self.tableId, reason: "globally unique id \(globallyUniqueId)")) { (reader) throws(ByteReadError) in
            let namespace = try reader.int32()
            let id = try reader.int32()
            try reader.requireEnd()
            return MessageId(peerId: peerId, namespace: MessageId.Namespace(namespace), id: id)
        }
    }

    /// Removes the entry if it points at `id` (a newer message may own it).
    func remove(globallyUniqueId: Int64, id: MessageId) throws {
        if try get(peerId: id.peerId, globallyUniqueId: globallyUniqueId) == id {
            try valueBox.remove(table, key: key(peerId: id.peerId, globallyUniqueId: globallyUniqueId))
        }
    }
}
