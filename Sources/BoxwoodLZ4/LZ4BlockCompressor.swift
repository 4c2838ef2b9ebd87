/// The compressor: a greedy single-probe matcher. A hash of the 4 (or, from 1536 bytes of input, 5) bytes at each
/// position indexes a table of the last position seen with that hash; a candidate whose 4 bytes are equal becomes a
/// match, extended backwards over pending literals and forwards as far as the end margin allows. After a match, the
/// position right after it is tried at once. The search step grows after every 64 misses, so incompressible input
/// is crossed quickly.
extension LZ4Block {
    /// Misses before the search step grows by one byte (as a shift).
    @inline(__always) static var skipShift: Int { 6 }

    /// Compresses `count` (13 or more) bytes at `src`; nil when the block does not fit in `capacity` bytes.
    /// `table` holds `1 << (32 - hashShift)` zeroed positions relative to `src`. With 16-bit entries the input must
    /// be under `smallInputLimit` (every position fits, and no distance exceeds the largest offset); with wider ones,
    /// distances are checked. Specialized for each entry type and hash.
    static func compressBlock<Entry: FixedWidthInteger & UnsignedInteger, Hash: LZ4PositionHash>(
        _ src: UnsafeRawPointer, _ count: Int, _ dst: UnsafeMutableRawPointer, _ capacity: Int,
        _ table: UnsafeMutablePointer<Entry>, hashShift: UInt32, _: Hash.Type
    ) -> Int? {
        let checksDistance = Entry.bitWidth > 16
        // Pointers into the input: `ip` the position tried, `anchor` the first byte not yet written.
        let lastMatchStart = src + (count - matchStartMargin)
        let matchEnd = src + (count - lastLiterals)
        let outputEnd = dst + capacity
        var output = dst
        var anchor = src
        var ip = src + 1
        table[Hash.slot(src, hashShift)] = 0

        search: while true {
            // Find a 4-byte match at `ip` or after it.
            var match = src
            var attempts = 1 << skipShift
            var step = 1
            while true {
                if ip > lastMatchStart { break search }
                let sequence = load32(ip)
                let index = Hash.slot(ip, hashShift)
                let position = ip - src
                match = src + Int(table[index])
                table[index] = Entry(truncatingIfNeeded: position)
                if (!checksDistance || ip - match <= maximumOffset) && load32(match) == sequence { break }
                ip += step
                step = attempts &>> skipShift
                attempts &+= 1
            }
            // Take back the literals that the match also covers.
            while ip > anchor && match > src && (ip - 1).load(as: UInt8.self) == (match - 1).load(as: UInt8.self) {
                ip -= 1
                match -= 1
            }
            // Emit the sequence, then as long as the next position matches at once, sequences without literals.
            while true {
                let length = minimumMatch &+ commonPrefix(ip + minimumMatch, match + minimumMatch, end: matchEnd)
                guard writeSequence(&output, outputEnd, literals: anchor, ip - anchor, offset: ip - match, matchLength: length) else {
                    return nil
                }
                ip += length
                anchor = ip
                if ip > lastMatchStart { break search }
                // Index a position inside the match too: a later repeat of its tail finds it.
                table[Hash.slot(ip - 2, hashShift)] = Entry(truncatingIfNeeded: ip - 2 - src)
                let sequence = load32(ip)
                let index = Hash.slot(ip, hashShift)
                match = src + Int(table[index])
                table[index] = Entry(truncatingIfNeeded: ip - src)
                if (!checksDistance || ip - match <= maximumOffset) && load32(match) == sequence { continue }
                ip += 1
                continue search
            }
        }
        guard let tail = storeLiterals(anchor, src + count - anchor, output, outputEnd - output) else { return nil }
        return output - dst + tail
    }

    /// The number of equal bytes at `a` and `b`, counting no byte of `a` at or past `end`.
    @inline(__always)
    static func commonPrefix(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, end: UnsafeRawPointer) -> Int {
        var p = a
        var q = b
        while end - p >= 8 {
            let difference = load64LE(p) ^ load64LE(q)
            if difference != 0 { return p - a + difference.trailingZeroBitCount &>> 3 }
            p += 8
            q += 8
        }
        if end - p >= 4 && load32(p) == load32(q) {
            p += 4
            q += 4
        }
        if end - p >= 2 && p.loadUnaligned(as: UInt16.self) == q.loadUnaligned(as: UInt16.self) {
            p += 2
            q += 2
        }
        if p < end && p.load(as: UInt8.self) == q.load(as: UInt8.self) { p += 1 }
        return p - a
    }

