/// xxHash64 (Yann Collet's algorithm, written here from its public specification). Every checksum in the
/// data file and the WAL is an XXH64 of the covered bytes with a structure-specific seed (for pages: the
/// page number, so a page written to the wrong place fails its check).
@usableFromInline
enum XXH64 {
    @usableFromInline static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    @usableFromInline static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    @usableFromInline static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    @usableFromInline static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    @usableFromInline static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    @inlinable @inline(__always)
    static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }

    @inlinable @inline(__always)
    static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        var acc = acc &+ input &* p2
        acc = rotl(acc, 31)
        return acc &* p1
    }

    @inlinable @inline(__always)
    static func mergeRound(_ acc: UInt64, _ val: UInt64) -> UInt64 {
        var acc = acc ^ round(0, val)
        acc = acc &* p1 &+ p4
        return acc
    }

    /// The XXH64 of `count` bytes at `data`.
    @inlinable
    static func hash(_ data: UnsafeRawPointer, _ count: Int, seed: UInt64 = 0) -> UInt64 {
        var p = 0
        var h: UInt64
        if count >= 32 {
            var v1 = seed &+ p1 &+ p2
            var v2 = seed &+ p2
            var v3 = seed
            var v4 = seed &- p1
            let limit = count - 32
            while p <= limit {
                v1 = round(v1, UInt64(littleEndian: data.loadUnaligned(fromByteOffset: p, as: UInt64.self)))
                v2 = round(v2, UInt64(littleEndian: data.loadUnaligned(fromByteOffset: p + 8, as: UInt64.self)))
                v3 = round(v3, UInt64(littleEndian: data.loadUnaligned(fromByteOffset: p + 16, as: UInt64.self)))
                v4 = round(v4, UInt64(littleEndian: data.loadUnaligned(fromByteOffset: p + 24, as: UInt64.self)))
                p += 32
            }
            h = rotl(v1, 1) &+ rotl(v2, 7) &+ rotl(v3, 12) &+ rotl(v4, 18)
            h = mergeRound(h, v1)
            h = mergeRound(h, v2)
            h = mergeRound(h, v3)
            h = mergeRound(h, v4)
        } else {
            h = seed &+ p5
        }
        h = h &+ UInt64(count)
        while p + 8 <= count {
            let k1 = round(0, UInt64(littleEndian: data.loadUnaligned(fromByteOffset: p, as: UInt64.self)))
            h ^= k1
            h = rotl(h, 27) &* p1 &+ p4
            p += 8
        }
        if p + 4 <= count {
            h ^= UInt64(UInt32(littleEndian: data.loadUnaligned(fromByteOffset: p, as: UInt32.self))) &* p1
            h = rotl(h, 23) &* p2 &+ p3
            p += 4
        }
        while p < count {
            h ^= UInt64(data.load(fromByteOffset: p, as: UInt8.self)) &* p5
            h = rotl(h, 11) &* p1
            p += 1
        }
        h ^= h >> 33
        h = h &* p2
        h ^= h >> 29
        h = h &* p3
        h ^= h >> 32
        return h
    }
}
