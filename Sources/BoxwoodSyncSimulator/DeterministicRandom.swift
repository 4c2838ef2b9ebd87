/// A seeded pseudo-random generator (xoshiro256**, its state filled by SplitMix64).
///
/// The same seed and stream always give the same sequence, on every platform and in every run. The simulator uses
/// no other source of randomness, and its helpers (bounded integers, shuffles, picks) are implemented here rather
/// than through the standard library's generic algorithms, so results do not depend on the toolchain.
public struct DeterministicRandom: Sendable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    /// A generator for `seed`; different `stream` values give independent sequences for the same seed.
    public init(seed: UInt64, stream: UInt64 = 0) {
        var mix = seed ^ (stream &* 0xD1B5_4A32_D192_ED03)
        func splitMix(_ x: inout UInt64) -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix(&mix)
        s1 = splitMix(&mix)
        s2 = splitMix(&mix)
        s3 = splitMix(&mix)
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        let result = rotateLeft(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotateLeft(s3, 45)
        return result
    }

    /// A uniform value in `0..<bound` (`bound > 0`), without modulo bias (Lemire's method).
    public mutating func next(below bound: UInt64) -> UInt64 {
        precondition(bound > 0, "bound must be positive")
        var product = next().multipliedFullWidth(by: bound)
        if product.low < bound {
            let threshold = (0 &- bound) % bound
            while product.low < threshold {
                product = next().multipliedFullWidth(by: bound)
            }
        }
        return product.high
    }

    /// A uniform integer in `range`.
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next(below: width))
    }

    /// A uniform 32-bit integer in `range`.
    public mutating func int32(in range: ClosedRange<Int32>) -> Int32 {
        Int32(int(in: Int(range.lowerBound)...Int(range.upperBound)))
    }

    /// A non-zero random 64-bit integer (for random ids).
    public mutating func nonZeroInt64() -> Int64 {
        while true {
            let value = Int64(bitPattern: next())
            if value != 0 { return value }
        }
    }

    /// A uniform value in `0..<1`.
    public mutating func unit() -> Double {
        Double(next() >> 11) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// True with probability `probability`. Probabilities `<= 0` and `>= 1` consume no randomness.
    public mutating func chance(_ probability: Double) -> Bool {
        if probability <= 0 { return false }
        if probability >= 1 { return true }
        return unit() < probability
    }

    /// A uniformly chosen element (nil when `elements` is empty).
    public mutating func element<C: RandomAccessCollection>(of elements: C) -> C.Element? {
        guard !elements.isEmpty else { return nil }
        let offset = Int(next(below: UInt64(elements.count)))
        return elements[elements.index(elements.startIndex, offsetBy: offset)]
    }

    /// An index of `weights` chosen with probability proportional to its weight (weights must not all be 0).
    public mutating func weightedIndex(_ weights: [Int]) -> Int {
        let total = weights.reduce(0, +)
        precondition(total > 0, "weights must not all be zero")
        var roll = Int(next(below: UInt64(total)))
        for (index, weight) in weights.enumerated() {
            if roll < weight { return index }
            roll -= weight
        }
        return weights.count - 1
    }

    /// Shuffles `elements` in place (Fisher–Yates).
    public mutating func shuffle<T>(_ elements: inout [T]) {
        guard elements.count > 1 else { return }
        for i in stride(from: elements.count - 1, to: 0, by: -1) {
            let j = Int(next(below: UInt64(i + 1)))
            if i != j { elements.swapAt(i, j) }
        }
    }

    /// `count` distinct elements of `elements` in random order (all of them when `count >= elements.count`).
    public mutating func sample<T>(_ elements: [T], count: Int) -> [T] {
        var copy = elements
        shuffle(&copy)
        return Array(copy.prefix(max(0, count)))
    }

    private func rotateLeft(_ x: UInt64, _ k: UInt64) -> UInt64 {
        (x << k) | (x >> (64 - k))
    }
}
