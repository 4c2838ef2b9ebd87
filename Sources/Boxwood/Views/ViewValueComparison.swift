/// Equality of the app-defined values views hold (protocol existentials compared through their `isEqual`),
/// so that a view reports a change only when what it shows differs.
enum ViewValueComparison {
    static func same(_ a: (any Peer)?, _ b: (any Peer)?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (a?, b?): return a.isEqual(b)
        default: return false
        }
    }

    static func same(_ a: (any CachedPeerData)?, _ b: (any CachedPeerData)?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (a?, b?): return a.isEqual(to: b)
        default: return false
        }
    }

    static func same(_ a: (any PeerPresence)?, _ b: (any PeerPresence)?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (a?, b?): return a.isEqual(to: b)
        default: return false
        }
    }

    static func same(_ a: (any PeerNotificationSettings)?, _ b: (any PeerNotificationSettings)?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (a?, b?): return a.isEqual(to: b)
        default: return false
        }
    }

    /// The same message as shown: same place, same stable id and version (every change of a stored message
    /// bumps the version, except a move to another timestamp, which changes the index), the same media (shared
    /// media change in place, without a new version), the same resolved peers and the same messages referred to.
    static func same(_ a: Message?, _ b: Message?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (a?, b?):
            return a.index == b.index && a.stableId == b.stableId && a.stableVersion == b.stableVersion
                && a.media.count == b.media.count && zip(a.media, b.media).allSatisfy { $0.isEqual(to: $1) }
                && same(a.peers, b.peers) { $0.isEqual($1) }
                && same(a.associatedMessages, b.associatedMessages) { same($0, $1) }
        default: return false
        }
    }

    /// Whether two lists hold the same messages (by ``same(_:_:)-(Message?,Message?)``) in the same order.
    static func same(_ a: [Message], _ b: [Message]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
    }

    /// Whether two stored objects encode to the same bytes (for values with no `isEqual`, like the account state).
    /// A value that fails to encode counts as different: the view then shows it anew rather than hide a change.
    static func sameEncoding(_ a: (any PostboxCoding)?, _ b: (any PostboxCoding)?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (a?, b?):
            guard let left = try? PostboxEncoder.encodeRoot(a), let right = try? PostboxEncoder.encodeRoot(b) else { return false }
            return left == right
        default: return false
        }
    }

    /// Whether two dictionaries have the same keys with values equal by `same`.
    static func same<Key: Hashable, Value>(_ a: [Key: Value], _ b: [Key: Value], _ same: (Value, Value) -> Bool) -> Bool {
        guard a.count == b.count else { return false }
        for (key, value) in a {
            guard let other = b[key], same(value, other) else { return false }
        }
        return true
    }

    /// Whether `changed` (a change record's set of changed keys) has any of `watched`.
    static func touches<Key: Hashable>(_ watched: Set<Key>, _ changed: Set<Key>) -> Bool {
        if changed.isEmpty || watched.isEmpty { return false }
        return !watched.isDisjoint(with: changed)
    }

    /// Whether `changed` (the keys of a change record's field) has any of `watched`, iterating the smaller.
    static func touches<Key: Hashable, Value>(_ watched: Set<Key>, _ changed: [Key: Value]) -> Bool {
        if changed.isEmpty || watched.isEmpty { return false }
        if changed.count < watched.count { return changed.keys.contains { watched.contains($0) } }
        return watched.contains { changed[$0] != nil }
    }
}
