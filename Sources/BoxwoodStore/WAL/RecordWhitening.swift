/// XORs WAL record bytes with a keystream derived from the log's salt and the record's file offset.
///
/// Why: recovery must tell a torn write (sectors that never reached the disk read back as zeros, because the
/// log is truncated durably before it is reused) from bit rot in an acknowledged record. Whitened records
/// look random, so a record part that reads as all zeros can only be an unwritten sector, while damage that
/// leaves no zero sector is corruption. Applying the function twice restores the input.
enum RecordWhitening {
    /// The keystream key of the record at `offset` in a log with `salt`.
    @inline(__always)
    static func key(salt: UInt64, offset: UInt64) -> UInt64 {
        SplitMix64.mix(salt ^ (offset &* 0xD6E8_FEB8_6659_FD93))
    }

    /// XORs `count` bytes at `p` with the keystream of `key`, starting `start` bytes into the stream
    /// (`start` must be a multiple of 8).
    static func apply(_ p: UnsafeMutableRawPointer, count: Int, key: UInt64, start: Int = 0) {
        var word = UInt64(start / 8)
        var i = 0
        while i + 8 <= count {
            let v = p.loadUnaligned(fromByteOffset: i, as: UInt64.self) ^ stream(key, word).littleEndian
            p.storeBytes(of: v, toByteOffset: i, as: UInt64.self)
            i += 8
            word += 1
        }
        if i < count {
            var k = stream(key, word)
            while i < count {
                let b = p.load(fromByteOffset: i, as: UInt8.self) ^ UInt8(truncatingIfNeeded: k)
                p.storeBytes(of: b, toByteOffset: i, as: UInt8.self)
                k >>= 8
                i += 1
            }
        }
    }

    @inline(__always)
    private static func stream(_ key: UInt64, _ word: UInt64) -> UInt64 {
        SplitMix64.mix(key &+ word &* SplitMix64.gamma)
    }
}

/// Sector arithmetic for telling torn writes from corruption.
enum Sectors {
    /// The granularity at which a device may tear a write.
    static let size: UInt64 = 512

    /// True when some 512-byte-aligned sector's share of `p[0..<count]` (which sits at file offset `offset`)
    /// is entirely zero: the signature of a sector that was never written.
    static func containsZeroSector(_ p: UnsafeRawPointer, count: Int, offset: UInt64) -> Bool {
        var start = 0
        while start < count {
            let fileOffset = offset + UInt64(start)
            let sectorEnd = (fileOffset / size + 1) * size
            let end = min(count, start + Int(sectorEnd - fileOffset))
            var allZero = true
            var i = start
            while i < end {
                if p.load(fromByteOffset: i, as: UInt8.self) != 0 { allZero = false; break }
                i += 1
            }
            if allZero { return true }
            start = end
        }
        return false
    }
}
