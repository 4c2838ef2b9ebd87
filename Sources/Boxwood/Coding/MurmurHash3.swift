/// MurmurHash3, x86 32-bit variant (Austin Appleby's public-domain algorithm), the hash Postbox uses for
/// the type hashes of encoded objects.
enum MurmurHash3 {
    /// The seed Postbox hashes type names with (−137723950).
    static let postboxSeed = UInt32(bitPattern: -137_723_950)

    static func hash32(_ bytes: UnsafeRawBufferPointer, seed: UInt32) -> UInt32 {
        let c1: UInt32 = 0xcc9e_2d51
        let c2: UInt32 = 0x1b87_3593
        var h = seed
        let blockCount = bytes.count / 4
        for i in 0..<blockCount {
            var k = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
            k &*= c1
            k = (k << 15) | (k >> 17)
            k &*= c2
            h ^= k
            h = (h << 13) | (h >> 19)
            h = h &* 5 &+ 0xe654_6b64
        }
        let tail = blockCount * 4
        var k: UInt32 = 0
        switch bytes.count & 3 {
        case 3:
            k ^= UInt32(bytes[tail + 2]) << 16
            fallthrough
        case 2:
            k ^= UInt32(bytes[tail + 1]) << 8
            fallthrough
        case 1:
            k ^= UInt32(bytes[tail])
            k &*= c1
            k = (k << 15) | (k >> 17)
            k &*= c2
            h ^= k
        default:
            break
        }
        h ^= UInt32(truncatingIfNeeded: bytes.count)
        h ^= h >> 16
        h &*= 0x85eb_ca6b
        h ^= h >> 13
        h &*= 0xc2b2_ae35
        h ^= h >> 16
        return h
    }

    static func hash32(_ string: String, seed: UInt32) -> UInt32 {
        Array(string.utf8).withUnsafeBytes { hash32($0, seed: seed) }
    }
}
