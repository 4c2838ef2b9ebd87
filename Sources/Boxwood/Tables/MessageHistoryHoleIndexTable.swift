import BoxwoodStore
/// Table 56: holes — closed ranges of message ids that may exist on the server but are not stored (Postbox's
/// `MessageHistoryHoleIndexTable`). Binary keys `peerId(8) ‖ namespace(4) ‖ space UInt32(4) ‖ upper id(4)`
/// (big-endian; space 0 = everywhere, otherwise the tag bits) → `lower id Int32 LE`.
///
/// The ranges of one (peer, namespace, space) are disjoint and never adjacent: adding merges a range with every
/// range it overlaps or touches; removing splits. Every range is clipped to 1…Int32.max−1
/// (``MessageHistoryHoleRanges/validIds``), so keys order correctly as unsigned. Keying by the upper bound makes
/// "the hole containing id" one seek: the first key whose upper bound is ≥ id.
///
/// A peer's history starts with the holes of ``MessageHistoryConfiguration/messageHoles`` (the full valid range
/// per configured namespace and space), added by ``ensureInitialized(_:)`` the first time the peer is changed
/// (the "history initialised" flag lives in table 10). Write-through; records in ``operations`` every add or
/// remove that changed the stored holes, with the range the caller asked for (clipped) — not the merged result.
final class MessageHistoryHoleIndexTable: Table {
    static let tableId: Int32 = 56

    private let metadataTable: MessageHistoryMetadataTable
    private let seedHoles: [PeerId.Namespace: [MessageId.Namespace: Set<MessageTags>]]

    /// Hole changes of the current transaction, in order, per (peer, namespace, space).
    private(set) var operations: [MessageHistoryHoleOperationKey: [MessageHistoryHoleOperation]] = [:]

    init(valueBox: ValueBox, metadataTable: MessageHistoryMetadataTable,
         seedHoles: [PeerId.Namespace: [MessageId.Namespace: Set<MessageTags>]], useCaches: Bool = true) {
        self.metadataTable = metadataTable
        self.seedHoles = seedHoles
        super.init(valueBox: valueBox, table: ValueBoxTable(id: Self.tableId, keyType: .binary, compactValuesOnCreation: true), useCaches: useCaches)
    }

    func resetChanges() {
        operations.removeAll()
    }

    // MARK: Keys

    private func prefix(_ peerId: PeerId, _ namespace: MessageId.Namespace, _ space: MessageHistoryHoleSpace) -> ValueBoxKey {
        var key = ValueBoxKey(length: 16)
        key.setInt64(0, value: peerId.toInt64())
        key.setInt32(8, value: namespace.rawValue)
        key.setUInt32(12, value: space.rawValue)
        return key
    }

    private func key(_ peerId: PeerId, _ namespace: MessageId.Namespace, _ space: MessageHistoryHoleSpace, upper: Int32) -> ValueBoxKey {
        var key = ValueBoxKey(length: 20)
        key.setInt64(0, value: peerId.toInt64())
        key.setInt32(8, value: namespace.rawValue)
        key.setUInt32(12, value: space.rawValue)
        key.setInt32(16, value: upper)
        return key
    }

    private func corrupt(_ reason: String) -> HistoryTableError { .corrupt(table: Self.tableId, reason: reason) }

    /// Decodes one entry; throws on a malformed or out-of-range one.
    private func range(key: ValueBoxKey, value: ReadBuffer) throws -> ClosedRange<Int32> {
        guard key.length == 20 else { throw corrupt("entry \(key)") }
        let lower = try value.read(orThrow: corrupt("entry \(key)")) { (reader) throws(ByteReadError) in
            let lower = try reader.int32()
            try reader.requireEnd()
            return lower
        }
        let upper = key.getInt32(16)
        guard lower <= upper, MessageHistoryHoleRanges.validIds.contains(lower), MessageHistoryHoleRanges.validIds.contains(upper) else {
            throw corrupt("hole \(lower)...\(upper)")
        }
        return lower...upper
    }

    /// The stored ranges whose upper bound is ≥ `from`, ascending, while `take` accepts them.
    private func ranges(_ peerId: PeerId, _ namespace: MessageId.Namespace, _ space: MessageHistoryHoleSpace,
                        upperAtLeast from: Int32, limit: Int = 0,
                        while take: (ClosedRange<Int32>) -> Bool = { _ in true }) throws -> [ClosedRange<Int32>] {
        let prefix = prefix(peerId, namespace, space)
        let start = from <= 1 ? prefix : key(peerId, namespace, space, upper: from - 1)
        var result: [ClosedRange<Int32>] = []
        var failure: Error?
        try valueBox.range(table, start: start, end: prefix.paddedWithFF(5), values: { key, value in
            do {
                let range = try self.range(key: key, value: value)
                guard take(range) else { return false }
                result.append(range)
                return true
            } catch {
                failure = error
                return false
            }
        }, limit: limit)
        if let failure { throw failure }
        return result
    }