    /// The number of 255-bytes-and-remainder bytes that follow a token nibble of 15 for `length`.
    @inline(__always)
    static func extraLengthBytes(_ length: Int) -> Int {
        length >= 15 ? (length - 15) / 255 + 1 : 0
    }

    /// Writes the bytes after a nibble of 15 for `length` (15 or more) at `output`.
    @inline(__always)
    static func writeExtraLength(_ output: inout UnsafeMutableRawPointer, _ length: Int) {
        var rest = length - 15
        if rest >= 255 {
            let full = rest / 255
            output.initializeMemory(as: UInt8.self, repeating: 255, count: full)
            output += full
            rest -= full * 255
        }
        output.storeBytes(of: UInt8(truncatingIfNeeded: rest), as: UInt8.self)
        output += 1
    }

    /// Writes one sequence (token, literals, offset, match length) at `output` and advances it; false, with nothing
    /// written, when it does not fit before `outputEnd`. The literals may be read up to 7 bytes past their end
    /// (the caller's match and end margin are there).
    @inline(__always)
    static func writeSequence(_ output: inout UnsafeMutableRawPointer, _ outputEnd: UnsafeMutableRawPointer,
                              literals: UnsafeRawPointer, _ literalCount: Int, offset: Int, matchLength: Int) -> Bool {
        let matchCode = matchLength &- minimumMatch
        // A quick bound (x / 255 < (x >> 7) + 1 for the length bytes) plus 8 bytes for word copies; the exact size
        // only near the end.
        let roomy = outputEnd - output >= literalCount &+ (literalCount &>> 7) &+ (matchCode &>> 7) &+ 13
        if !roomy {
            let size = 1 + extraLengthBytes(literalCount) + literalCount + 2 + extraLengthBytes(matchCode)
            guard outputEnd - output >= size else { return false }
        }
        var out = output
        out.storeBytes(of: UInt8(truncatingIfNeeded: min(literalCount, 15) &<< 4 | min(matchCode, 15)), as: UInt8.self)
        out += 1
        if literalCount >= 15 { writeExtraLength(&out, literalCount) }
        if roomy {
            // Whole words: at most 7 bytes past the literals, overwritten by the offset or still before the end.
            var target = out
            var source = literals
            let end = out + literalCount
            repeat {
                copy8(target, source)
                target += 8
                source += 8
            } while target < end
        } else {
            out.copyMemory(from: literals, byteCount: literalCount)
        }
        out += literalCount
        out.storeBytes(of: UInt16(truncatingIfNeeded: offset).littleEndian, as: UInt16.self)
        out += 2
        if matchCode >= 15 { writeExtraLength(&out, matchCode) }
        output = out
        return true
    }

    /// Writes `count` bytes at `source` as the last sequence (literals only) into `capacity` bytes at `output`;
    /// returns the bytes written, or nil when they do not fit.
    @inline(__always)
    static func storeLiterals(_ source: UnsafeRawPointer?, _ count: Int, _ output: UnsafeMutableRawPointer, _ capacity: Int) -> Int? {
        let size = 1 + extraLengthBytes(count) + count
        guard capacity >= size else { return nil }
        var out = output
        out.storeBytes(of: UInt8(truncatingIfNeeded: min(count, 15) << 4), as: UInt8.self)
        out += 1
        if count >= 15 { writeExtraLength(&out, count) }
        if let source, count > 0 { out.copyMemory(from: source, byteCount: count) }
        return size
    }
}

/// How the compressor hashes a position: multiplicative (Fibonacci) hashing of the bytes there to the table's
/// `32 - hashShift` bits.
protocol LZ4PositionHash {
    static func slot(_ p: UnsafeRawPointer, _ hashShift: UInt32) -> Int
}

/// Hashes the 4 bytes at a position: every 4-byte match is found.
enum LZ4FourByteHash: LZ4PositionHash {
    @inline(__always)
    static func slot(_ p: UnsafeRawPointer, _ hashShift: UInt32) -> Int {
        Int(truncatingIfNeeded: (UInt32(littleEndian: load32(p)) &* 2_654_435_761) &>> hashShift)
    }
}

/// Hashes the 5 bytes at a position (reading 8): 4-byte matches, which save little and split literal runs, are
/// mostly skipped, and longer ones crowd the table less.
enum LZ4FiveByteHash: LZ4PositionHash {
    @inline(__always)
    static func slot(_ p: UnsafeRawPointer, _ hashShift: UInt32) -> Int {
        // The 5 bytes end up in the top 40 bits; the product's top bits depend on all of them.
        Int(truncatingIfNeeded: ((load64LE(p) &<< 24) &* 0x9E37_79B9_7F4A_7C15) &>> (UInt64(hashShift) + 32))
    }
}
