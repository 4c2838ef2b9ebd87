import BoxwoodStore
/// The counters of the operation log (table 29, binary keys):
///
/// - `0x00 ‖ peerId Int64 BE ‖ tag UInt8` → the next automatic tag-local index of (peer, tag), Int32 LE;
/// - `0x01 ‖ tag UInt8` → the next automatic merged index of the tag, Int32 LE.
///
/// Both counters start at 1 when absent and only grow. Write-through, no cache.
final class PeerOperationLogMetadataTable: Table {
    static let tableId: Int32 = 29
    static let descriptor = ValueBoxTable(id: tableId, keyType: .binary)

    private static let localIndexPrefix: UInt8 = 0
    private static let mergedIndexPrefix: UInt8 = 1
    /// The first index handed out by either counter.
    static let firstIndex: Int32 = 1

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: Self.descriptor, useCaches: useCaches)
    }

    /// No change of this table is reported on its own (the operation log reports its merged operations).
    func resetChanges() {}

    private static func localIndexKey(_ peerId: PeerId, _ tag: PeerOperationLogTag) -> ValueBoxKey {
        var key = ValueBoxKey(length: 10)
        key.setUInt8(0, value: localIndexPrefix)
        key.setInt64(1, value: peerId.toInt64())
        key.setUInt8(9, value: tag.rawValue)
        return key
    }

    private static func mergedIndexKey(_ tag: PeerOperationLogTag) -> ValueBoxKey {
        var key = ValueBoxKey(length: 2)
        key.setUInt8(0, value: mergedIndexPrefix)
        key.setUInt8(1, value: tag.rawValue)
        return key
    }

    private func counter(_ key: ValueBoxKey) throws -> Int32 {
        try valueBox.decodeInteger(table, key: key, as: Int32.self) ?? Self.firstIndex
    }

    // MARK: Tag-local indices

    /// The index the next automatic entry of (peer, tag) gets.
    func nextLocalIndex(_ peerId: PeerId, _ tag: PeerOperationLogTag) throws -> Int32 {
        try counter(Self.localIndexKey(peerId, tag))
    }

    /// Hands out the next automatic index of (peer, tag).
    func takeNextLocalIndex(_ peerId: PeerId, _ tag: PeerOperationLogTag) throws -> Int32 {
        let index = try nextLocalIndex(peerId, tag)
        guard index < Int32.max else { throw PeerOperationLogError.indicesExhausted(peerId: peerId, tag: tag) }
        try valueBox.setInt32(table, key: Self.localIndexKey(peerId, tag), index + 1)
        return index
    }

    /// Makes sure the next automatic index of (peer, tag) is above `index` (after a manual index was used).
    func advanceLocalIndex(_ peerId: PeerId, _ tag: PeerOperationLogTag, past index: Int32) throws {
        let next = try nextLocalIndex(peerId, tag)
        if index >= next {
            try valueBox.setInt32(table, key: Self.localIndexKey(peerId, tag), index == Int32.max ? Int32.max : index + 1)
        }
    }

    // MARK: Merged indices

    /// The merged index the next entry of the tag's merged queue gets.
    func nextMergedIndex(_ tag: PeerOperationLogTag) throws -> Int32 {
        try counter(Self.mergedIndexKey(tag))
    }

    /// Hands out the next merged index of the tag.
    func takeNextMergedIndex(_ tag: PeerOperationLogTag) throws -> Int32 {
        let index = try nextMergedIndex(tag)
        guard index < Int32.max else { throw PeerOperationLogError.indicesExhausted(peerId: nil, tag: tag) }
        try valueBox.setInt32(table, key: Self.mergedIndexKey(tag), index + 1)
        return index
    }
}