    private func store(_ peerId: PeerId, _ namespace: MessageId.Namespace, _ space: MessageHistoryHoleSpace, _ range: ClosedRange<Int32>) throws {
        let value = ByteBuffer(capacity: 64)
        value.append(range.lowerBound)
        try valueBox.set(table, key: key(peerId, namespace, space, upper: range.upperBound), value: value)
    }

    private func record(_ peerId: PeerId, _ namespace: MessageId.Namespace, _ space: MessageHistoryHoleSpace, _ operation: MessageHistoryHoleOperation) {
        operations[MessageHistoryHoleOperationKey(peerId: peerId, namespace: namespace, space: space), default: []].append(operation)
    }

    // MARK: Initialisation

    /// Seeds `peerId` with its configured holes the first time it is called for that peer.
    func ensureInitialized(_ peerId: PeerId) throws {
        if try metadataTable.isPeerHistoryInitialized(peerId) { return }
        try metadataTable.setPeerHistoryInitialized(peerId)
        guard let namespaces = seedHoles[peerId.namespace] else { return }
        for (namespace, tags) in namespaces.sorted(by: { $0.key < $1.key }) {
            try addHoleInternal(peerId, namespace, .everywhere, MessageHistoryHoleRanges.validIds)
            for tag in tags.sorted(by: { $0.rawValue < $1.rawValue }) where !tag.isEmpty {
                try addHoleInternal(peerId, namespace, .tag(tag), MessageHistoryHoleRanges.validIds)
            }
        }
    }

    // MARK: Changes

    /// Adds the ids of `range` (clipped to 1…Int32.max−1) to the holes of (peer, namespace, space), merging it with
    /// every hole it overlaps or touches.
    func addHole(peerId: PeerId, namespace: MessageId.Namespace, space: MessageHistoryHoleSpace, range: ClosedRange<MessageId.Id>) throws {
        try ensureInitialized(peerId)
        try addHoleInternal(peerId, namespace, space, range)
    }

    private func addHoleInternal(_ peerId: PeerId, _ namespace: MessageId.Namespace, _ space: MessageHistoryHoleSpace, _ range: ClosedRange<Int32>) throws {
        guard let range = MessageHistoryHoleRanges.clipped(range) else { return }
        // Holes touching or overlapping `range`: upper ≥ lower − 1 and lower ≤ upper + 1.
        let touching = try ranges(peerId, namespace, space, upperAtLeast: range.lowerBound - 1, while: {
            Int64($0.lowerBound) <= Int64(range.upperBound) + 1
        })
        if touching.count == 1, touching[0].lowerBound <= range.lowerBound, touching[0].upperBound >= range.upperBound {
            return  // already a hole: nothing changes, nothing is recorded
        }
        var merged = range
        for hole in touching {
            merged = min(merged.lowerBound, hole.lowerBound)...max(merged.upperBound, hole.upperBound)
        }
        for hole in touching where hole.upperBound != merged.upperBound {
            try valueBox.remove(table, key: key(peerId, namespace, space, upper: hole.upperBound))
        }
        try store(peerId, namespace, space, merged)
        record(peerId, namespace, space, .insert(range))
    }

    /// Removes the ids of `range` from the holes of (peer, namespace, space), splitting a hole that extends past
    /// it on both sides.
    func removeHole(peerId: PeerId, namespace: MessageId.Namespace, space: MessageHistoryHoleSpace, range: ClosedRange<MessageId.Id>) throws {
        try ensureInitialized(peerId)
        try removeHoleInternal(peerId, namespace, space, range)
    }

