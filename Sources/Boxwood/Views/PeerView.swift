/// What a peer view loads beyond the peer itself (Postbox's `PeerViewComponents`; Boxwood has no story
/// statistics, so there is no `storyStats`).
public struct PeerViewComponents: OptionSet, Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The peer's cached data (of the associated peer, for a peer that stands for another).
    public static let cachedData = PeerViewComponents(rawValue: 1 << 0)
    /// The peers the cached data refers to (``CachedPeerData/peerIds``), with their presences.
    public static let subPeers = PeerViewComponents(rawValue: 1 << 1)
    /// The messages the cached data refers to (``CachedPeerData/messageIds``, for example a pinned message).
    public static let messages = PeerViewComponents(rawValue: 1 << 2)
    /// The chat-list group the peer is in.
    public static let groupId = PeerViewComponents(rawValue: 1 << 3)

    public static let all: PeerViewComponents = [.cachedData, .subPeers, .messages, .groupId]
}

/// Everything a profile or chat header shows about one peer (Postbox's `PeerView`): the peer and the peers
/// it refers to, their presences, its notification settings, whether it is a contact, and per the requested
/// components its cached data, the peers and messages that data refers to, and its chat-list group.
/// (`@unchecked Sendable`: the app's values are immutable.)
public struct PeerView: PostboxView, @unchecked Sendable {
    public let peerId: PeerId
    public let components: PeerViewComponents
    /// The peer, its associated peers (``Peer/associatedPeerId``, ``Peer/additionalAssociatedPeerId``) and,
    /// with ``PeerViewComponents/subPeers``, the peers its cached data refers to — those that are known.
    public let peers: [PeerId: any Peer]
    /// The presences of the peers in ``peers`` (of every id they cover, known or not) that have one.
    public let peerPresences: [PeerId: any PeerPresence]
    /// The cached data of ``contactPeerId`` (with ``PeerViewComponents/cachedData``).
    public let cachedData: (any CachedPeerData)?
    /// The notification settings that apply: those of ``Peer/notificationSettingsPeerId`` when the peer
    /// names one, else the peer's own.
    public let notificationSettings: (any PeerNotificationSettings)?
    /// Whether ``contactPeerId`` is in the contact list.
    public let peerIsContact: Bool
    /// The peer whose contact status and cached data the view shows: the associated peer of a peer that
    /// stands for another (for example the user of a secret chat), else the peer itself.
    public let contactPeerId: PeerId
    /// The messages the cached data refers to that exist (with ``PeerViewComponents/messages``).
    public let messages: [MessageId: Message]
    /// The chat-list group the peer is in (with ``PeerViewComponents/groupId``; nil when it is never listed).
    public let groupId: PeerGroupId?

    /// The peer itself, when known.
    public var peer: (any Peer)? { peers[peerId] }
}

final class MutablePeerView: MutablePostboxView {
    /// What the view shows, loaded from the tables or updated from change records.
    private struct State {
        var peers: [PeerId: any Peer] = [:]
        var presences: [PeerId: any PeerPresence] = [:]
        var cachedData: (any CachedPeerData)?
        var notificationSettings: (any PeerNotificationSettings)?
        var isContact = false
        var groupId: PeerGroupId?
        var messages: TrackedMessages?
        /// The ids `peers` and `presences` cover (known or not).
        var peerIds: Set<PeerId> = []
        var contactPeerId: PeerId
        var notificationSettingsPeerId: PeerId

        /// Whether `other` shows the same (what the snapshot leaves out — hidden cached data, peer ids
        /// without a peer or presence — does not count).
        func isSame(as other: State, showsCachedData: Bool) -> Bool {
            contactPeerId == other.contactPeerId && isContact == other.isContact && groupId == other.groupId
                && ViewValueComparison.same(peers, other.peers) { $0.isEqual($1) }
                && ViewValueComparison.same(presences, other.presences) { $0.isEqual(to: $1) }
                && (!showsCachedData || ViewValueComparison.same(cachedData, other.cachedData))
                && ViewValueComparison.same(notificationSettings, other.notificationSettings)
                && ViewValueComparison.same(messages?.messages ?? [:], other.messages?.messages ?? [:]) { ViewValueComparison.same($0, $1) }
        }
    }

