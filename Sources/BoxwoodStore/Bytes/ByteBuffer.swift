/// A growable byte buffer that owns its memory. Integers are appended little-endian, varints as LEB128 (read
/// back by ``ByteReader``). It builds every WAL record on the commit path and every Postbox-encoded value, so the
/// appends are inlinable, capacity doubles (appends are amortised O(1)) and a warmed-up buffer never allocates.
///
/// The stored properties opt out of dynamic exclusivity checks: they are only touched through short,
/// non-overlapping accesses inside this class, and the checks cost about a fifth of encode time.
public final class ByteBuffer {
    // Invariant: `_count <= _capacity`, and `_memory` holds `_capacity` allocated bytes of which the first
    // `_count` are written. Only this class changes them (`reserve` grows before every append).
    @usableFromInline @exclusivity(unchecked) var _memory: UnsafeMutableRawPointer
    @usableFromInline @exclusivity(unchecked) var _capacity: Int
    @usableFromInline @exclusivity(unchecked) var _count = 0

    /// An empty buffer with room for `capacity` bytes (at least 64).
    public init(capacity: Int = 4096) {
        _capacity = max(capacity, 64)
        _memory = UnsafeMutableRawPointer.allocate(byteCount: _capacity, alignment: 16)
    }

    deinit { _memory.deallocate() }

    /// The bytes written.
    @inlinable public var count: Int { _count }
    /// The bytes allocated.
    @inlinable public var capacity: Int { _capacity }
    /// The start of the memory (valid until the next append or reset).
    @inlinable var memory: UnsafeMutableRawPointer { _memory }

    /// The bytes written, valid while the buffer is alive and not appended to (see ``withBytes(_:)``).
    @inlinable public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: _memory, count: _count) }

    /// Calls `body` with the bytes written; the buffer stays alive for the call.
    @inlinable
    public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(bytes)
    }

    /// Forgets the bytes written (the memory is kept).
    @inlinable public func reset() { _count = 0 }

    /// Makes room for `extra` more bytes.
    @inlinable @inline(__always)
    public func reserve(_ extra: Int) {
        if _count + extra > _capacity { grow(to: _count + extra) }
    }

    @usableFromInline
    func grow(to needed: Int) {
        var newCapacity = _capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newMemory = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newMemory.copyMemory(from: _memory, byteCount: _count)
        _memory.deallocate()
        _memory = newMemory
        _capacity = newCapacity
    }

    /// Shrinks a buffer that grew large for one big record back to a modest size. The default keeps the
    /// buffer of a batch-sized transaction (10,000 small puts make a ~1.3 MiB record): regrowing it from
    /// 4 KiB on every commit copied it over and over and faulted in fresh pages each time.
    func shrinkIfLarge(limit: Int = 8 << 20) {
        if _capacity > limit && _count == 0 {
            _memory.deallocate()
            _capacity = 4096
            _memory = UnsafeMutableRawPointer.allocate(byteCount: _capacity, alignment: 16)
        }
    }

    // MARK: Appending

    /// Appends `value` little-endian.
    @inlinable @inline(__always)
    public func append<T: FixedWidthInteger>(_ value: T) {
        let size = MemoryLayout<T>.size
        reserve(size)
        storeInteger(_memory, _count, value)
        _count += size
    }

    /// Appends `count` bytes from `bytes`.
    @inlinable @inline(__always)
    public func append(_ bytes: UnsafeRawPointer, _ count: Int) {
        reserve(count)
        if count > 0 { (_memory + _count).copyMemory(from: bytes, byteCount: count) }
        _count += count
    }

    /// Appends raw bytes.
    @inlinable @inline(__always)
    public func append(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        append(base, bytes.count)
    }

    /// Appends an unsigned LEB128 varint (7 bits a byte, low group first, the high bit set on every byte but the
    /// last), as ``ByteReader/varint(maxBytes:)`` reads it.
    @inlinable @inline(__always)
    public func appendVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        append(UInt8(v))
    }

    /// Appends 4 bytes to be filled later by ``patch(_:at:)`` and returns their offset.
    @inlinable @inline(__always)
    public func appendPlaceholder32() -> Int {
        reserve(4)
        let offset = _count
        _count += 4
        return offset
    }

    /// Writes `value` little-endian over the 4 bytes at `offset`, which ``appendPlaceholder32()`` returned.
    @inlinable @inline(__always)
    public func patch(_ value: Int32, at offset: Int) {
        storeInteger(_memory, offset, value)
    }
}
