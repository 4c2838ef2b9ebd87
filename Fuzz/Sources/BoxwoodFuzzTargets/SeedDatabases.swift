import BoxwoodStore
import Foundation

/// Small databases made by the engine through its public API, the starting points of the database targets'
/// seed corpora. Deterministic contents (salts and ids are random).
enum SeedDatabases {
    struct Build: Sendable {
        /// Capture the files while the value box is still open (a crash: the WAL keeps its records).
        var crash = false
        var body: @Sendable (ValueBox) throws -> Void
    }

    static let binary = ValueBoxTable(id: 1, keyType: .binary)
    static let int64 = ValueBoxTable(id: 2, keyType: .int64)
    static let scratch = ValueBoxTable(id: 3, keyType: .binary)

    static let all: [(String, Build)] = [
        ("empty", Build { _ in }),
        ("tables-and-wal", Build(crash: true) { box in
            try populate(box)
            try box.checkpoint()
            try walTransactions(box)
        }),
        ("freelist", Build { box in
            try box.begin()
            for i in 0..<60 { try box.set(binary, key: key(i), value: MemoryBuffer(value(i, 40))) }
            try box.commit()
            try box.checkpoint()
            try box.begin()
            try box.removeRange(binary, start: key(0), end: key(59))
            try box.commit()
            try box.checkpoint()
        }),
        ("branches", Build { box in
            try box.begin()
            for i in 0..<140 { try box.set(binary, key: key(i), value: MemoryBuffer(value(i, 24))) }
            try box.commit()
            try box.checkpoint()
        }),
    ]

    /// Tables of both key types with inline, LZ4 and overflow values.
    static func populate(_ box: ValueBox) throws {
        try box.begin()
        for i in 0..<12 { try box.set(binary, key: key(i), value: MemoryBuffer(value(i, 8))) }
        // Compressible: stored inline as an LZ4 block.
        try box.set(binary, key: ValueBoxKey("lz4"), value: MemoryBuffer([UInt8](repeating: 0x61, count: 600)))
        for i in 0..<8 { try box.set(int64, key: ValueBoxKey(int64: Int64(i) * 1000 - 3000), value: MemoryBuffer(value(i, 12))) }
        // Incompressible and too large to be inline: one overflow page.
        try box.set(int64, key: ValueBoxKey(int64: 99), value: MemoryBuffer(noise(1500)))
        try box.set(scratch, key: ValueBoxKey("x"), value: MemoryBuffer([1]))
        try box.commit()
    }

    /// One transaction per kind of WAL operation (set, remove, removeRange, removeAll, removeTable, renameTable,
    /// setMasterClientId), left uncheckpointed.
    static func walTransactions(_ box: ValueBox) throws {
        try box.begin()
        try box.set(binary, key: ValueBoxKey("new"), value: MemoryBuffer(value(1, 20)))
        try box.set(int64, key: ValueBoxKey(int64: -1), value: MemoryBuffer(noise(1200)))
        try box.commit()
        try box.begin()
        try box.remove(binary, key: key(3), secure: true)
        try box.remove(int64, key: ValueBoxKey(int64: 0))
        try box.commit()
        try box.begin()
        try box.removeRange(binary, start: key(5), end: key(8))
        try box.commit()
        try box.begin()
        try box.removeAllFromTable(scratch)
        try box.set(ValueBoxTable(id: 4, keyType: .binary), key: ValueBoxKey("t"), value: MemoryBuffer([2]))
        try box.renameTable(ValueBoxTable(id: 4, keyType: .binary), to: ValueBoxTable(id: 5, keyType: .binary))
        try box.removeTable(scratch)
        try box.commit()
        try box.becomeMasterClient()
    }

    /// Builds the database in a temporary directory and captures its files.
    static func capture(_ build: Build) throws -> DatabaseImage {
        let path = NSTemporaryDirectory() + "boxwood-fuzz-seed-\(UUID().uuidString)"
        defer { ScratchFiles.removeDatabase(path) }
        let box = try ValueBox(path: path)
        try build.body(box)
        if build.crash {
            let image = try DatabaseImage.capture(path)
            try box.close()
            return image
        }
        try box.close()
        var image = try DatabaseImage.capture(path)
        image.header = nil
        return image
    }

    static func key(_ i: Int) -> ValueBoxKey { ValueBoxKey("key-\(1000 + i)") }

    static func value(_ i: Int, _ length: Int) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: i &* 31 &+ $0) }
    }

    /// Deterministic bytes LZ4 cannot shrink.
    static func noise(_ length: Int) -> [UInt8] {
        var rng = SplitMix64(seed: UInt64(length))
        return (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }
}
