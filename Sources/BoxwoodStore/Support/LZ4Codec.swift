import BoxwoodLZ4
#if canImport(CLZ4) && !BOXWOOD_SWIFT_LZ4
import CLZ4
#endif

/// Value codecs recorded per stored value (a format field, never guessed).
enum ValueCodec: UInt8 {
    case raw = 0
    case lz4 = 1
}

/// LZ4 block compression of values. The block format is the on-disk format; two codecs write and read it:
/// liblz4 where the package can link it (Linux, through pkg-config), and BoxwoodLZ4 — the same format written in
/// Swift — everywhere else (iOS, macOS and the other Apple platforms, where no liblz4 can be linked into an app).
/// Each reads the other's blocks (`BoxwoodLZ4Tests/LZ4CompatibilityTests`). Building with
/// `-Xswiftc -DBOXWOOD_SWIFT_LZ4` runs the Apple platforms' codec on Linux too.
enum LZ4Codec {
    /// Compresses `count` bytes at `source` when that saves at least 1/8 of the size; returns the compressed
    /// bytes (caller frees with `deallocate`) or nil when compression does not pay: a value that LZ4 shrinks by less
    /// is stored raw, as it would cost a decompression on every read for little space (docs/benchmarks.md,
    /// "Large values").
    static func compressIfSmaller(_ source: UnsafeRawPointer, _ count: Int) -> (UnsafeMutableRawPointer, Int)? {
        guard count > 0, count < LZ4Block.maxInputSize else { return nil }
        let bound = LZ4Block.compressBound(count)
        let target = count - count / 8
        let out = UnsafeMutableRawPointer.allocate(byteCount: bound, alignment: 8)
        #if canImport(CLZ4) && !BOXWOOD_SWIFT_LZ4
        let written = Int(LZ4_compress_default(
            source.assumingMemoryBound(to: CChar.self), out.assumingMemoryBound(to: CChar.self),
            Int32(count), Int32(bound)))
        #else
        let written = LZ4Block.compress(UnsafeRawBufferPointer(start: source, count: count),
                                        into: UnsafeMutableRawBufferPointer(start: out, count: bound)) ?? 0
        #endif
        if written <= 0 || written >= target {
            out.deallocate()
            return nil
        }
        return (out, written)
    }

    /// Decompresses exactly `rawCount` bytes into `destination`; false when the input is malformed.
    static func decompress(_ source: UnsafeRawPointer, _ count: Int, into destination: UnsafeMutableRawPointer, rawCount: Int) -> Bool {
        guard count <= Int(Int32.max), rawCount <= Int(Int32.max) else { return false }
        #if canImport(CLZ4) && !BOXWOOD_SWIFT_LZ4
        let produced = Int(LZ4_decompress_safe(
            source.assumingMemoryBound(to: CChar.self), destination.assumingMemoryBound(to: CChar.self),
            Int32(count), Int32(rawCount)))
        #else
        let produced = (try? LZ4Block.decompress(UnsafeRawBufferPointer(start: source, count: count),
                                                 into: UnsafeMutableRawBufferPointer(start: destination, count: rawCount))) ?? -1
        #endif
        return produced == rawCount
    }
}
