/// The LZ4 block format, written in Swift: the same bytes liblz4's `LZ4_compress_default` writes and
/// `LZ4_decompress_safe` reads, without linking liblz4. Only the block format; no frame header, checksum or
/// dictionary.
///
/// A block is a series of sequences. Each sequence is a token byte (literal count in the high nibble, match length
/// minus 4 in the low nibble; 15 means "more follows" as bytes of 255 ended by a byte below 255), the literals, a
/// 2-byte little-endian offset back into the output (1...65535), and the extra match-length bytes. The last sequence
/// is literals only and ends the block. A writer keeps the last 5 bytes as literals and starts no match in the last
/// 12 bytes, so a block of under 13 bytes is one literal run.
public enum LZ4Block {
    /// The largest input `compress` accepts (liblz4's `LZ4_MAX_INPUT_SIZE`).
    public static let maxInputSize = 0x7E00_0000

    /// Largest compressed size for `count` input bytes (same as liblz4's `LZ4_compressBound`): `count + count / 255 +
    /// 16`, or 0 when `count` is negative or above `maxInputSize`. A destination this large always fits.
    public static func compressBound(_ count: Int) -> Int {
        guard count >= 0 && count <= maxInputSize else { return 0 }
        return count + count / 255 + 16
    }

    /// Compresses `source` into `destination`; returns bytes written, or nil when it does not fit in
    /// `destination.count` (never with `compressBound(source.count)` bytes) or when `source` is larger than
    /// `maxInputSize`. The two buffers must not overlap. An empty source compresses to one byte (an empty literal
    /// run). When it returns nil, `destination` may hold a partial block.
    public static func compress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int? {
        let count = source.count
        guard count <= maxInputSize, let dst = destination.baseAddress else { return nil }
        let capacity = destination.count
        guard let src = source.baseAddress, count >= minimumCompressible else {
            return storeLiterals(source.baseAddress, count, dst, capacity)
        }
        if count < smallInputLimit {
            // Positions fit in 16 bits, and no distance can exceed the largest offset. The table grows with the
            // input (at most 8192 entries), so a short value does not pay for clearing 16 KiB.
            let hashBits = min(max(Int.bitWidth - count.leadingZeroBitCount, 6), 13)
            // `table.baseAddress!` below: an allocation of at least 64 entries always has a base address.
            return withUnsafeTemporaryAllocation(of: UInt16.self, capacity: 1 << hashBits) { table in
                table.initialize(repeating: 0)
                let shift = UInt32(32 - hashBits)
                // In a short input the 4-byte matches are most of what there is to find.
                if count < fiveByteHashMinimum {
                    return compressBlock(src, count, dst, capacity, table.baseAddress!, hashShift: shift, LZ4FourByteHash.self)
                }
                return compressBlock(src, count, dst, capacity, table.baseAddress!, hashShift: shift, LZ4FiveByteHash.self)
            }
        }
        // `table.baseAddress!` below: an allocation of 4096 entries always has a base address.
        return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 1 << 12) { table in
            table.initialize(repeating: 0)
            return compressBlock(src, count, dst, capacity, table.baseAddress!, hashShift: 32 - 12, LZ4FiveByteHash.self)
        }
    }

    /// Decompresses `source` into `destination`; returns the number of bytes produced.
    /// Never reads outside `source` or writes outside `destination`, whatever the input; malformed input throws.
    ///
    /// `destination` needs room for the whole decompressed block (the size is not stored in the block, so callers
    /// keep it next to it). The block must end with a literal run exactly at the end of `source`. An empty source is
    /// `truncatedInput` (the empty block is one zero byte). Bytes of `destination` past the returned count, and all
    /// of it after a throw, hold unspecified values. The two buffers must not overlap.
    ///
    /// Every block liblz4 writes decodes here. The reader does not need the writer's end rules (the last 5 bytes
    /// literals, no match in the last 12), so it also decodes blocks that break them, which `LZ4_decompress_safe`
    /// rejects; and it rejects offset 0, which the format forbids and liblz4 1.9 lets through.
    public static func decompress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) throws(LZ4BlockError) -> Int {
        guard let src = source.baseAddress, source.count > 0 else { throw .truncatedInput }
        guard let dst = destination.baseAddress, destination.count > 0 else {
            // No room at all: only a block holding nothing decodes. A one-byte stand-in keeps the pointers real.
            // `spare.baseAddress!`: the bytes of a one-byte variable always have an address.
            var spare: UInt8 = 0
            let result: Result<Int, LZ4BlockError> = withUnsafeMutableBytes(of: &spare) { spare in
                do throws(LZ4BlockError) {
                    return .success(try decompressBlock(src, source.count, spare.baseAddress!, 0))
                } catch {
                    return .failure(error)
                }
            }
            return try result.get()
        }
        return try decompressBlock(src, source.count, dst, destination.count)
    }
}

// MARK: Format constants

extension LZ4Block {
    /// The shortest match (the low nibble of a token counts from it).
    @inline(__always) static var minimumMatch: Int { 4 }
    /// The last bytes of a block are always literals.
    @inline(__always) static var lastLiterals: Int { 5 }
    /// No match starts in the last 12 bytes of a block.
    @inline(__always) static var matchStartMargin: Int { 12 }
    /// Inputs shorter than this are one literal run.
    @inline(__always) static var minimumCompressible: Int { matchStartMargin + 1 }
    /// The largest offset a 2-byte field holds.
    @inline(__always) static var maximumOffset: Int { 65535 }
    /// Inputs below this size index positions in 16 bits: every match start is below 65535.
    @inline(__always) static var smallInputLimit: Int { 65535 + matchStartMargin }
    /// Inputs from this size on hash 5 bytes rather than 4.
    @inline(__always) static var fiveByteHashMinimum: Int { 1536 }
}

// MARK: Memory helpers

/// A 4-byte native-order load from any address.
@inline(__always)
func load32(_ p: UnsafeRawPointer) -> UInt32 { p.loadUnaligned(as: UInt32.self) }

/// An 8-byte little-endian load from any address (byte 0 is the low byte).
@inline(__always)
func load64LE(_ p: UnsafeRawPointer) -> UInt64 { UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)) }

/// Copies 8 bytes from `source` to `target` (any alignment; the ranges may overlap only if 8 apart or more).
@inline(__always)
func copy8(_ target: UnsafeMutableRawPointer, _ source: UnsafeRawPointer) {
    target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
}

/// Copies 16 bytes from `source` to `target` (any alignment; not overlapping).
@inline(__always)
func copy16(_ target: UnsafeMutableRawPointer, _ source: UnsafeRawPointer) {
    let low = source.loadUnaligned(as: UInt64.self)
    let high = source.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
    target.storeBytes(of: low, as: UInt64.self)
    target.storeBytes(of: high, toByteOffset: 8, as: UInt64.self)
}
