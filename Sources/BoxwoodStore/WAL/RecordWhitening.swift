/// XORs WAL record bytes with a keystream derived from the log's salt and the record's file offset.
///
/// Why: recovery decides whether damage is a torn tail or sits in the middle of the log by looking for an intact
/// record after it (see `WriteAheadLog`). Keyed by offset, a record header validates only where it was written
/// and only in its own log: a copy of a header inside a value, a record of an older log, or the same bytes
/// shifted never pass for a record. Applying the function twice restores the input.
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
