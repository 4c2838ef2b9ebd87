import BoxwoodStore
/// Per-peer chat state kept by the app (for example a channel's pts) (table 13, int64 keys): PeerId → the bytes
/// of a ``CodableEntry`` (its `data`, a field list whose field `"_"` holds the value).
///
/// Write-back, like ``PeerTable``: reads see this transaction's values, ``beforeCommit()`` writes them.
final class PeerChatStateTable: Table {
    static let tableId: Int32 = 13
    static let descriptor = ValueBoxTable(id: tableId, keyType: .int64)

    private var cache = WriteBackCache<PeerId, CodableEntry>()

    /// The peers whose chat state was set in this transaction.
    private(set) var updatedPeerIds: Set<PeerId> = []

    func resetChanges() {
        updatedPeerIds.removeAll()
    }

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: Self.descriptor, useCaches: useCaches)
    }

    /// The chat state of `id`, nil when none was stored.
    func get(_ id: PeerId) throws -> CodableEntry? {
        if let known = cache.lookup(id) { return known }
        let entry = try valueBox.decodeValue(table, key: .peerId(id)) { (bytes) throws(PostboxDecodingError) in
            CodableEntry(data: Array(bytes))
        }
        cache.remember(id, entry)
        return entry
    }

    /// Stores (or with nil removes) the chat state of `id` (written at the end of the transaction).
    func set(_ id: PeerId, state: CodableEntry?) throws {
        cache.set(id, state)
        updatedPeerIds.insert(id)
    }

    override func clearMemoryCache() {
        cache.removeAll()
    }

    override func beforeCommit() throws {
        try cache.flush(keepValues: useCaches) { id, entry in
            if let entry {
                try entry.data.withUnsafeBytes { bytes in
                    try valueBox.set(table, key: .peerId(id), bytes: bytes)
                }
            } else {
                try valueBox.remove(table, key: .peerId(id))
            }
        }
    }
}
