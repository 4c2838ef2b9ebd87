import BoxwoodStore
/// Full information about peers, fetched on demand (table 18, int64 keys): PeerId → the root-encoded
/// `CachedPeerData` (its concrete type registered with `declareEncodable`).
///
/// Write-back: reads see this transaction's values, ``beforeCommit()`` writes them.
final class CachedPeerDataTable: Table {
    static let tableId: Int32 = 18
    static let descriptor = ValueBoxTable(id: tableId, keyType: .int64)

    private var cache = WriteBackCache<PeerId, any CachedPeerData>()
    private let encoder = PostboxEncoder()

    /// The data set in this transaction, per peer (the last value).
    private(set) var updatedCachedPeerData: [PeerId: any CachedPeerData] = [:]

    var updatedPeerIds: Set<PeerId> { Set(updatedCachedPeerData.keys) }

    func resetChanges() {
        updatedCachedPeerData.removeAll()
    }

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: Self.descriptor, useCaches: useCaches)
    }

    func get(_ id: PeerId) throws -> (any CachedPeerData)? {
        if let known = cache.lookup(id) { return known }
        let data = try valueBox.rootObject(table, key: .peerId(id), as: (any CachedPeerData).self)
        cache.remember(id, data)
        return data
    }

    func set(_ id: PeerId, data: any CachedPeerData) throws {
        cache.set(id, data)
        updatedCachedPeerData[id] = data
    }

    override func clearMemoryCache() {
        cache.removeAll()
    }

    override func beforeCommit() throws {
        try cache.flush(keepValues: useCaches) { id, data in
            if let data {
                try valueBox.setRootObject(table, key: .peerId(id), data, encoder: encoder)
            } else {
                try valueBox.remove(table, key: .peerId(id))
            }
        }
    }
}
