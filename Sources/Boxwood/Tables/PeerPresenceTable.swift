import BoxwoodStore
/// Peers' online status (table 20, int64 keys): PeerId → the root-encoded `PeerPresence` (its concrete type
/// registered with `declareEncodable`).
///
/// Write-back: reads see this transaction's values, ``beforeCommit()`` writes them.
final class PeerPresenceTable: Table {
    static let tableId: Int32 = 20
    static let descriptor = ValueBoxTable(id: tableId, keyType: .int64)

    private var cache = WriteBackCache<PeerId, any PeerPresence>()
    private let encoder = PostboxEncoder()

    /// The presences set in this transaction, per peer (the last value).
    private(set) var updatedPresences: [PeerId: any PeerPresence] = [:]

    var updatedPeerIds: Set<PeerId> { Set(updatedPresences.keys) }

    func resetChanges() {
        updatedPresences.removeAll()
    }

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: Self.descriptor, useCaches: useCaches)
    }

    func get(_ id: PeerId) throws -> (any PeerPresence)? {
        if let known = cache.lookup(id) { return known }
        let presence = try valueBox.rootObject(table, key: .peerId(id), as: (any PeerPresence).self)
        cache.remember(id, presence)
        return presence
    }

    func set(_ id: PeerId, presence: any PeerPresence) throws {
        cache.set(id, presence)
        updatedPresences[id] = presence
    }

    override func clearMemoryCache() {
        cache.removeAll()
    }

    override func beforeCommit() throws {
        try cache.flush(keepValues: useCaches) { id, presence in
            if let presence {
                try valueBox.setRootObject(table, key: .peerId(id), presence, encoder: encoder)
            } else {
                try valueBox.remove(table, key: .peerId(id))
            }
        }
    }
}
