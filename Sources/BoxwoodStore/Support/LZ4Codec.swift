import CLZ4

/// Value codecs recorded per stored value (a format field, never guessed).
enum ValueCodec: UInt8 {
    case raw = 0
    case lz4 = 1
}

/// LZ4 block compression of values through liblz4.
enum LZ4Codec {
    /// Compresses `count` bytes at `source` when that saves at least 1/16 of the size; returns the compressed
    /// bytes (caller frees with `deallocate`) or nil when compression does not pay.
    static func compressIfSmaller(_ source: UnsafeRawPointer, _ count: Int) -> (UnsafeMutableRawPointer, Int)? {
        guard count > 0, count < Int(LZ4_MAX_INPUT_SIZE) else { return nil }
        let bound = Int(LZ4_compressBound(Int32(count)))
        let target = count - count / 16
        let out = UnsafeMutableRawPointer.allocate(byteCount: bound, alignment: 8)
        let written = Int(LZ4_compress_default(
            source.assumingMemoryBound(to: CChar.self), out.assumingMemoryBound(to: CChar.self),
            Int32(count), Int32(bound)))
        if written <= 0 || written >= target {
            out.deallocate()
            return nil
        }
        return (out, written)
    }

    /// Decompresses exactly `rawCount` bytes into `destination`; false when the input is malformed.
    static func decompress(_ source: UnsafeRawPointer, _ count: Int, into destination: UnsafeMutableRawPointer, rawCount: Int) -> Bool {
        guard count <= Int(Int32.max), rawCount <= Int(Int32.max) else { return false }
        let produced = LZ4_decompress_safe(
            source.assumingMemoryBound(to: CChar.self), destination.assumingMemoryBound(to: CChar.self),
            Int32(count), Int32(rawCount))
        return Int(produced) == rawCount
    }
}
