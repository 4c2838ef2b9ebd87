/// SplitMix64 (Steele, Lea and Flood): a tiny, fast, seeded generator, so that a printed seed replays a run
/// exactly. Its output function `mix` is a bijection of the 64-bit integers. Used by the WAL's record
/// whitening, `SimulatedDisk`, the CLI demo, the tests and the benchmarks.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The increment of the state (2^64 / φ).
    public static let gamma: UInt64 = 0x9E37_79B9_7F4A_7C15

    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= SplitMix64.gamma
        return SplitMix64.mix(state)
    }

    /// The output function (the SplitMix64 finalizer).
    @inline(__always)
    public static func mix(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in `0..<n` (n > 0).
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < p }

    /// Fills `buffer` with random bytes.
    public mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        var i = 0
        while i + 8 <= buffer.count {
            buffer.storeBytes(of: next(), toByteOffset: i, as: UInt64.self)
            i += 8
        }
        if i < buffer.count {
            var r = next()
            while i < buffer.count { buffer[i] = UInt8(truncatingIfNeeded: r); r >>= 8; i += 1 }
        }
    }

    /// `n` random bytes.
    public mutating func bytes(_ n: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: n)
        out.withUnsafeMutableBytes { fill($0) }
        return out
    }
}