    let peerId: PeerId
    let components: PeerViewComponents
    private var state: State

    /// Whether the cached data is read (shown, or needed for the peers or messages it refers to).
    private let usesCachedData: Bool

    init(peerId: PeerId, components: PeerViewComponents, tables: PostboxTables) throws {
        self.peerId = peerId
        self.components = components
        usesCachedData = !components.isDisjoint(with: [.cachedData, .subPeers, .messages])
        state = State(contactPeerId: peerId, notificationSettingsPeerId: peerId)
        state = try load(tables)
    }

    private func load(_ tables: PostboxTables) throws -> State {
        let peer = try tables.peers.get(peerId)
        var state = State(contactPeerId: peer?.associatedPeerId ?? peerId, notificationSettingsPeerId: peer?.notificationSettingsPeerId ?? peerId)
        var ids: Set<PeerId> = [peerId]
        if let id = peer?.associatedPeerId { ids.insert(id) }
        if let id = peer?.additionalAssociatedPeerId { ids.insert(id) }
        if usesCachedData {
            let data = try tables.cachedPeerData.get(state.contactPeerId)
            state.cachedData = data
            if components.contains(.subPeers), let data { ids.formUnion(data.peerIds) }
            if components.contains(.messages) { state.messages = try TrackedMessages(ids: data?.messageIds ?? [], tables: tables) }
        }
        state.peerIds = ids
        for id in ids {
            if let known = id == peerId ? peer : try tables.peers.get(id) { state.peers[id] = known }
            if let presence = try tables.peerPresences.get(id) { state.presences[id] = presence }
        }
        state.notificationSettings = try tables.peerNotificationSettings.get(state.notificationSettingsPeerId)
        state.isContact = try tables.contacts.isContact(state.contactPeerId)
        if components.contains(.groupId) { state.groupId = try tables.history.chatListIndex.get(peerId).inclusion.groupId }
        return state
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        // A changed peer record or cached data may change which peers and messages the view covers: reload.
        if ViewValueComparison.touches(state.peerIds, changes.updatedPeers)
            || (usesCachedData && changes.updatedCachedPeerData[state.contactPeerId] != nil) {
            return try refresh(tables: tables)
        }
        var changed = false
        if ViewValueComparison.touches(state.peerIds, changes.updatedPeerPresences) {
            for id in state.peerIds {
                guard let presence = changes.updatedPeerPresences[id], !ViewValueComparison.same(state.presences[id], presence) else { continue }
                state.presences[id] = presence
                changed = true
            }
        }
        if let update = changes.updatedPeerNotificationSettings[state.notificationSettingsPeerId],
           !ViewValueComparison.same(state.notificationSettings, update.new) {
            state.notificationSettings = update.new
            changed = true
        }
        if let contacts = changes.replacedContactPeerIds, contacts.contains(state.contactPeerId) != state.isContact {
            state.isContact.toggle()
            changed = true
        }
        if components.contains(.groupId), let inclusion = changes.updatedChatListInclusions[peerId], inclusion.groupId != state.groupId {
            state.groupId = inclusion.groupId
            changed = true
        }
        if try state.messages?.replay(tables: tables, changes: changes) == true { changed = true }
        return changed
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let fresh = try load(tables)
        defer { state = fresh }
        return !fresh.isSame(as: state, showsCachedData: components.contains(.cachedData))
    }

    func immutableView() -> any PostboxView {
        PeerView(peerId: peerId, components: components, peers: state.peers, peerPresences: state.presences,
                 cachedData: components.contains(.cachedData) ? state.cachedData : nil,
                 notificationSettings: state.notificationSettings, peerIsContact: state.isContact, contactPeerId: state.contactPeerId,
                 messages: state.messages?.messages ?? [:], groupId: state.groupId)
    }
}
