/// A growable byte buffer for building WAL records (little-endian integers). No Foundation, no per-append
/// allocation once warmed up.
final class ByteBuffer {
    private(set) var memory: UnsafeMutableRawPointer
    private(set) var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 4096) {
        self.capacity = max(capacity, 64)
        memory = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit { memory.deallocate() }

    func reset() { count = 0 }

    func reserve(_ extra: Int) {
        let needed = count + extra
        if needed <= capacity { return }
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newMemory = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newMemory.copyMemory(from: memory, byteCount: count)
        memory.deallocate()
        memory = newMemory
        capacity = newCapacity
    }

    /// Shrinks a buffer that grew large for one big record back to a modest size. The default keeps the
    /// buffer of a batch-sized transaction (10,000 small puts make a ~1.3 MiB record): regrowing it from
    /// 4 KiB on every commit copied it over and over and faulted in fresh pages each time.
    func shrinkIfLarge(limit: Int = 8 << 20) {
        if capacity > limit && count == 0 {
            memory.deallocate()
            capacity = 4096
            memory = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        }
    }

    @inline(__always) func append(_ v: UInt8) { reserve(1); memory.storeBytes(of: v, toByteOffset: count, as: UInt8.self); count += 1 }
    @inline(__always) func append(_ v: UInt16) { reserve(2); store16(memory, count, Int(v)); count += 2 }
    @inline(__always) func append(_ v: UInt32) { reserve(4); store32(memory, count, v); count += 4 }
    @inline(__always) func append(_ v: UInt64) { reserve(8); store64(memory, count, v); count += 8 }
    @inline(__always) func append(_ v: Int32) { append(UInt32(bitPattern: v)) }

    @inline(__always) func append(_ bytes: UnsafeRawPointer, _ n: Int) {
        reserve(n)
        if n > 0 { (memory + count).copyMemory(from: bytes, byteCount: n) }
        count += n
    }
}

/// Reads little-endian fields from a byte range, reporting truncation instead of trapping.
struct ByteReader {
    let base: UnsafeRawPointer
    let count: Int
    var offset = 0

    init(_ base: UnsafeRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    var isAtEnd: Bool { offset >= count }

    mutating func u8() -> UInt8? {
        guard offset + 1 <= count else { return nil }
        defer { offset += 1 }
        return base.load(fromByteOffset: offset, as: UInt8.self)
    }

    mutating func u16() -> Int? {
        guard offset + 2 <= count else { return nil }
        defer { offset += 2 }
        return load16(base, offset)
    }

    mutating func u32() -> UInt32? {
        guard offset + 4 <= count else { return nil }
        defer { offset += 4 }
        return load32(base, offset)
    }

    mutating func i32() -> Int32? { u32().map { Int32(bitPattern: $0) } }

    mutating func u64() -> UInt64? {
        guard offset + 8 <= count else { return nil }
        defer { offset += 8 }
        return load64(base, offset)
    }

    mutating func bytes(_ n: Int) -> UnsafeRawPointer? {
        // `n` comes from the bytes being read (a WAL record's value length): compared with what is left, so that
        // no length near Int.max can overflow `offset + n`.
        guard n >= 0, n <= count - offset else { return nil }
        defer { offset += n }
        return base + offset
    }
}
