import BoxwoodStore
/// LEB128 unsigned varints: 7 bits per byte, low group first, high bit set on every byte but the last.
enum Varint {
    /// Appends `value`.
    @inline(__always)
    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Reads a varint at `offset`, advancing it; nil when the bytes end first or it has more than 10 bytes.
    @inline(__always)
    static func read(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count && shift < 64 {
            let byte = bytes[offset]
            offset += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
        return nil
    }
}
