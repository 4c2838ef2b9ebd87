/// The logical operations a WAL record carries. Keys are stored in their internal (on-page) form: binary keys
/// as given, int64 keys big-endian with the sign bit flipped. All integers are little-endian.
///
///     set           1 | table i32 | keyType u8 | keyLength u16 | key | valueLength u64 | value
///     remove        2 | table i32 | keyLength u16 | key | secure u8
///     removeRange   3 | table i32 | lowLength u16 | low | highLength u16 | high      (inclusive)
///     removeAll     4 | table i32
///     removeTable   5 | table i32
///     renameTable   6 | from i32 | to i32
///     setMaster     7 | masterClientId i64                                            (WAL version 3)
///     setExtent     8 | table i32 | keyType u8 | keyLength u16 | key | head u64 | storedLength u64 | rawLength u64
///                     | codec u8 | checksum u64                                      (WAL version 6)
///
/// `setExtent` is a set whose value the commit wrote once, straight into the data file, as the extent (`ExtentPage`)
/// of `storedLength` bytes at page `head` with `checksum` in its head: the record names where the value is instead
/// of carrying its bytes (see `ValueBox+WrittenOnceValues.swift`).
enum WALOperationCode: UInt8 {
    case set = 1
    case remove = 2
    case removeRange = 3
    case removeAll = 4
    case removeTable = 5
    case renameTable = 6
    case setMasterClientId = 7
    case setExtent = 8
}

/// Where a value written once lies in the data file: the extent a `setExtent` operation names.
struct LoggedExtent: Equatable {
    /// The extent's first page (its head).
    var head: UInt64
    /// The bytes the extent holds (the value as stored: compressed when `codec` says so).
    var storedLength: UInt64
    /// The value's length.
    var rawLength: UInt64
    /// `ValueCodec` raw value of the stored bytes.
    var codec: UInt8
    /// The checksum the head carries (`ExtentPage.checksum`): the record names exactly these bytes, never an older
    /// extent that happens to lie at the same place.
    var checksum: UInt64
}

/// One decoded operation, with pointers into the record buffer.
enum WALOperation {
    case set(table: Int32, keyType: ValueBoxKeyType, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
    case remove(table: Int32, key: UnsafeRawBufferPointer, secure: Bool)
    case removeRange(table: Int32, low: UnsafeRawBufferPointer, high: UnsafeRawBufferPointer)
    case removeAll(table: Int32)
    case removeTable(table: Int32)
    case renameTable(from: Int32, to: Int32)
    case setMasterClientId(Int64)
    case setExtent(table: Int32, keyType: ValueBoxKeyType, key: UnsafeRawBufferPointer, extent: LoggedExtent)
}

extension ByteBuffer {
    func appendKey(_ key: UnsafeRawPointer, _ length: Int) {
        append(UInt16(length))
        append(key, length)
    }

    private func appendSetTarget(_ code: WALOperationCode, table: Int32, keyType: ValueBoxKeyType, key: UnsafeRawPointer, keyLength: Int) {
        append(code.rawValue)
        append(table)
        append(UInt8(keyType.rawValue))
        appendKey(key, keyLength)
    }

    func logSet(table: Int32, keyType: ValueBoxKeyType, key: UnsafeRawPointer, keyLength: Int, value: UnsafeRawPointer, valueLength: Int) {
        appendSetTarget(.set, table: table, keyType: keyType, key: key, keyLength: keyLength)
        append(UInt64(valueLength))
        append(value, valueLength)
    }

    func logRemove(table: Int32, key: UnsafeRawPointer, keyLength: Int, secure: Bool) {
        append(WALOperationCode.remove.rawValue)
        append(table)
        appendKey(key, keyLength)
        append(UInt8(secure ? 1 : 0))
    }

    func logRemoveRange(table: Int32, low: UnsafeRawPointer, lowLength: Int, high: UnsafeRawPointer, highLength: Int) {
        append(WALOperationCode.removeRange.rawValue)
        append(table)
        appendKey(low, lowLength)
        appendKey(high, highLength)
    }

    func logTableOperation(_ code: WALOperationCode, table: Int32) {
        append(code.rawValue)
        append(table)
    }

    func logSetMasterClientId(_ id: Int64) {
        append(WALOperationCode.setMasterClientId.rawValue)
        append(UInt64(bitPattern: id))
    }

    func logSetExtent(table: Int32, keyType: ValueBoxKeyType, key: UnsafeRawPointer, keyLength: Int, extent: LoggedExtent) {
        appendSetTarget(.setExtent, table: table, keyType: keyType, key: key, keyLength: keyLength)
        append(extent.head)
        append(extent.storedLength)
        append(extent.rawLength)
        append(extent.codec)
        append(extent.checksum)
    }

    func logRename(from: Int32, to: Int32) {
        append(WALOperationCode.renameTable.rawValue)
        append(from)
        append(to)
    }
}

extension ByteReader {
    private mutating func key() throws(ByteReadError) -> UnsafeRawBufferPointer {
        try bytes(Int(try uint16()))
    }

    /// What a set (either form) sets: table, key type, key.
    private mutating func setTarget() throws(ByteReadError) -> (Int32, ValueBoxKeyType, UnsafeRawBufferPointer) {
        let table = try int32()
        let keyTypeOffset = offset
        let rawKeyType = try uint8()
        guard let keyType = ValueBoxKeyType(rawValue: Int32(rawKeyType)) else {
            throw .undefinedByte(rawKeyType, offset: keyTypeOffset)
        }
        return (table, keyType, try key())
    }

    /// The next operation. Throws when the payload is malformed (which a valid checksum makes a bug or a crafted
    /// file; the caller reports corruption).
    mutating func operation() throws(ByteReadError) -> WALOperation {
        let codeOffset = offset
        let raw = try uint8()
        guard let code = WALOperationCode(rawValue: raw) else { throw .undefinedByte(raw, offset: codeOffset) }
        switch code {
        case .set:
            let (table, keyType, key) = try setTarget()
            // A length beyond Int.max is clamped: it is longer than any payload, so `bytes` throws.
            let value = try bytes(Int(clamping: try uint64()))
            return .set(table: table, keyType: keyType, key: key, value: value)
        case .remove:
            let table = try int32()
            let key = try key()
            return .remove(table: table, key: key, secure: try uint8() != 0)
        case .removeRange:
            let table = try int32()
            let low = try key()
            return .removeRange(table: table, low: low, high: try key())
        case .removeAll:
            return .removeAll(table: try int32())
        case .removeTable:
            return .removeTable(table: try int32())
        case .renameTable:
            let from = try int32()
            return .renameTable(from: from, to: try int32())
        case .setMasterClientId:
            return .setMasterClientId(try int64())
        case .setExtent:
            let (table, keyType, key) = try setTarget()
            let head = try uint64()
            let storedLength = try uint64()
            let rawLength = try uint64()
            let codec = try uint8()
            let extent = LoggedExtent(head: head, storedLength: storedLength, rawLength: rawLength, codec: codec, checksum: try uint64())
            return .setExtent(table: table, keyType: keyType, key: key, extent: extent)
        }
    }
}
