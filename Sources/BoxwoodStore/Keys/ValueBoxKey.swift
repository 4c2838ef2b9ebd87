import BoxwoodPlatform

/// Heap storage of a ``ValueBoxKey``; shared between copies until one of them is mutated.
@usableFromInline
final class ValueBoxKeyStorage {
    @usableFromInline let memory: UnsafeMutableRawPointer
    @usableFromInline let length: Int

    @inlinable
    init(length: Int) {
        self.length = length
        self.memory = UnsafeMutableRawPointer.allocate(byteCount: max(length, 1), alignment: 8)
    }

    deinit { memory.deallocate() }
}

/// A binary key: raw bytes compared like LMDB's `mdb_cmp_memn` (memcmp over the common prefix, then the shorter
/// key first). Integer setters write big-endian with no sign flip, exactly as Postbox does, so composite keys
/// sort by their fields. A key has value semantics; setters copy the bytes first if they are shared.
///
/// For `int64` tables a key is 8 bytes holding the big-endian integer (`ValueBoxKey(int64:)`); those tables
/// order keys by signed numeric value.
public struct ValueBoxKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    @usableFromInline nonisolated(unsafe) var storage: ValueBoxKeyStorage

    /// The number of bytes in the key.
    @inlinable public var length: Int { storage.length }

    /// A key of `length` zero bytes.
    @inlinable
    public init(length: Int) {
        precondition(length >= 0)
        storage = ValueBoxKeyStorage(length: length)
        storage.memory.initializeMemory(as: UInt8.self, repeating: 0, count: max(length, 1))
    }

    /// A key holding the UTF-8 bytes of `string`.
    public init(_ string: String) {
        var s = string
        self = s.withUTF8 { ValueBoxKey(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// A key holding a copy of `bytes`.
    @inlinable
    public init(bytes: UnsafeRawBufferPointer) {
        storage = ValueBoxKeyStorage(length: bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 {
            storage.memory.copyMemory(from: base, byteCount: bytes.count)
        }
    }

    /// A key holding a copy of the given bytes.
    public init(_ bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { ValueBoxKey(bytes: $0) }
    }

    /// A key holding a copy of a buffer's bytes.
    public init(_ buffer: MemoryBuffer) {
        self = ValueBoxKey(bytes: UnsafeRawBufferPointer(start: buffer.memory, count: buffer.length))
    }

    /// An 8-byte key for an `int64` table.
    @inlinable
    public init(int64 value: Int64) {
        self.init(length: 8)
        setInt64(0, value: value)
    }

    /// The bytes of the key, valid during `body`.
    @inlinable
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: storage.memory, count: storage.length))
    }

    @inlinable
    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) {
            let copy = ValueBoxKeyStorage(length: storage.length)
            copy.memory.copyMemory(from: storage.memory, byteCount: max(storage.length, 1))
            storage = copy
        }
    }

    // MARK: Setters (big-endian, no sign flip)

    @inlinable public mutating func setInt8(_ offset: Int, value: Int8) { setUInt8(offset, value: UInt8(bitPattern: value)) }

    @inlinable public mutating func setUInt8(_ offset: Int, value: UInt8) {
        precondition(offset >= 0 && offset + 1 <= length, "ValueBoxKey setter out of bounds")
        makeUnique(); storage.memory.storeBytes(of: value, toByteOffset: offset, as: UInt8.self)
    }

    /// Writes a `UInt16` in **native (little-endian)** order: Postbox's chat-list pinning key depends on it.
    @inlinable public mutating func setUInt16(_ offset: Int, value: UInt16) {
        precondition(offset >= 0 && offset + 2 <= length, "ValueBoxKey setter out of bounds")
        makeUnique(); storage.memory.storeBytes(of: value, toByteOffset: offset, as: UInt16.self)
    }

    @inlinable public mutating func setInt32(_ offset: Int, value: Int32) { setUInt32(offset, value: UInt32(bitPattern: value)) }

    @inlinable public mutating func setUInt32(_ offset: Int, value: UInt32) {
        precondition(offset >= 0 && offset + 4 <= length, "ValueBoxKey setter out of bounds")
        makeUnique(); storeInteger(storage.memory, offset, value, .bigEndian)
    }

    @inlinable public mutating func setInt64(_ offset: Int, value: Int64) { setUInt64(offset, value: UInt64(bitPattern: value)) }

    @inlinable public mutating func setUInt64(_ offset: Int, value: UInt64) {
        precondition(offset >= 0 && offset + 8 <= length, "ValueBoxKey setter out of bounds")
        makeUnique(); storeInteger(storage.memory, offset, value, .bigEndian)
    }

    /// Copies raw bytes into the key at `offset`.
    public mutating func setBytes(_ offset: Int, _ bytes: UnsafeRawBufferPointer) {
        precondition(offset >= 0 && offset + bytes.count <= length, "ValueBoxKey setter out of bounds")
        makeUnique()
        if let base = bytes.baseAddress, bytes.count > 0 {
            (storage.memory + offset).copyMemory(from: base, byteCount: bytes.count)
        }
    }

    // MARK: Getters

    @inlinable public func getInt8(_ offset: Int) -> Int8 { Int8(bitPattern: getUInt8(offset)) }
    @inlinable public func getUInt8(_ offset: Int) -> UInt8 {
        precondition(offset >= 0 && offset + 1 <= length); return storage.memory.load(fromByteOffset: offset, as: UInt8.self)
    }
    @inlinable public func getUInt16(_ offset: Int) -> UInt16 {
        precondition(offset >= 0 && offset + 2 <= length); return storage.memory.loadUnaligned(fromByteOffset: offset, as: UInt16.self)
    }
    @inlinable public func getInt32(_ offset: Int) -> Int32 { Int32(bitPattern: getUInt32(offset)) }
    @inlinable public func getUInt32(_ offset: Int) -> UInt32 {
        precondition(offset >= 0 && offset + 4 <= length)
        return loadInteger(storage.memory, offset, .bigEndian)
    }
    @inlinable public func getInt64(_ offset: Int) -> Int64 { Int64(bitPattern: getUInt64(offset)) }
    @inlinable public func getUInt64(_ offset: Int) -> UInt64 {
        precondition(offset >= 0 && offset + 8 <= length)
        return loadInteger(storage.memory, offset, .bigEndian)
    }

    // MARK: Derived keys

    /// The first `length` bytes.
    public func prefix(_ length: Int) -> ValueBoxKey {
        precondition(length >= 0 && length <= self.length)
        return ValueBoxKey(bytes: UnsafeRawBufferPointer(start: storage.memory, count: length))
    }

    /// True when this key is a prefix of `other` (an empty key is a prefix of everything).
    public func isPrefix(to other: ValueBoxKey) -> Bool {
        if length > other.length { return false }
        if length == 0 { return true }
        return bytesEqual(storage.memory, other.storage.memory, count: length)
    }

    /// The key with its bytes in reverse order.
    public var reversed: ValueBoxKey {
        let result = ValueBoxKey(length: length)
        for i in 0..<length { result.storage.memory.storeBytes(of: getUInt8(length - 1 - i), toByteOffset: i, as: UInt8.self) }
        return result
    }

    /// Adds one to the last byte with carry; 0xFF wraps to 0 and the length is unchanged.
    public var successor: ValueBoxKey {
        var result = self
        result.makeUnique()
        var i = length - 1
        while i >= 0 {
            let byte = result.getUInt8(i)
            if byte != 0xFF {
                result.storage.memory.storeBytes(of: byte + 1, toByteOffset: i, as: UInt8.self)
                break
            }
            result.storage.memory.storeBytes(of: 0, toByteOffset: i, as: UInt8.self)
            i -= 1
        }
        return result
    }

    /// Subtracts one from the last byte with borrow; when the borrow runs past the first byte the result is
    /// the key shortened by one byte instead (Postbox's rule). The key must not be empty.
    public var predecessor: ValueBoxKey {
        precondition(length > 0, "predecessor of an empty key")
        var result = self
        result.makeUnique()
        var i = length - 1
        while i >= 0 {
            let byte = result.getUInt8(i)
            if byte != 0 {
                result.storage.memory.storeBytes(of: byte - 1, toByteOffset: i, as: UInt8.self)
                return result
            }
            result.storage.memory.storeBytes(of: 0xFF, toByteOffset: i, as: UInt8.self)
            i -= 1
        }
        return prefix(length - 1)
    }

    /// Concatenation.
    public static func + (lhs: ValueBoxKey, rhs: ValueBoxKey) -> ValueBoxKey {
        let result = ValueBoxKey(length: lhs.length + rhs.length)
        if lhs.length > 0 { result.storage.memory.copyMemory(from: lhs.storage.memory, byteCount: lhs.length) }
        if rhs.length > 0 { (result.storage.memory + lhs.length).copyMemory(from: rhs.storage.memory, byteCount: rhs.length) }
        return result
    }

    /// Lowercase hex of the bytes.
    public var description: String { hexString(UnsafeRawBufferPointer(start: storage.memory, count: length)) }

    /// The bytes decoded as UTF-8 (invalid sequences repaired).
    public var stringValue: String {
        String(decoding: UnsafeRawBufferPointer(start: storage.memory, count: length), as: UTF8.self)
    }

    @inlinable
    public static func < (lhs: ValueBoxKey, rhs: ValueBoxKey) -> Bool {
        compareKeys(UnsafeRawPointer(lhs.storage.memory), lhs.length, UnsafeRawPointer(rhs.storage.memory), rhs.length) < 0
    }

    @inlinable
    public static func == (lhs: ValueBoxKey, rhs: ValueBoxKey) -> Bool {
        lhs.length == rhs.length && bytesEqual(lhs.storage.memory, rhs.storage.memory, count: lhs.length)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes: UnsafeRawBufferPointer(start: storage.memory, count: length))
    }
}

