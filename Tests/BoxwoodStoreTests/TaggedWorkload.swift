@testable import BoxwoodStore

/// A deterministic stream of multi-key transactions whose effect is a pure function of (seed, transaction
/// number), so that after any crash the expected database for "transactions 1...m applied" can be rebuilt
/// and compared byte for byte — which finds lost, partial and corrupted transactions alike.
///
/// Transaction n writes 1–4 new keys tagged (n, i) into a binary table and into an int64 table (values of
/// 10–300 bytes, sometimes 2–6 KB of compressible text that goes to overflow pages), sets the binary table's
/// `last` key to n, and removes the keys transaction n − `window` wrote, so the database stays small.
struct TaggedWorkload {
    static let binary = ValueBoxTable(id: 1, keyType: .binary)
    static let integers = ValueBoxTable(id: 2, keyType: .int64)
    static let window = 25
    static let lastKey: [UInt8] = [0xFF]

    let seed: UInt64

    /// The operations of transaction `n`: (table, key, value or nil for a removal).
    func operations(_ n: Int) -> [(ValueBoxTable, [UInt8], [UInt8]?)] {
        var ops: [(ValueBoxTable, [UInt8], [UInt8]?)] = []
        for (i, value) in values(n).enumerated() {
            ops.append((Self.binary, Self.binaryKey(n, i), value))
            ops.append((Self.integers, Self.integerKey(n, i), Array(value.reversed())))
        }
        ops.append((Self.binary, Self.lastKey, Self.bigEndian(UInt64(n))))
        if n > Self.window {
            for i in 0..<values(n - Self.window).count {
                ops.append((Self.binary, Self.binaryKey(n - Self.window, i), nil))
                ops.append((Self.integers, Self.integerKey(n - Self.window, i), nil))
            }
        }
        return ops
    }

    /// Runs transaction `n` on `box` (begin, operations, commit).
    func run(_ n: Int, on box: ValueBox) throws(BoxwoodError) {
        try box.begin()
        do {
            for (table, key, value) in operations(n) {
                if let value { try box.set(table, key: ValueBoxKey(key), value: MemoryBuffer(value)) } else {
                    try box.remove(table, key: ValueBoxKey(key))
                }
            }
        } catch {
            box.abort()
            throw error
        }
        try box.commit()
    }

    /// The full contents of both tables after transactions 1...m, in key order.
    func expected(after m: Int) -> (binary: [([UInt8], [UInt8])], integers: [([UInt8], [UInt8])]) {
        var binary: [([UInt8], [UInt8])] = []
        var integers: [([UInt8], [UInt8])] = []
        if m >= 1 {
            for n in max(1, m - Self.window + 1)...m {
                for (i, value) in values(n).enumerated() {
                    binary.append((Self.binaryKey(n, i), value))
                    integers.append((Self.integerKey(n, i), Array(value.reversed())))
                }
            }
            binary.append((Self.lastKey, Self.bigEndian(UInt64(m))))
        }
        return (binary, integers)
    }

    /// The last transaction applied to `box` according to its `last` key (0 for none).
    static func lastApplied(_ box: ValueBox) throws -> Int {
        guard let bytes = try box.bytes(binary, ValueBoxKey(lastKey)), bytes.count == 8 else { return 0 }
        return Int(bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// Describes how `box` differs from the state after m transactions (nil when identical).
    func difference(_ box: ValueBox, after m: Int) throws -> String? {
        let want = expected(after: m)
        let gotBinary = try box.allEntries(Self.binary)
        let gotIntegers = try box.allEntries(Self.integers)
        for (name, got, expected) in [("binary", gotBinary, want.binary), ("int64", gotIntegers, want.integers)] {
            if got.count != expected.count {
                return "\(name) table holds \(got.count) entries, expected \(expected.count) for transactions ...\(m)"
            }
            for (g, e) in zip(got, expected) where g.0 != e.0 || g.1 != e.1 {
                return "\(name) table: key \(g.0) (value \(g.1.count) bytes) where key \(e.0) (value \(e.1.count) bytes) was expected after \(m)"
            }
        }
        return nil
    }

    private func values(_ n: Int) -> [[UInt8]] {
        var rng = SplitMix64(seed: seed ^ (UInt64(n) &* 0x9E37_79B9_7F4A_7C15))
        return (0..<(1 + rng.below(4))).map { i in
            if rng.chance(0.08) {
                let line = Array("txn \(n) item \(i) — compressible text for LZ4; ".utf8)
                let length = 2000 + rng.below(4000)
                return (0..<length).map { line[$0 % line.count] }
            }
            return rng.bytes(10 + rng.below(290))
        }
    }

    private static func binaryKey(_ n: Int, _ i: Int) -> [UInt8] { bigEndian(UInt64(n)) + [UInt8(i)] }

    private static func integerKey(_ n: Int, _ i: Int) -> [UInt8] {
        ValueBoxKey(int64: Int64(n) * 8 + Int64(i)).byteArray
    }

    private static func bigEndian(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64($0))) } }
}
