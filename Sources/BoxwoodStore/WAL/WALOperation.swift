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
enum WALOperationCode: UInt8 {
    case set = 1
    case remove = 2
    case removeRange = 3
    case removeAll = 4
    case removeTable = 5
    case renameTable = 6
    case setMasterClientId = 7
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
}

extension ByteBuffer {
    func appendKey(_ key: UnsafeRawPointer, _ length: Int) {
        append(UInt16(length))
        append(key, length)
    }

    func logSet(table: Int32, keyType: ValueBoxKeyType, key: UnsafeRawPointer, keyLength: Int, value: UnsafeRawPointer, valueLength: Int) {
        append(WALOperationCode.set.rawValue)
        append(table)
        append(UInt8(keyType.rawValue))
        appendKey(key, keyLength)
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

    func logRename(from: Int32, to: Int32) {
        append(WALOperationCode.renameTable.rawValue)
        append(from)
        append(to)
    }
}

extension ByteReader {
    private mutating func key() -> UnsafeRawBufferPointer? {
        guard let n = u16(), let p = bytes(n) else { return nil }
        return UnsafeRawBufferPointer(start: p, count: n)
    }

    /// The next operation, or nil when the payload is malformed (which a valid checksum makes a bug or a
    /// crafted file; the caller reports corruption).
    mutating func operation() -> WALOperation? {
        guard let raw = u8(), let code = WALOperationCode(rawValue: raw) else { return nil }
        if code == .setMasterClientId {
            guard let id = u64() else { return nil }
            return .setMasterClientId(Int64(bitPattern: id))
        }
        guard let table = i32() else { return nil }
        switch code {
        case .set:
            guard let kt = u8(), let keyType = ValueBoxKeyType(rawValue: Int32(kt)), let k = key(),
                  let vn = u64(), vn <= UInt64(Int.max), let v = bytes(Int(vn)) else { return nil }
            return .set(table: table, keyType: keyType, key: k, value: UnsafeRawBufferPointer(start: v, count: Int(vn)))
        case .remove:
            guard let k = key(), let s = u8() else { return nil }
            return .remove(table: table, key: k, secure: s != 0)
        case .removeRange:
            guard let low = key(), let high = key() else { return nil }
            return .removeRange(table: table, low: low, high: high)
        case .removeAll:
            return .removeAll(table: table)
        case .removeTable:
            return .removeTable(table: table)
        case .renameTable:
            guard let to = i32() else { return nil }
            return .renameTable(from: table, to: to)
        case .setMasterClientId:
            return nil
        }
    }
}
