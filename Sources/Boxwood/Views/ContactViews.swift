/// The contact list: the contacts' ids, the known peers among them and, when asked, their presences
/// (Postbox's `ContactPeersView`). (`@unchecked Sendable`: the app's values are immutable.)
public struct ContactPeersView: PostboxView, @unchecked Sendable {
    public let peerIds: Set<PeerId>
    /// The contacts whose peer record is known.
    public let peers: [PeerId: any Peer]
    /// The contacts' presences (empty unless the view includes presences).
    public let presences: [PeerId: any PeerPresence]
}

final class MutableContactPeersView: MutablePostboxView {
    let includePresences: Bool
    private var peerIds: Set<PeerId> = []
    private var peers: [PeerId: any Peer] = [:]
    private var presences: [PeerId: any PeerPresence] = [:]

    init(includePresences: Bool, tables: PostboxTables) throws {
        self.includePresences = includePresences
        _ = try refresh(tables: tables)
    }

    /// Reads the peer (and presence) of a contact.
    private func loadContact(_ id: PeerId, _ tables: PostboxTables) throws {
        peers[id] = try tables.peers.get(id)
        if includePresences { presences[id] = try tables.peerPresences.get(id) }
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        var changed = false
        if let replaced = changes.replacedContactPeerIds, replaced != peerIds {
            for id in peerIds.subtracting(replaced) {
                peers.removeValue(forKey: id)
                presences.removeValue(forKey: id)
            }
            for id in replaced.subtracting(peerIds) { try loadContact(id, tables) }
            peerIds = replaced
            changed = true
        }
        if ViewValueComparison.touches(peerIds, changes.updatedPeers) {
            for id in peerIds {
                guard let peer = changes.updatedPeers[id], !ViewValueComparison.same(peers[id], peer) else { continue }
                peers[id] = peer
                changed = true
            }
        }
        if includePresences, ViewValueComparison.touches(peerIds, changes.updatedPeerPresences) {
            for id in peerIds {
                guard let presence = changes.updatedPeerPresences[id], !ViewValueComparison.same(presences[id], presence) else { continue }
                presences[id] = presence
                changed = true
            }
        }
        return changed
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let (oldIds, oldPeers, oldPresences) = (peerIds, peers, presences)
        peerIds = try tables.contacts.get()
        peers = [:]
        presences = [:]
        for id in peerIds { try loadContact(id, tables) }
        return oldIds != peerIds || !ViewValueComparison.same(oldPeers, peers) { $0.isEqual($1) }
            || !ViewValueComparison.same(oldPresences, presences) { $0.isEqual(to: $1) }
    }

    func immutableView() -> any PostboxView { ContactPeersView(peerIds: peerIds, peers: peers, presences: presences) }
}

/// Whether one peer is in the contact list.
public struct IsContactView: PostboxView {
    public let peerId: PeerId
    public let isContact: Bool
}

final class MutableIsContactView: MutablePostboxView {
    let peerId: PeerId
    private var isContact: Bool

    init(peerId: PeerId, tables: PostboxTables) throws {
        self.peerId = peerId
        isContact = try tables.contacts.isContact(peerId)
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        guard let replaced = changes.replacedContactPeerIds, replaced.contains(peerId) != isContact else { return false }
        isContact.toggle()
        return true
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let current = try tables.contacts.isContact(peerId)
        defer { isContact = current }
        return current != isContact
    }

    func immutableView() -> any PostboxView { IsContactView(peerId: peerId, isContact: isContact) }
}