/// LMDB's `mdb_cmp_memn`: bytewise comparison of the common prefix, then the shorter first. Returns <0, 0
/// or >0. The prefix is compared eight bytes at a time as big-endian words (no call into libc): keys are
/// mostly short (Postbox keys are 8 to 20 bytes), and this runs at every step of every binary search.
@inlinable @inline(__always)
func compareKeys(_ a: UnsafeRawPointer, _ aLength: Int, _ b: UnsafeRawPointer, _ bLength: Int) -> Int {
    let common = aLength < bLength ? aLength : bLength
    var i = 0
    while i &+ 8 <= common {
        let x = UInt64(bigEndian: a.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        let y = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        if x != y { return x < y ? -1 : 1 }
        i &+= 8
    }
    if i &+ 4 <= common {
        let x = UInt32(bigEndian: a.loadUnaligned(fromByteOffset: i, as: UInt32.self))
        let y = UInt32(bigEndian: b.loadUnaligned(fromByteOffset: i, as: UInt32.self))
        if x != y { return x < y ? -1 : 1 }
        i &+= 4
    }
    while i < common {
        let x = a.load(fromByteOffset: i, as: UInt8.self)
        let y = b.load(fromByteOffset: i, as: UInt8.self)
        if x != y { return x < y ? -1 : 1 }
        i &+= 1
    }
    return aLength &- bLength
}

/// Lowercase hex of `bytes`.
func hexString(_ bytes: UnsafeRawBufferPointer) -> String {
    let digits: [UInt8] = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 2)
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
}
