// The deterministic workload of the kill-and-reopen crash test, shared by the `boxwood-crash-child`
// executable (which runs it until it is killed) and `BoxwoodCrashTests` (which rebuilds the expected
// database from it). Not part of any product.

import BoxwoodStore

/// The crash workload: transaction `n` is a pure function of `(seed, n)`. It touches three tables: inserts
/// `keyCount(n)` new keys into each, overwrites each table's `lastKey` with `n`, and removes the keys of
/// transaction `n - window`. After transactions 1...m the database holds exactly the keys of transactions
/// max(1, m - window + 1)...m plus the last keys holding m.
public struct CrashWorkload {
    /// How many transactions' keys stay in the database.
    public static let window: UInt64 = 40
    /// Two binary tables (table 2 removes with `removeRange`) and an int64 table.
    public static let tables = [ValueBoxTable(id: 1, keyType: .binary), ValueBoxTable(id: 2, keyType: .binary),
                         ValueBoxTable(id: 3, keyType: .int64)]
    private static let words: [[UInt8]] = ["boxwood ", "page ", "leaf ", "branch ", "checkpoint ", "wal ", "salt ", "commit "]
        .map { Array($0.utf8) }

    public let seed: UInt64

    public init(seed: UInt64) { self.seed = seed }

    /// A hash of the seed and `parts`.
    public func hash(_ parts: UInt64...) -> UInt64 {
        parts.reduce(SplitMix64.mix(seed)) { SplitMix64.mix($0 ^ $1) }
    }

    /// `value` as 8 big-endian bytes.
    public static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) }
    }

    /// How many keys transaction `n` inserts into each table (1...6).
    public func keyCount(_ n: UInt64) -> UInt64 { 1 + hash(1, n) % 6 }

    /// True when the child announces and runs a checkpoint after transaction `n` (about one in seven).
    public func checkpointsAfter(_ n: UInt64) -> Bool { hash(2, n) % 7 == 0 }

    /// The key of insert `i` of transaction `n`: big-endian `(n, i)`, so keys sort by transaction.
    public func key(_ table: ValueBoxTable, _ n: UInt64, _ i: UInt64) -> ValueBoxKey {
        if table.keyType == .int64 { return ValueBoxKey(int64: Int64(n << 8 | i) - (1 << 40)) }
        var key = ValueBoxKey(length: 12)
        key.setUInt64(0, value: n)
        key.setUInt32(8, value: UInt32(i))
        return key
    }

    /// The key every transaction overwrites with its number; it sorts after all the others.
    public func lastKey(_ table: ValueBoxTable) -> ValueBoxKey {
        table.keyType == .int64 ? ValueBoxKey(int64: .max) : ValueBoxKey([0xFF])
    }

    /// The value of insert `i` of transaction `n`: mostly 20–200 random bytes, sometimes about 3 KB of
    /// text (LZ4-compressed), rarely about 20 KB of random bytes (overflow pages).
    public func value(_ table: ValueBoxTable, _ n: UInt64, _ i: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: hash(3, UInt64(table.id), n, i))
        let kind = rng.next() % 100
        let text = kind >= 85 && kind < 98
        let length: Int
        if kind < 85 { length = 20 + rng.below(181) } else if text { length = 2_900 + rng.below(300) } else { length = 20_000 + rng.below(1_000) }
        guard text else { return rng.bytes(length) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length + 16)
        while bytes.count < length { bytes += CrashWorkload.words[rng.below(CrashWorkload.words.count)] }
        return Array(bytes.prefix(length))
    }

    /// Runs transaction `n` in `box`, from `begin()` to `commit()`.
    public func run(_ n: UInt64, in box: ValueBox) throws(BoxwoodError) {
        try box.begin()
        for table in CrashWorkload.tables {
            for i in 0..<keyCount(n) {
                try box.set(table, key: key(table, n, i), value: MemoryBuffer(value(table, n, i)))
            }
            try box.set(table, key: lastKey(table), value: MemoryBuffer(CrashWorkload.bigEndian(n)))
            guard n > CrashWorkload.window else { continue }
            let old = n - CrashWorkload.window
            if table.id == 2 {
                try box.removeRange(table, start: key(table, old, 0), end: key(table, old, keyCount(old) - 1))
            } else {
                for i in 0..<keyCount(old) { try box.remove(table, key: key(table, old, i)) }
            }
        }
        try box.commit()
    }
}
