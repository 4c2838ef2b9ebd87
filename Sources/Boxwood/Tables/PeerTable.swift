import BoxwoodStore
/// Peers by id (table 2, int64 keys): PeerId → the root-encoded `Peer` (its concrete type registered with
/// `declareEncodable`).
///
/// Write-back: ``set(_:)`` changes the in-memory cache and marks the peer dirty; ``beforeCommit()`` writes the
/// dirty peers. Reads go through the cache, so they see this transaction's changes. Without `useCaches` the
/// cache is dropped after each flush.
final class PeerTable: Table {
    static let tableId: Int32 = 2
    static let descriptor = ValueBoxTable(id: tableId, keyType: .int64)

    private var cache = WriteBackCache<PeerId, any Peer>()
    private let encoder = PostboxEncoder()

    /// For each peer set in this transaction, its value before the transaction's first `set` (nil: it did not
    /// exist). The change record's updated peers (and the reverse-associated-peer maintenance) come from here.
    private(set) var updatedInitialPeers: [PeerId: (any Peer)?] = [:]

    /// The peers set in this transaction.
    var updatedPeerIds: Set<PeerId> { Set(updatedInitialPeers.keys) }

    /// The peers set in this transaction, with their current values.
    func updatedPeers() throws -> [PeerId: any Peer] {
        var result: [PeerId: any Peer] = [:]
        for id in updatedInitialPeers.keys {
            if let peer = try get(id) { result[id] = peer }
        }
        return result
    }

    func resetChanges() {
        updatedInitialPeers.removeAll()
    }

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: Self.descriptor, useCaches: useCaches)
    }

    /// The peer `id`, nil when unknown.
    func get(_ id: PeerId) throws -> (any Peer)? {
        if let known = cache.lookup(id) { return known }
        let peer = try valueBox.rootObject(table, key: .peerId(id), as: (any Peer).self)
        cache.remember(id, peer)
        return peer
    }

    /// Stores `peer` under `peer.id` (written at the end of the transaction).
    func set(_ peer: any Peer) throws {
        let id = peer.id
        if updatedInitialPeers.index(forKey: id) == nil {
            updatedInitialPeers.updateValue(try get(id), forKey: id)
        }
        cache.set(id, peer)
    }

    override func clearMemoryCache() {
        cache.removeAll()
    }

    override func beforeCommit() throws {
        try cache.flush(keepValues: useCaches) { id, peer in
            if let peer {
                try valueBox.setRootObject(table, key: .peerId(id), peer, encoder: encoder)
            } else {
                try valueBox.remove(table, key: .peerId(id))
            }
        }
    }
}
