import BoxwoodCrashWorkload
import BoxwoodStore

// MARK: - The model (test only)

extension CrashWorkload {
    /// The entries of `table` after transactions 1...m, in ascending key order (keys in public form): the
    /// keys of transactions max(1, m - window + 1)...m, then the last key holding m (absent when m is 0).
    func expectedEntries(_ table: ValueBoxTable, after m: UInt64) -> [(key: [UInt8], value: [UInt8])] {
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
}
