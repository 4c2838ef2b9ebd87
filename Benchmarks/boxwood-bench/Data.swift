import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Byte-wise equality of two buffers.
@inline(__always)
func bytesEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
}

/// The benchmark's keys: key `i` is the 8-byte big-endian form of the `i`-th output of SplitMix64 for the seed, a
/// seeded permutation of the 64-bit integers. The keys are distinct, and index order is a random key order.
final class KeySet {
    let count: Int
    /// Key indices in ascending key order.
    let sortedOrder: [Int32]
    /// The position of each key index in `sortedOrder`.
    let rank: [Int32]
    private let storage: UnsafeMutablePointer<UInt64>

    init(count: Int, seed: UInt64) {
        precondition(count > 0 && count < Int(Int32.max))
        self.count = count
        storage = .allocate(capacity: count)
        var rng = SplitMix64(seed: seed)
        var native = [UInt64](repeating: 0, count: count)
        for i in 0..<count {
            native[i] = rng.next()
            storage[i] = native[i].bigEndian
        }
        sortedOrder = (0..<Int32(count)).sorted { native[Int($0)] < native[Int($1)] }
        var rank = [Int32](repeating: 0, count: count)
        for (position, index) in sortedOrder.enumerated() { rank[Int(index)] = Int32(position) }
        self.rank = rank
    }

    deinit { storage.deallocate() }

    /// The bytes of key `index`.
    @inline(__always)
    func key(_ index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage + index, count: 8)
    }
}

/// Value bytes: the value of (index, version) is a slice of a fixed pool at an offset derived from both, so the
/// expected value of any key is known without storing it, and no value costs anything to produce in a timed loop.
final class ValuePool {
    /// What the pool holds.
    enum Content {
        /// SplitMix64 output: incompressible.
        case random
        /// English-like text from a small vocabulary: compresses about as well as chat messages.
        case text
    }

    static let poolBytes = 8 << 20
    static let maxLength = 64 << 10
    private let bytes: UnsafeMutableRawPointer

    init(_ content: Content, seed: UInt64) {
        let total = ValuePool.poolBytes + ValuePool.maxLength
        bytes = .allocate(byteCount: total, alignment: 16)
        var rng = SplitMix64(seed: seed)
        switch content {
        case .random:
            for offset in stride(from: 0, to: total, by: 8) {
                bytes.storeBytes(of: rng.next(), toByteOffset: offset, as: UInt64.self)
            }
        case .text:
            ValuePool.fillWithText(bytes, total, &rng)
        }
    }

    deinit { bytes.deallocate() }

    /// The value of `index` at `version`, `length` bytes long (at most `maxLength`).
    @inline(__always)
    func value(_ index: Int, version: UInt32, length: Int) -> UnsafeRawBufferPointer {
        let offset = Int(SplitMix64.mix(UInt64(index) << 32 | UInt64(version)) % UInt64(ValuePool.poolBytes))
        return UnsafeRawBufferPointer(start: bytes + offset, count: length)
    }

    private static let words = """
        the of and to a in is you that it he was for on are as with his they at be this have from or one had by word \
        but not what all were we when your can said there use an each which she do how their if will up other about \
        out many then them these so some her would make like him into time has look two more write go see number no \
        way could people my than first water been call who oil its now find long down day did get come made may part \
        message chat photo video sticker voice group channel tonight tomorrow meeting thanks sure okay great call later \
        sounds good link file document price weekend dinner train ticket home office coffee remember
        """.split(separator: " ").map { Array($0.utf8) }

    /// Sentences of random words, capitalized and punctuated.
    private static func fillWithText(_ bytes: UnsafeMutableRawPointer, _ total: Int, _ rng: inout SplitMix64) {
        var offset = 0
        var sentenceLeft = 0
        func put(_ byte: UInt8) {
            if offset < total { bytes.storeBytes(of: byte, toByteOffset: offset, as: UInt8.self) }
            offset += 1
        }
        while offset < total {
            let startsSentence = sentenceLeft == 0
            if startsSentence { sentenceLeft = 4 + rng.below(12) }
            let word = words[rng.below(words.count)]
            for (i, byte) in word.enumerated() {
                put(startsSentence && i == 0 && byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte)
            }
            sentenceLeft -= 1
            if sentenceLeft == 0 {
                put([UInt8(ascii: "."), UInt8(ascii: "!"), UInt8(ascii: "?")][rng.below(3)])
            } else if rng.below(10) == 0 {
                put(UInt8(ascii: ","))
            }
            put(UInt8(ascii: " "))
        }
    }
}

/// Where every timed read puts its bytes: each value is copied out, as a `get` returning a buffer does, and folded
/// into a checksum, so no read can be optimized away and engines that read the same data must agree on it.
final class ReadSink {
    private static let capacity = ValuePool.maxLength + 4096
    private let scratch = UnsafeMutableRawPointer.allocate(byteCount: ReadSink.capacity, alignment: 16)
    /// An order-dependent hash of the lengths and the first and last 8 bytes of everything consumed.
    private(set) var checksum: UInt64 = 0xCBF2_9CE4_8422_2325

    deinit { scratch.deallocate() }

    @inline(__always)
    func consume(_ bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        precondition(count <= ReadSink.capacity, "a value longer than any written")
        if count > 0 { scratch.copyMemory(from: bytes.baseAddress!, byteCount: count) }
        var folded = UInt64(count)
        if count >= 8 {
            folded ^= scratch.loadUnaligned(as: UInt64.self) &+ (scratch + (count - 8)).loadUnaligned(as: UInt64.self)
        } else if count > 0 {
            folded ^= UInt64(scratch.load(as: UInt8.self)) << 32
        }
        checksum = (checksum ^ folded) &* 0x0000_0100_0000_01B3
    }
}
