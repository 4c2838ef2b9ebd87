import BoxwoodPlatform

/// A block of bytes: `memory` holds `length` valid bytes out of `capacity`. Postbox's buffer type.
/// When `freeWhenDone` is true the buffer owns the memory (allocated with `malloc`) and frees it on deinit.
///
/// Not `Sendable`: a buffer is a mutable view of raw memory (``WriteBuffer`` grows it, ``ReadBuffer`` moves a
/// cursor through it), so Swift 6 keeps each one in the concurrency domain that made it. Send the bytes instead
/// (``makeArray()``, or a `ValueBoxKey`).
public class MemoryBuffer: Equatable, CustomStringConvertible {
    public internal(set) var memory: UnsafeMutableRawPointer
    public internal(set) var capacity: Int
    public internal(set) var length: Int
    public internal(set) var freeWhenDone: Bool

    /// Wraps existing memory (no copy).
    public init(memory: UnsafeMutableRawPointer, capacity: Int, length: Int, freeWhenDone: Bool) {
        self.memory = memory
        self.capacity = capacity
        self.length = length
        self.freeWhenDone = freeWhenDone
    }

    /// An empty buffer.
    public convenience init() {
        self.init(memory: ownedBytes(1), capacity: 1, length: 0, freeWhenDone: true)
    }

    /// A buffer owning a copy of `bytes`.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        let memory = ownedBytes(max(bytes.count, 1))
        if let base = bytes.baseAddress, bytes.count > 0 { memory.copyMemory(from: base, byteCount: bytes.count) }
        self.init(memory: memory, capacity: bytes.count, length: bytes.count, freeWhenDone: true)
    }

    /// A buffer owning a copy of another buffer's bytes.
    public convenience init(copyOf buffer: MemoryBuffer) {
        self.init(copying: buffer.bytes)
    }

    /// A buffer owning a copy of `bytes`.
    public convenience init(_ bytes: [UInt8]) {
        let memory = ownedBytes(max(bytes.count, 1))
        bytes.withUnsafeBytes { if let b = $0.baseAddress, $0.count > 0 { memory.copyMemory(from: b, byteCount: $0.count) } }
        self.init(memory: memory, capacity: bytes.count, length: bytes.count, freeWhenDone: true)
    }

    /// A buffer owning the UTF-8 bytes of `string`.
    public convenience init(string: String) {
        self.init(Array(string.utf8))
    }

    deinit {
        if freeWhenDone { freeBytes(memory) }
    }

    /// The valid bytes (`length` of them). Valid while the buffer is alive.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: memory, count: length) }

    /// Calls `body` with the valid bytes (read them with a ``ByteReader``); the buffer stays alive for the call.
    public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(bytes)
    }

    /// A copy of the valid bytes.
    public func makeArray() -> [UInt8] { Array(bytes) }

    public static func == (lhs: MemoryBuffer, rhs: MemoryBuffer) -> Bool {
        lhs.length == rhs.length && bytesEqual(lhs.memory, rhs.memory, count: lhs.length)
    }

    public var description: String { hexString(bytes) }
}

/// A buffer being written: `offset` is the append cursor. Grows to the needed size plus 256 bytes.
public final class WriteBuffer: MemoryBuffer {
    /// The write cursor (equal to `length`).
    public var offset: Int { length }

    /// An empty buffer with 32 bytes of capacity.
    public init() {
        super.init(memory: ownedBytes(32), capacity: 32, length: 0, freeWhenDone: true)
    }

    /// Appends `length` bytes from `data + offset`.
    public func write(_ data: UnsafeRawPointer, offset: Int = 0, length: Int) {
        guard length > 0 else { return }
        ensureCapacity(self.length + length)
        (memory + self.length).copyMemory(from: data + offset, byteCount: length)
        self.length += length
    }

    /// Appends raw bytes.
    public func write(_ bytes: UnsafeRawBufferPointer) {
        if let base = bytes.baseAddress { write(base, length: bytes.count) }
    }

    /// Appends a value in host byte order.
    public func write<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value) { write($0) }
    }

    /// Rewinds the cursor to zero (the memory is kept).
    public func reset() { length = 0 }

    /// A reader aliasing this buffer's memory (valid while this buffer is alive and unchanged).
    public func readBufferNoCopy() -> ReadBuffer {
        ReadBuffer(memory: memory, length: length, freeWhenDone: false)
    }

    /// Hands the bytes to a new reader (which owns a copy) and rewinds this buffer.
    public func makeReadBufferAndReset() -> ReadBuffer {
        let result = ReadBuffer(copying: bytes)
        reset()
        return result
    }

    func ensureCapacity(_ needed: Int) {
        if needed > capacity {
            let newCapacity = needed + 256
            guard let grown = reallocateBytes(memory, newCapacity) else { outOfMemory(newCapacity) }
            memory = grown
            capacity = newCapacity
        }
    }
}

/// A buffer being read: `offset` is the read cursor. Raw values are in host byte order.
public final class ReadBuffer: MemoryBuffer {
    /// The read cursor.
    public var offset: Int = 0

    /// Wraps memory (no copy); owns it when `freeWhenDone` (it must come from `malloc`).
    public init(memory: UnsafeMutableRawPointer, length: Int, freeWhenDone: Bool) {
        super.init(memory: memory, capacity: length, length: length, freeWhenDone: freeWhenDone)
    }

    /// A reader owning a copy of `bytes`.
    public init(copying bytes: UnsafeRawBufferPointer) {
        let memory = ownedBytes(max(bytes.count, 1))
        if let base = bytes.baseAddress, bytes.count > 0 { memory.copyMemory(from: base, byteCount: bytes.count) }
        super.init(memory: memory, capacity: bytes.count, length: bytes.count, freeWhenDone: true)
    }

    /// Copies `length` bytes at the cursor into `data + offset` and advances the cursor.
    public func read(_ data: UnsafeMutableRawPointer, offset: Int = 0, length: Int) {
        precondition(self.offset + length <= self.length, "ReadBuffer read past the end")
        (data + offset).copyMemory(from: memory + self.offset, byteCount: length)
        self.offset += length
    }

    /// Reads a host-order integer at the cursor.
    public func read<T: FixedWidthInteger>(_ type: T.Type = T.self) -> T {
        precondition(offset + MemoryLayout<T>.size <= length, "ReadBuffer read past the end")
        let value = memory.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += MemoryLayout<T>.size
        return value
    }

    /// Advances the cursor.
    public func skip(_ count: Int) { offset += count }

    /// Rewinds the cursor.
    public func reset() { offset = 0 }

    /// A copy of this reader's bytes that owns its memory.
    public func copy() -> ReadBuffer { ReadBuffer(copying: bytes) }
}

/// `malloc(count)` for a buffer's memory. The initializers and writes of Postbox's buffer API cannot throw, so a
/// failed allocation traps. Invariant that keeps bytes from files or the network away from it: `count` is always
/// the size of bytes the caller already holds in memory (a copy) or is appending; the engine allocates buffers whose
/// length it read from a file itself, with `allocateBytes`, and throws `.io(malloc, ENOMEM)` when that fails
/// (`ValueBytes.makeReadBuffer`, `LeafValue.readOverflowChain`). So only a process already out of memory reaches the
/// trap, as it would at any Swift allocation.
@inline(__always)
private func ownedBytes(_ count: Int) -> UnsafeMutableRawPointer {
    guard let memory = allocateBytes(count) else { outOfMemory(count) }
    return memory
}

private func outOfMemory(_ count: Int) -> Never {
    fatalError("MemoryBuffer: out of memory allocating \(count) bytes")
}
