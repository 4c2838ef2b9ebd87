import BoxwoodStore

/// Settings of every Boxwood database of the run.
enum BoxwoodBenchSettings {
    /// `ValueBoxOptions.checkpointMemoryBytes`; nil keeps the library default. Set once from the command line
    /// before any engine opens.
    nonisolated(unsafe) static var checkpointMemoryBytes: Int?
    /// `ValueBoxOptions.decryptedPageCacheBytes` for the encrypted column; nil keeps the library default.
    nonisolated(unsafe) static var decryptedPageCacheBytes: Int?
    /// `ValueBoxOptions.compressionLimit`; nil keeps the library default.
    nonisolated(unsafe) static var compressionLimit: Int?
}

/// Which Boxwood column an engine fills: plain, or encrypted (`--encrypted`, docs/encryption.md).
protocol BoxwoodBenchMode {
    static var kind: EngineKind { get }
    static var encryption: ValueBoxEncryptionParameters? { get }
}

enum PlainBoxwood: BoxwoodBenchMode {
    static var kind: EngineKind { .boxwood }
    static var encryption: ValueBoxEncryptionParameters? { nil }
}

enum EncryptedBoxwood: BoxwoodBenchMode {
    static var kind: EngineKind { .boxwoodEncrypted }
    /// A fixed benchmark key (not a secret).
    static var encryption: ValueBoxEncryptionParameters? {
        ValueBoxEncryptionParameters(forceEncryptionIfNoSet: false,
                                     key: ValueBoxEncryptionParameters.Key(bytes: (0..<32).map { UInt8($0) })!,
                                     salt: ValueBoxEncryptionParameters.Salt(bytes: (0..<16).map { UInt8($0 + 100) })!)
    }
}

typealias BoxwoodEngine = BoxwoodEngineOf<PlainBoxwood>
typealias EncryptedBoxwoodEngine = BoxwoodEngineOf<EncryptedBoxwood>

/// Boxwood through its public API: `ValueBox(path:options:)` with the run's durability and default checkpoint
/// thresholds (unless `--boxwood-checkpoint-memory` sets the dirty-memory one), one `begin`/`commit` per batch,
/// `withValue` for reads and `withRange` with a limit for scans (the engine's no-copy reads). `Mode` says whether
/// the database is encrypted (the generic is specialized: no dispatch in the timed loops).
final class BoxwoodEngineOf<Mode: BoxwoodBenchMode>: DatabaseEngine, CheckpointCounting {
    static var kind: EngineKind { Mode.kind }
    static var logFileName: String? { "wal" }
    static var takesCheckpointBytes: Bool { true }

    let directory: String
    let durability: Durability
    private let box: ValueBox
    /// One reusable key per length, so that the adapter adds no allocation per operation (keys are copied by the engine).
    private var keys: [ValueBoxKey] = (0..<64).map { ValueBoxKey(length: $0) }
    /// The exclusive upper bound of every scan: greater than every key the workloads write.
    private let endKey = ValueBoxKey([UInt8](repeating: 0xFF, count: 16))

    convenience init(directory: String, durability: Durability) throws(BenchError) {
        try self.init(directory: directory, durability: durability, checkpointBytes: nil)
    }

    init(directory: String, durability: Durability, checkpointBytes: Int?) throws(BenchError) {
        self.directory = directory
        self.durability = durability
        do {
            var options = ValueBoxOptions(durability: durability)
            if let bytes = BoxwoodBenchSettings.checkpointMemoryBytes { options.checkpointMemoryBytes = bytes }
            if let checkpointBytes {
                options.checkpointWALBytes = UInt64(checkpointBytes)
                options.checkpointMemoryBytes = checkpointBytes
            }
            options.encryption = Mode.encryption
            if let bytes = BoxwoodBenchSettings.decryptedPageCacheBytes { options.decryptedPageCacheBytes = bytes }
            if let bytes = BoxwoodBenchSettings.compressionLimit { options.compressionLimit = bytes }
            box = try ValueBox(path: directory, options: options)
        } catch {
            throw .boxwood(error)
        }
    }

    @inline(__always)
    private func table(_ id: Int32) -> ValueBoxTable { ValueBoxTable(id: id, keyType: .binary) }

    @inline(__always)
    private func key(_ bytes: UnsafeRawBufferPointer) -> ValueBoxKey {
        guard bytes.count < keys.count else { return ValueBoxKey(bytes: bytes) }
        keys[bytes.count].setBytes(0, bytes)
        return keys[bytes.count]
    }

    func close() throws(BenchError) {
        do { try box.close() } catch { throw .boxwood(error) }
    }

    /// `ValueBox.spaceUsage()` of the closed database, opened read-only: leaf and branch pages with their fill,
    /// overflow, free and tail pages.
    static func spaceNote(directory: String) -> String? {
        var options = ValueBoxOptions(durability: .normal)
        options.readOnly = true
        options.encryption = Mode.encryption
        guard let box = try? ValueBox(path: directory, options: options) else { return nil }
        defer { try? box.close() }
        guard let u = try? box.spaceUsage() else { return nil }
        func percent(_ x: Double) -> String { let tenths = Int((x * 1000).rounded()); return "\(tenths / 10).\(tenths % 10) %" }
        return "pages \(u.pagesTotal): leaves \(u.leafPages) (\(percent(u.leafFill)) full), branches \(u.branchPages) (\(percent(u.branchFill))), "
            + "overflow \(u.overflowPages), free \(u.freePages + u.releasedPages) (tail \(u.freeTailPages)), catalog+freelist \(u.catalogPages + u.freelistPages)"
    }

    func beginBatch() throws(BenchError) {
        do { try box.begin() } catch { throw .boxwood(error) }
    }

    func commitBatch() throws(BenchError) {
        do { try box.commit() } catch { throw .boxwood(error) }
    }

    func put(_ table: Int32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(BenchError) {
        do { try box.set(self.table(table), key: self.key(key), bytes: value) } catch { throw .boxwood(error) }
    }

    func get<R>(_ table: Int32, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) throws(BenchError) -> R? {
        do { return try box.withValue(self.table(table), key: self.key(key), body) } catch { throw .boxwood(error) }
    }

    /// `DatabaseStatistics.checkpointGeneration` (checkpoints written since the database was created) and
    /// `checkpointWaits` / `checkpointWaitNanoseconds`.
    func checkpointCounts() throws(BenchError) -> CheckpointCounts {
        do {
            let statistics = try box.statistics()
            return CheckpointCounts(generation: statistics.checkpointGeneration, waits: statistics.checkpointWaits,
                                    waitNanoseconds: statistics.checkpointWaitNanoseconds)
        } catch { throw .boxwood(error) }
    }

    func compactAndClose() throws(BenchError) {
        do {
            try box.compact()
            try box.close()
        } catch { throw .boxwood(error) }
    }

    func remove(_ table: Int32, key: UnsafeRawBufferPointer) throws(BenchError) {
        do { try box.remove(self.table(table), key: self.key(key)) } catch { throw .boxwood(error) }
    }

    func scan(_ table: Int32, after key: UnsafeRawBufferPointer, count: Int,
              _ visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) throws(BenchError) -> Int {
        var visited = 0
        do {
            try box.withRange(self.table(table), start: self.key(key), end: endKey, limit: count) { key, value in
                visit(key, value)
                visited += 1
                return true
            }
        } catch {
            throw .boxwood(error)
        }
        return visited
    }
}
