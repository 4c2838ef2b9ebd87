/// A growable byte buffer over raw memory that the encoder appends little-endian values to. Capacity doubles,
/// so appends are amortised O(1); nothing in here touches `Foundation.Data`.
///
/// The stored properties opt out of dynamic exclusivity checks: they are only touched through short,
/// non-overlapping accesses inside this class, and the checks cost about a fifth of encode time.
final class EncodingBuffer {
    @exclusivity(unchecked) private(set) var memory: UnsafeMutableRawPointer
    @exclusivity(unchecked) private(set) var capacity: Int
    @exclusivity(unchecked) private(set) var count = 0

    init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        memory = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 8)
    }

    deinit { memory.deallocate() }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: memory, count: count) }

    func reset() { count = 0 }

    @inline(__always) func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    private func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newMemory = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        newMemory.copyMemory(from: memory, byteCount: count)
        memory.deallocate()
        memory = newMemory
        capacity = newCapacity
    }

    @inline(__always) func appendByte(_ value: UInt8) {
        reserve(1)
        memory.storeBytes(of: value, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    @inline(__always) func appendInt32(_ value: Int32) {
        reserve(4)
        memory.storeBytes(of: value.littleEndian, toByteOffset: count, as: Int32.self)
        count += 4
    }

    @inline(__always) func appendInt64(_ value: Int64) {
        reserve(8)
        memory.storeBytes(of: value.littleEndian, toByteOffset: count, as: Int64.self)
        count += 8
    }

    /// Appends an unsigned LEB128 varint (7 bits per byte, low bits first, high bit = more bytes follow).
    @inline(__always) func appendVarint(_ value: UInt32) {
        var v = value
        while v >= 0x80 {
            appendByte(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        appendByte(UInt8(v))
    }

    @inline(__always) func append(_ bytes: UnsafeRawBufferPointer) {
        let n = bytes.count
        guard n > 0, let base = bytes.baseAddress else { return }
        reserve(n)
        (memory + count).copyMemory(from: base, byteCount: n)
        count += n
    }

    /// Appends a 4-byte placeholder and returns its offset, for a length patched in later.
    @inline(__always) func appendPlaceholder32() -> Int {
        reserve(4)
        let offset = count
        count += 4
        return offset
    }

    @inline(__always) func patchInt32(_ value: Int32, at offset: Int) {
        memory.storeBytes(of: value.littleEndian, toByteOffset: offset, as: Int32.self)
    }
}
