/// The WAL record a write transaction builds: `WriteAheadLog.recordHeaderSize` bytes reserved for the header that
/// `WriteAheadLog.append` fills in, then one operation per change, in the order they were applied.
///
/// Only `ValueBox.perform` appends to it, after the change it logs was applied; replay and catching up apply
/// operations without one, so an operation read from the log is never logged again. One per value box, reused by
/// every transaction: the buffer keeps its capacity.
final class TransactionRecord {
    /// The record's bytes: the reserved header, then the operations (`WALOperation.swift` has their layout).
    let bytes = ByteBuffer(capacity: 64 << 10)
    /// The operations appended since `start()`.
    private(set) var operationCount: UInt32 = 0

    /// Starts an empty record.
    func start() {
        bytes.reset()
        bytes.reserve(WriteAheadLog.recordHeaderSize)
        for _ in 0..<(WriteAheadLog.recordHeaderSize / 8) { bytes.append(UInt64(0)) }
        operationCount = 0
    }

    /// Drops what the record holds (after a commit or an abort), giving back a buffer one huge transaction grew.
    func clear() {
        bytes.reset()
        bytes.shrinkIfLarge()
        operationCount = 0
    }

    /// Appends `operation` (its keys in their internal form).
    @inline(__always)
    func append(_ operation: WALOperation) {
        switch operation {
        case let .set(table, keyType, key, value):
            bytes.logSet(table: table, keyType: keyType, key: key.baseAddress ?? emptyBytes, keyLength: key.count,
                         value: value.baseAddress ?? emptyBytes, valueLength: value.count)
        case let .remove(table, key, secure):
            bytes.logRemove(table: table, key: key.baseAddress ?? emptyBytes, keyLength: key.count, secure: secure)
        case let .removeRange(table, low, high):
            bytes.logRemoveRange(table: table, low: low.baseAddress ?? emptyBytes, lowLength: low.count,
                                 high: high.baseAddress ?? emptyBytes, highLength: high.count)
        case let .removeAll(table):
            bytes.logTableOperation(.removeAll, table: table)
        case let .removeTable(table):
            bytes.logTableOperation(.removeTable, table: table)
        case let .renameTable(from, to):
            bytes.logRename(from: from, to: to)
        case let .setMasterClientId(id):
            bytes.logSetMasterClientId(id)
        case let .setExtent(table, keyType, key, extent):
            bytes.logSetExtent(table: table, keyType: keyType, key: key.baseAddress ?? emptyBytes, keyLength: key.count, extent: extent)
        }
        operationCount += 1
    }

    /// A readable address for an empty key or value (zero bytes are copied from it).
    private var emptyBytes: UnsafeRawPointer { UnsafeRawPointer(bytes.memory) }
}
