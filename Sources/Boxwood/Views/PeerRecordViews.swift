/// One peer's chat state (channel pts and similar; nil when none is stored).
public struct PeerChatStateView: PostboxView {
    public let peerId: PeerId
    public let chatState: CodableEntry?
}

final class MutablePeerChatStateView: MutablePostboxView {
    let peerId: PeerId
    private var chatState: CodableEntry?

    init(peerId: PeerId, tables: PostboxTables) throws {
        self.peerId = peerId
        chatState = try tables.peerChatStates.get(peerId)
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        guard changes.updatedPeerChatStates.contains(peerId) else { return false }
        return try refresh(tables: tables)
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let current = try tables.peerChatStates.get(peerId)
        defer { chatState = current }
        return current != chatState
    }

    func immutableView() -> any PostboxView { PeerChatStateView(peerId: peerId, chatState: chatState) }
}

/// One peer's cached data (nil when none is stored). (`@unchecked Sendable`: the app's values are immutable.)
public struct CachedPeerDataView: PostboxView, @unchecked Sendable {
    public let peerId: PeerId
    public let cachedPeerData: (any CachedPeerData)?
}

final class MutableCachedPeerDataView: MutablePostboxView {
    let peerId: PeerId
    private var data: (any CachedPeerData)?

    init(peerId: PeerId, tables: PostboxTables) throws {
        self.peerId = peerId
        data = try tables.cachedPeerData.get(peerId)
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        guard let updated = changes.updatedCachedPeerData[peerId], !ViewValueComparison.same(data, updated) else { return false }
        data = updated
        return true
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let current = try tables.cachedPeerData.get(peerId)
        defer { data = current }
        return !ViewValueComparison.same(current, data)
    }

    func immutableView() -> any PostboxView { CachedPeerDataView(peerId: peerId, cachedPeerData: data) }
}

/// The presences of a set of peers (peers without one are missing from `presences`).
/// (`@unchecked Sendable`: the app's values are immutable.)
public struct PeerPresencesView: PostboxView, @unchecked Sendable {
    public let presences: [PeerId: any PeerPresence]
}

final class MutablePeerPresencesView: MutablePostboxView {
    let peerIds: Set<PeerId>
    private var presences: [PeerId: any PeerPresence] = [:]

    init(peerIds: Set<PeerId>, tables: PostboxTables) throws {
        self.peerIds = peerIds
        presences = try Self.load(peerIds, tables)
    }

    private static func load(_ peerIds: Set<PeerId>, _ tables: PostboxTables) throws -> [PeerId: any PeerPresence] {
        var result: [PeerId: any PeerPresence] = [:]
        for id in peerIds { if let presence = try tables.peerPresences.get(id) { result[id] = presence } }
        return result
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        guard ViewValueComparison.touches(peerIds, changes.updatedPeerPresences) else { return false }
        var changed = false
        for id in peerIds {
            guard let presence = changes.updatedPeerPresences[id], !ViewValueComparison.same(presences[id], presence) else { continue }
            presences[id] = presence
            changed = true
        }
        return changed
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let fresh = try Self.load(peerIds, tables)
        defer { presences = fresh }
        return !ViewValueComparison.same(fresh, presences) { $0.isEqual(to: $1) }
    }

    func immutableView() -> any PostboxView { PeerPresencesView(presences: presences) }
}

/// The notification settings that apply to each of a set of peers: those of the peer its record names in
/// ``Peer/notificationSettingsPeerId``, else its own (peers with none are missing from
/// `notificationSettings`). (`@unchecked Sendable`: the app's values are immutable.)
public struct PeerNotificationSettingsView: PostboxView, @unchecked Sendable {
    public let notificationSettings: [PeerId: any PeerNotificationSettings]
}

final class MutablePeerNotificationSettingsView: MutablePostboxView {
    let peerIds: Set<PeerId>
    /// For each peer, whose settings apply to it.
    private var sources: [PeerId: PeerId] = [:]
    private var settings: [PeerId: any PeerNotificationSettings] = [:]

    init(peerIds: Set<PeerId>, tables: PostboxTables) throws {
        self.peerIds = peerIds
        (sources, settings) = try Self.load(peerIds, tables)
    }

    private static func source(_ id: PeerId, _ tables: PostboxTables) throws -> PeerId {
        try tables.peers.get(id)?.notificationSettingsPeerId ?? id
    }

    private static func load(_ peerIds: Set<PeerId>, _ tables: PostboxTables) throws -> ([PeerId: PeerId], [PeerId: any PeerNotificationSettings]) {
        var sources: [PeerId: PeerId] = [:]
        var settings: [PeerId: any PeerNotificationSettings] = [:]
        for id in peerIds {
            let source = try source(id, tables)
            sources[id] = source
            if let value = try tables.peerNotificationSettings.get(source) { settings[id] = value }
        }
        return (sources, settings)
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        let peersChanged = ViewValueComparison.touches(peerIds, changes.updatedPeers)
        guard peersChanged || !changes.updatedPeerNotificationSettings.isEmpty else { return false }
        var changed = false
        for id in peerIds {
            var source = sources[id] ?? id
            var current = settings[id]
            if peersChanged, changes.updatedPeers[id] != nil {
                // The peer record may name another peer whose settings apply: read that peer's settings.
                let newSource = changes.updatedPeers[id]?.notificationSettingsPeerId ?? id
                if newSource != source {
                    source = newSource
                    sources[id] = newSource
                    current = try tables.peerNotificationSettings.get(newSource)
                }
            }
            if let update = changes.updatedPeerNotificationSettings[source] { current = update.new }
            if !ViewValueComparison.same(current, settings[id]) {
                settings[id] = current
                changed = true
            }
        }
        return changed
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let (freshSources, fresh) = try Self.load(peerIds, tables)
        defer { (sources, settings) = (freshSources, fresh) }
        return !ViewValueComparison.same(fresh, settings) { $0.isEqual(to: $1) }
    }

    func immutableView() -> any PostboxView { PeerNotificationSettingsView(notificationSettings: settings) }
}
