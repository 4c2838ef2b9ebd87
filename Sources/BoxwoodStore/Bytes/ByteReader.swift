/// Reads integers, varints and byte ranges from memory it borrows (a page, a WAL record, a table value, an
/// encoded object) and checks every read against the end: bytes that are short or damaged throw
/// ``ByteReadError``, they never make a read trap or leave the range. Integers are little-endian unless the
/// method says big-endian.
///
/// Reads at the cursor (``offset``) move it forward; reads `at:` an offset leave it. The reader does not own the
/// bytes: they must stay valid and unchanged while it is used (a ``MemoryBuffer`` is read inside
/// ``MemoryBuffer/withBytes(_:)``).
public struct ByteReader {
    /// The bytes being read.
    public let buffer: UnsafeRawBufferPointer
    /// Where the next cursor read starts. Any value is safe: every read checks it (a negative or past-the-end
    /// offset makes the read throw).
    public var offset: Int

    /// A reader at `offset` of `buffer`.
    @inlinable
    public init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    /// A reader over `count` bytes at `start`.
    @inlinable
    public init(start: UnsafeRawPointer, count: Int) {
        self.init(UnsafeRawBufferPointer(start: start, count: count))
    }

    /// Whether the cursor has reached the end.
    @inlinable public var isAtEnd: Bool { offset >= buffer.count }

    /// The bytes after the cursor.
    @inlinable public var remaining: Int { max(buffer.count - offset, 0) }

    // MARK: Bounds

    /// Checks that `needed` bytes start at `offset`. Written so that no `offset + needed` is computed: `needed`
    /// often comes from the bytes themselves and may be near Int.max.
    @inlinable @inline(__always)
    public func require(_ needed: Int, at offset: Int) throws(ByteReadError) {
        guard offset >= 0, needed >= 0, needed <= buffer.count - offset else {
            throw .truncated(offset: offset, needed: needed, available: offset >= 0 ? max(buffer.count - offset, 0) : 0)
        }
    }

    /// Checks that the cursor is at the end: a value that must fill its bytes exactly.
    @inlinable
    public func requireEnd() throws(ByteReadError) {
        guard offset == buffer.count else { throw .trailingBytes(offset: offset, count: buffer.count - offset) }
    }

    // MARK: Reads at an offset

    /// The little-endian `T` at `offset`.
    @inlinable @inline(__always)
    public func integer<T: FixedWidthInteger>(at offset: Int, as type: T.Type = T.self) throws(ByteReadError) -> T {
        try require(MemoryLayout<T>.size, at: offset)
        // Safe: `require` passed for at least one byte, so the buffer is not empty and has a base address.
        return loadInteger(buffer.baseAddress.unsafelyUnwrapped, offset)
    }

    /// The big-endian `T` at `offset` (the byte order of keys).
    @inlinable @inline(__always)
    public func bigEndianInteger<T: FixedWidthInteger>(at offset: Int, as type: T.Type = T.self) throws(ByteReadError) -> T {
        try require(MemoryLayout<T>.size, at: offset)
        // Safe: as in `integer(at:)`.
        return loadInteger(buffer.baseAddress.unsafelyUnwrapped, offset, .bigEndian)
    }

    // MARK: Reads at the cursor

    /// The little-endian `T` at the cursor.
    @inlinable @inline(__always)
    public mutating func read<T: FixedWidthInteger>(_ type: T.Type = T.self) throws(ByteReadError) -> T {
        let value: T = try integer(at: offset)
        offset += MemoryLayout<T>.size
        return value
    }

    @inlinable @inline(__always) public mutating func uint8() throws(ByteReadError) -> UInt8 { try read() }
    @inlinable @inline(__always) public mutating func uint16() throws(ByteReadError) -> UInt16 { try read() }
    @inlinable @inline(__always) public mutating func uint32() throws(ByteReadError) -> UInt32 { try read() }
    @inlinable @inline(__always) public mutating func uint64() throws(ByteReadError) -> UInt64 { try read() }
    @inlinable @inline(__always) public mutating func int32() throws(ByteReadError) -> Int32 { try read() }
    @inlinable @inline(__always) public mutating func int64() throws(ByteReadError) -> Int64 { try read() }

    /// The next `count` bytes, borrowed from ``buffer``.
    @inlinable @inline(__always)
    public mutating func bytes(_ count: Int) throws(ByteReadError) -> UnsafeRawBufferPointer {
        try require(count, at: offset)
        defer { offset += count }
        return UnsafeRawBufferPointer(start: buffer.baseAddress.map { $0 + offset }, count: count)
    }

    /// An unsigned LEB128 varint (7 bits a byte, low group first, the high bit set on every byte but the last) of
    /// at most `maxBytes` bytes; 10 hold any UInt64. ``ByteBuffer/appendVarint(_:)`` writes them.
    @inlinable @inline(__always)
    public mutating func varint(maxBytes: Int = 10) throws(ByteReadError) -> UInt64 {
        guard offset >= 0 else { throw .invalidVarint(offset: offset) }
        let end = offset < buffer.count ? offset + min(maxBytes, buffer.count - offset) : offset
        var p = offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while p < end {
            let byte = buffer[p]
            p += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 {
                offset = p
                return value
            }
            shift += 7
        }
        throw .invalidVarint(offset: offset)
    }
}
