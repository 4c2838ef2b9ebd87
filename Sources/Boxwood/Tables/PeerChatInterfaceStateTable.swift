import BoxwoodStore
/// Table 67: each chat's interface state kept by the app — its draft, scroll position and opaque state (Postbox's
/// `PeerChatInterfaceStateTable`). Int64 keys (the PeerId) → ``PeerChatInterfaceStateValue``.
///
/// Write-back, like ``PeerChatStateTable``: reads see this transaction's values, ``beforeCommit()`` writes them.
final class PeerChatInterfaceStateTable: Table {
    static let tableId: Int32 = 67
    static let descriptor = ValueBoxTable(id: tableId, keyType: .int64)

    private var cache = WriteBackCache<PeerId, StoredPeerChatInterfaceState>()

    /// The chats whose state was set in this transaction, with the new state (nil: removed).
    private(set) var updatedStates: [PeerId: StoredPeerChatInterfaceState?] = [:]

    func resetChanges() {
        updatedStates.removeAll()
    }

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: Self.descriptor, useCaches: useCaches)
    }

    /// The state of `peerId`, nil when none is stored.
    func get(_ peerId: PeerId) throws -> StoredPeerChatInterfaceState? {
        if let known = cache.lookup(peerId) { return known }
        let state = try valueBox.decodeValue(table, key: .peerId(peerId)) { (bytes) throws(PostboxDecodingError) in
            try PeerChatInterfaceStateValue.decode(bytes)
        }
        cache.remember(peerId, state)
        return state
    }

    /// Stores (or with nil removes) the state of `peerId`; setting the state it already has changes nothing.
    func set(_ peerId: PeerId, _ state: StoredPeerChatInterfaceState?) throws {
        guard try get(peerId) != state else { return }
        cache.set(peerId, state)
        updatedStates[peerId] = .some(state)
    }

    override func clearMemoryCache() {
        cache.removeAll()
    }

    override func beforeCommit() throws {
        try cache.flush(keepValues: useCaches) { peerId, state in
            if let state {
                try valueBox.set(table, key: .peerId(peerId), value: PeerChatInterfaceStateValue.encode(state))
            } else {
                try valueBox.remove(table, key: .peerId(peerId))
            }
        }
    }
}
