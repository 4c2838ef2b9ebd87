import BoxwoodStore
/// A change of the unsent-message index in a transaction (Postbox's `IntermediateMessageHistoryUnsentOperation`).
public enum UnsentMessageOperation: Hashable, Sendable {
    /// A message waiting to be sent was stored at this index.
    case insert(MessageIndex)
    /// The message at this index is no longer waiting (sent, failed, moved or deleted).
    case remove(MessageIndex)
}

/// Table 11: the messages waiting to be sent (Postbox's `MessageHistoryUnsentTable`). Binary keys
/// `peerId(8) ‖ namespace(4) ‖ timestamp(4) ‖ id(4)` (big-endian, like table 7) → empty value, one entry per
/// stored message whose flags contain ``MessageFlags/unsent`` but not ``MessageFlags/failed``.
/// `MessageHistoryTable` keeps it up to date as it stores, removes and moves messages. Write-through; every
/// change is recorded in ``operations`` (the change record's `unsentMessageOperations`).
final class MessageHistoryUnsentTable: Table {
    static let tableId: Int32 = 11

    /// The changes of this transaction, in order.
    private(set) var operations: [UnsentMessageOperation] = []

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: ValueBoxTable(id: Self.tableId, keyType: .binary, compactValuesOnCreation: true), useCaches: useCaches)
    }

    func resetChanges() {
        operations.removeAll()
    }

    /// Whether a message with `flags` belongs in the index.
    static func isIndexed(_ flags: MessageFlags) -> Bool {
        flags.contains(.unsent) && !flags.contains(.failed)
    }

    private func key(_ index: MessageIndex) -> ValueBoxKey {
        var key = ValueBoxKey(length: 20)
        key.setInt64(0, value: index.id.peerId.toInt64())
        key.setInt32(8, value: index.id.namespace.rawValue)
        key.setInt32(12, value: index.timestamp)
        key.setInt32(16, value: index.id.id)
        return key
    }

    /// Adds `index` (recorded unless `record` is false, as when the index is rebuilt).
    func add(_ index: MessageIndex, record: Bool = true) throws {
        try valueBox.set(table, key: key(index), bytes: [])
        if record { operations.append(.insert(index)) }
    }

    func remove(_ index: MessageIndex) throws {
        try valueBox.remove(table, key: key(index))
        operations.append(.remove(index))
    }

    /// Every indexed message, in key order (by peer, namespace, timestamp, id).
    func get() throws -> [MessageIndex] {
        var result: [MessageIndex] = []
        try valueBox.scan(table, keys: { key in
            guard key.length == 20 else { return true }
            let id = MessageId(peerId: PeerId(key.getInt64(0)), namespace: MessageId.Namespace(key.getInt32(8)), id: key.getInt32(16))
            result.append(MessageIndex(id: id, timestamp: key.getInt32(12)))
            return true
        })
        return result
    }
}
