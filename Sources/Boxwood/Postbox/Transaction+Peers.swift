/// Peers and the per-peer records kept beside them.
extension Transaction {
    public func getPeer(_ id: PeerId) throws -> (any Peer)? { try tables.peers.get(id) }

    /// Stores `peers`: for each, `update(previous, new)` gives the value to store (nil: leave it as it is).
    public func updatePeers(_ peers: [any Peer], update: ((any Peer)?, any Peer) -> (any Peer)? = { _, new in new }) throws {
        let table = try tables.peers
        for peer in peers {
            let previous = try table.get(peer.id)
            if let updated = update(previous, peer) { try table.set(updated) }
        }
    }

    /// The peer's chat state (channel pts and similar), nil when none.
    public func getPeerChatState(_ id: PeerId) throws -> CodableEntry? { try tables.peerChatStates.get(id) }

    public func setPeerChatState(_ id: PeerId, state: CodableEntry?) throws { try tables.peerChatStates.set(id, state: state) }

    public func getPeerCachedData(_ id: PeerId) throws -> (any CachedPeerData)? { try tables.cachedPeerData.get(id) }

    /// For each peer, `update(id, current)` gives the new cached data (nil: keep the current one).
    public func updatePeerCachedData(peerIds: Set<PeerId>, update: (PeerId, (any CachedPeerData)?) -> (any CachedPeerData)?) throws {
        let table = try tables.cachedPeerData
        for id in peerIds.sorted() {
            if let data = update(id, try table.get(id)) { try table.set(id, data: data) }
        }
    }

    public func getPeerPresence(_ id: PeerId) throws -> (any PeerPresence)? { try tables.peerPresences.get(id) }

    public func updatePeerPresences(_ presences: [PeerId: any PeerPresence]) throws {
        let table = try tables.peerPresences
        for (id, presence) in presences.sorted(by: { $0.key < $1.key }) { try table.set(id, presence: presence) }
    }

    public func getPeerNotificationSettings(_ id: PeerId) throws -> (any PeerNotificationSettings)? {
        try tables.peerNotificationSettings.get(id)
    }

    public func updatePeerNotificationSettings(_ settings: [PeerId: any PeerNotificationSettings]) throws {
        let table = try tables.peerNotificationSettings
        for (id, value) in settings.sorted(by: { $0.key < $1.key }) { try table.set(id, settings: value) }
    }

    // MARK: Contacts

    public func getContactPeerIds() throws -> Set<PeerId> { try tables.contacts.get() }

    public func isPeerContact(_ id: PeerId) throws -> Bool { try tables.contacts.isContact(id) }

    public func replaceContactPeerIds(_ ids: Set<PeerId>) throws { try tables.contacts.replace(ids) }

    public func getRemoteContactCount() throws -> Int32 { try tables.metadata.remoteContactCount() }

    public func replaceRemoteContactCount(_ count: Int32) throws { try tables.metadata.setRemoteContactCount(count) }
}
