import BoxwoodStore
/// A change of one peer's notification settings in a transaction.
public struct PeerNotificationSettingsUpdate {
    /// The settings before the transaction's first change (nil: none were stored).
    public let old: (any PeerNotificationSettings)?
    /// The settings now.
    public let new: any PeerNotificationSettings
}

/// Peers' notification settings (table 19, int64 keys): PeerId → the root-encoded `PeerNotificationSettings`
/// (its concrete type registered with `declareEncodable`).
///
/// Write-back: reads see this transaction's values, ``beforeCommit()`` writes them. (Postbox's pending-settings
/// and behaviour-timestamp tables, 48, 60 and 61, are separate and not part of this one.)
final class PeerNotificationSettingsTable: Table {
    static let tableId: Int32 = 19
    static let descriptor = ValueBoxTable(id: tableId, keyType: .int64)

    private var cache = WriteBackCache<PeerId, any PeerNotificationSettings>()
    private let encoder = PostboxEncoder()

    /// For each peer whose settings were set in this transaction: the settings before and now.
    private(set) var updatedSettings: [PeerId: PeerNotificationSettingsUpdate] = [:]

    var updatedPeerIds: Set<PeerId> { Set(updatedSettings.keys) }

    func resetChanges() {
        updatedSettings.removeAll()
    }

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: Self.descriptor, useCaches: useCaches)
    }

    func get(_ id: PeerId) throws -> (any PeerNotificationSettings)? {
        if let known = cache.lookup(id) { return known }
        let settings = try valueBox.rootObject(table, key: .peerId(id), as: (any PeerNotificationSettings).self)
        cache.remember(id, settings)
        return settings
    }

    func set(_ id: PeerId, settings: any PeerNotificationSettings) throws {
        let old = try updatedSettings[id].map { $0.old } ?? get(id)
        cache.set(id, settings)
        updatedSettings[id] = PeerNotificationSettingsUpdate(old: old, new: settings)
    }

    override func clearMemoryCache() {
        cache.removeAll()
    }

    override func beforeCommit() throws {
        try cache.flush(keepValues: useCaches) { id, settings in
            if let settings {
                try valueBox.setRootObject(table, key: .peerId(id), settings, encoder: encoder)
            } else {
                try valueBox.remove(table, key: .peerId(id))
            }
        }
    }
}