    private func removeHoleInternal(_ peerId: PeerId, _ namespace: MessageId.Namespace, _ space: MessageHistoryHoleSpace, _ range: ClosedRange<Int32>) throws {
        guard let range = MessageHistoryHoleRanges.clipped(range) else { return }
        let overlapping = try ranges(peerId, namespace, space, upperAtLeast: range.lowerBound, while: {
            $0.lowerBound <= range.upperBound
        })
        guard !overlapping.isEmpty else { return }
        for hole in overlapping {
            try valueBox.remove(table, key: key(peerId, namespace, space, upper: hole.upperBound))
        }
        if let first = overlapping.first, first.lowerBound < range.lowerBound {
            try store(peerId, namespace, space, first.lowerBound...(range.lowerBound - 1))
        }
        if let last = overlapping.last, last.upperBound > range.upperBound {
            try store(peerId, namespace, space, (range.upperBound + 1)...last.upperBound)
        }
        record(peerId, namespace, space, .remove(range))
    }

    /// Removes `range` from the holes of every space of (peer, namespace) that has holes.
    func removeHoleEverySpace(peerId: PeerId, namespace: MessageId.Namespace, range: ClosedRange<MessageId.Id>) throws {
        try ensureInitialized(peerId)
        for space in try spaces(peerId: peerId, namespace: namespace) {
            try removeHoleInternal(peerId, namespace, space, range)
        }
    }

    // MARK: Reads

    /// The seed holes a peer whose history was never changed reads as (none stored yet: ``ensureInitialized(_:)``
    /// writes them at its first change); nil once the peer is initialised. A read is no change, so a view of a chat
    /// nothing was ever stored for shows its whole history as a hole, as it would after the first change.
    private func uninitializedHoles(_ peerId: PeerId, _ namespace: MessageId.Namespace,
                                    _ space: MessageHistoryHoleSpace) throws -> [ClosedRange<Int32>]? {
        guard try !metadataTable.isPeerHistoryInitialized(peerId) else { return nil }
        guard let tags = seedHoles[peerId.namespace]?[namespace] else { return [] }
        switch space {
        case .everywhere: return [MessageHistoryHoleRanges.validIds]
        case let .tag(tag): return tags.contains(tag) ? [MessageHistoryHoleRanges.validIds] : []
        }
    }

    /// The holes of (peer, namespace, space), ascending.
    func holes(peerId: PeerId, namespace: MessageId.Namespace, space: MessageHistoryHoleSpace) throws -> [ClosedRange<MessageId.Id>] {
        if let seeded = try uninitializedHoles(peerId, namespace, space) { return seeded }
        return try ranges(peerId, namespace, space, upperAtLeast: 1)
    }

    /// The holes of (peer, namespace, space) that overlap `range`, ascending (not clipped to it).
    func holes(peerId: PeerId, namespace: MessageId.Namespace, space: MessageHistoryHoleSpace, overlapping range: ClosedRange<MessageId.Id>) throws -> [ClosedRange<MessageId.Id>] {
        guard let range = MessageHistoryHoleRanges.clipped(range) else { return [] }
        if let seeded = try uninitializedHoles(peerId, namespace, space) { return seeded.filter { $0.overlaps(range) } }
        return try ranges(peerId, namespace, space, upperAtLeast: range.lowerBound, while: { $0.lowerBound <= range.upperBound })
    }

    /// The hole of (peer, namespace, space) that contains `id`, if any.
    func containing(peerId: PeerId, namespace: MessageId.Namespace, space: MessageHistoryHoleSpace, id: MessageId.Id) throws -> ClosedRange<MessageId.Id>? {
        guard MessageHistoryHoleRanges.validIds.contains(id) else { return nil }
        if let seeded = try uninitializedHoles(peerId, namespace, space) { return seeded.first { $0.contains(id) } }
        let first = try ranges(peerId, namespace, space, upperAtLeast: id, limit: 1)
        guard let hole = first.first, hole.lowerBound <= id else { return nil }
        return hole
    }

    /// The spaces of (peer, namespace) that have holes, found by one seek per space.
    func spaces(peerId: PeerId, namespace: MessageId.Namespace) throws -> [MessageHistoryHoleSpace] {
        var namespacePrefix = ValueBoxKey(length: 12)
        namespacePrefix.setInt64(0, value: peerId.toInt64())
        namespacePrefix.setInt32(8, value: namespace.rawValue)
        let end = namespacePrefix.paddedWithFF(9)
        var start = namespacePrefix
        var result: [MessageHistoryHoleSpace] = []
        while true {
            guard let key = try valueBox.firstKey(table, start: start, end: end) else { break }
            guard key.length == 20 else { throw corrupt("key of \(key.length) bytes") }
            let raw = key.getUInt32(12)
            result.append(MessageHistoryHoleSpace(rawValue: raw))
            if raw == UInt32.max { break }
            start = key.prefix(16).paddedWithFF(4)
        }
        return result
    }
}
