import BoxwoodStore
/// The contact list (table 16, binary keys): the 8-byte big-endian packed PeerId → an empty value.
///
/// The whole set is cached after the first read. ``replace(_:)`` changes the cached set; ``beforeCommit()``
/// writes the difference from the stored set (adds the new ids, removes the dropped ones).
final class ContactTable: Table {
    static let tableId: Int32 = 16
    static let descriptor = ValueBoxTable(id: tableId, keyType: .binary, compactValuesOnCreation: true)

    /// The set as this transaction sees it.
    private var peerIds: Set<PeerId>?
    /// The stored set, while a replacement is pending.
    private var storedPeerIdsBeforeReplace: Set<PeerId>?

    /// The set last passed to ``replace(_:)`` in this transaction.
    private(set) var replacedPeerIds: Set<PeerId>?

    func resetChanges() {
        replacedPeerIds = nil
    }

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: Self.descriptor, useCaches: useCaches)
    }

    static func key(_ id: PeerId) -> ValueBoxKey {
        var key = ValueBoxKey(length: 8)
        key.setInt64(0, value: id.toInt64())
        return key
    }

    /// The contacts.
    func get() throws -> Set<PeerId> {
        if let peerIds { return peerIds }
        var result = Set<PeerId>()
        try valueBox.scan(table, keys: { key in
            if key.length == 8 { result.insert(PeerId(key.getInt64(0))) }
            return true
        })
        peerIds = result
        return result
    }

    func isContact(_ id: PeerId) throws -> Bool {
        try get().contains(id)
    }

    /// Makes `ids` the contact list (written at the end of the transaction).
    func replace(_ ids: Set<PeerId>) throws {
        let current = try get()
        if storedPeerIdsBeforeReplace == nil { storedPeerIdsBeforeReplace = current }
        peerIds = ids
        replacedPeerIds = ids
    }

    override func clearMemoryCache() {
        peerIds = nil
        storedPeerIdsBeforeReplace = nil
    }

    override func beforeCommit() throws {
        if let stored = storedPeerIdsBeforeReplace, let peerIds {
            for id in stored.subtracting(peerIds) {
                try valueBox.remove(table, key: Self.key(id))
            }
            for id in peerIds.subtracting(stored) {
                try valueBox.set(table, key: Self.key(id), bytes: UnsafeRawBufferPointer(start: nil, count: 0))
            }
            storedPeerIdsBeforeReplace = nil
        }
        if !useCaches { peerIds = nil }
    }
}
