import BoxwoodStore
/// One position of a tag's merged queue.
struct PeerMergedOperationLogIndexEntry: Equatable {
    let mergedIndex: Int32
    let peerId: PeerId
    let tagLocalIndex: Int32
}

/// The merged operation-log queues, one per tag across all peers (table 30, binary keys):
/// tag UInt8 ‖ mergedIndex Int32 BE → peerId Int64 LE ‖ tagLocalIndex Int32 LE (12 bytes).
///
/// Merged indices are handed out from 1 upwards (``PeerOperationLogMetadataTable``), so key order is queue
/// order. Write-through, no cache; maintained by `PeerOperationLogTable`.
final class PeerMergedOperationLogIndexTable: Table {
    static let tableId: Int32 = 30
    static let descriptor = ValueBoxTable(id: tableId, keyType: .binary)

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: Self.descriptor, useCaches: useCaches)
    }

    /// No change of this table is reported on its own (the operation log reports its merged operations).
    func resetChanges() {}

    private static func key(_ tag: PeerOperationLogTag, _ mergedIndex: Int32) -> ValueBoxKey {
        var key = ValueBoxKey(length: 5)
        key.setUInt8(0, value: tag.rawValue)
        key.setInt32(1, value: mergedIndex)
        return key
    }

    func add(_ tag: PeerOperationLogTag, mergedIndex: Int32, peerId: PeerId, tagLocalIndex: Int32) throws {
        let value = ByteBuffer(capacity: 64)
        value.append(peerId.toInt64())
        value.append(tagLocalIndex)
        try valueBox.set(table, key: Self.key(tag, mergedIndex), value: value)
    }

    func remove(_ tag: PeerOperationLogTag, mergedIndex: Int32) throws {
        try valueBox.remove(table, key: Self.key(tag, mergedIndex))
    }

    func get(_ tag: PeerOperationLogTag, mergedIndex: Int32) throws -> PeerMergedOperationLogIndexEntry? {
        try valueBox.decodeValue(table, key: Self.key(tag, mergedIndex)) { (bytes) throws(PostboxDecodingError) in
            try Self.decode(mergedIndex, bytes)
        }
    }

    private static func decode(_ mergedIndex: Int32, _ bytes: UnsafeRawBufferPointer) throws(PostboxDecodingError) -> PeerMergedOperationLogIndexEntry {
        guard bytes.count == 12 else { throw .invalidLength(Int64(bytes.count), offset: 0) }
        let reader = ByteReader(bytes)
        do throws(ByteReadError) {
            return PeerMergedOperationLogIndexEntry(mergedIndex: mergedIndex, peerId: PeerId(try reader.integer(at: 0, as: Int64.self)),
                                                    tagLocalIndex: try reader.integer(at: 8))
        } catch {
            throw PostboxDecodingError(error)
        }
    }

    /// Up to `limit` positions (`limit <= 0`: all) of the tag's queue with a merged index ≥ `fromIndex`, in order.
    func entries(_ tag: PeerOperationLogTag, fromIndex: Int32, limit: Int) throws -> [PeerMergedOperationLogIndexEntry] {
        var prefix = ValueBoxKey(length: 1)
        prefix.setUInt8(0, value: tag.rawValue)
        // Exclusive bounds: start just below `fromIndex` (merged indices are positive, so big-endian order is
        // numeric order there), end above every 5-byte key of the tag.
        let start = fromIndex > 0 ? Self.key(tag, fromIndex - 1) : prefix
        var result: [PeerMergedOperationLogIndexEntry] = []
        var failure: PostboxDecodingError?
        try valueBox.withRange(table, start: start, end: prefix.paddedWithFF(5), limit: limit) { key, value in
            guard key.count == 5 else { return true }
            let index = Int32(bitPattern: UInt32(bigEndian: key.loadUnaligned(fromByteOffset: 1, as: UInt32.self)))
            if index < fromIndex { return true }
            do throws(PostboxDecodingError) {
                result.append(try Self.decode(index, value))
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return result
    }
}
