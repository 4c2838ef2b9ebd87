import BoxwoodStore

/// The model side of the crash workload: what the database must hold after transactions 1...m, so a test
/// can compare a recovered database with it byte for byte (finding lost, partial and corrupted
/// transactions alike).
extension CrashWorkload {
    /// The entries of `table` after transactions 1...m, in ascending key order (keys in public form): the
    /// keys of transactions max(1, m - window + 1)...m, then the last key holding m (absent when m is 0).
    public func expectedEntries(_ table: ValueBoxTable, after m: UInt64) -> [(key: [UInt8], value: [UInt8])] {
        guard m > 0 else { return [] }
        var entries: [(key: [UInt8], value: [UInt8])] = []
        for n in (m > CrashWorkload.window ? m - CrashWorkload.window + 1 : 1)...m {
            for i in 0..<keyCount(n) {
                entries.append((key(table, n, i).withUnsafeBytes { Array($0) }, value(table, n, i)))
            }
        }
        entries.append((lastKey(table).withUnsafeBytes { Array($0) }, CrashWorkload.bigEndian(m)))
        return entries
    }

    /// The last transaction applied to `box`, read from the int64 table's last key: 0 for an empty
    /// database, nil when that key does not hold 8 bytes.
    public func lastApplied(_ box: ValueBox) throws(BoxwoodError) -> UInt64? {
        let table = CrashWorkload.tables[2]
        guard let last = try box.get(table, key: lastKey(table)) else { return 0 }
        guard last.length == 8 else { return nil }
        return last.makeArray().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// How `box` differs from the state after transactions 1...m (every table scanned in full and compared
    /// byte for byte); nil when it holds exactly that state.
    public func difference(_ box: ValueBox, after m: UInt64) throws(BoxwoodError) -> String? {
        for table in CrashWorkload.tables {
            var actual: [(key: [UInt8], value: [UInt8])] = []
            try box.scan(table) { key, value in
                actual.append((key.withUnsafeBytes { Array($0) }, value.makeArray()))
                return true
            }
            if let difference = CrashWorkload.difference(actual, expectedEntries(table, after: m)) {
                return "table \(table.id) does not hold the state after transaction \(m): \(difference)"
            }
        }
        return nil
    }

    /// The first difference between scanned and expected entries; nil when they are equal.
    static func difference(_ actual: [(key: [UInt8], value: [UInt8])], _ expected: [(key: [UInt8], value: [UInt8])]) -> String? {
        func hex(_ bytes: [UInt8]) -> String {
            let digits = Array("0123456789abcdef")
            return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
        }
        let counts = "\(actual.count) entries (expected \(expected.count))"
        for index in 0..<max(actual.count, expected.count) {
            guard index < actual.count else { return "\(counts); missing key \(hex(expected[index].key))" }
            guard index < expected.count else { return "\(counts); unexpected key \(hex(actual[index].key))" }
            let (a, e) = (actual[index], expected[index])
            if a.key != e.key { return "\(counts); entry \(index) has key \(hex(a.key)), expected \(hex(e.key))" }
            if a.value != e.value {
                let common = min(a.value.count, e.value.count)
                let at = (0..<common).first { a.value[$0] != e.value[$0] } ?? common
                return "\(counts); key \(hex(a.key)) holds \(a.value.count) bytes (expected \(e.value.count)), first difference at byte \(at)"
            }
        }
        return nil
    }
}
