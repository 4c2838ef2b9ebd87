import BoxwoodStore

/// The engines the harness compares, in column order.
enum EngineKind: String, CaseIterable, Sendable {
    case boxwood, sqlite, lmdb, mmap
    /// Boxwood on an encrypted database (`--encrypted`); not in the default set.
    case boxwoodEncrypted = "boxwood-enc"
}

/// A store the harness can time: ordered tables of binary keys (memcmp order, shorter first) in one directory.
///
/// Every operation happens inside a batch (`beginBatch` … `commitBatch`): one transaction of the engine, reads
/// included, the way Postbox runs everything inside a transaction. Workloads are generic over this protocol (no
/// existentials in the timed loops); keys and values are borrowed bytes, valid only during the call.
protocol BenchEngine: AnyObject {
    /// Which column the engine fills.
    static var kind: EngineKind { get }

    /// Opens (creating when missing) the store in `directory`.
    init(directory: String, durability: Durability) throws(BenchError)

    /// The directory holding the store's files.
    var directory: String { get }
    /// The durability the store was opened with (mapped per engine, see `durabilityMapping`).
    var durability: Durability { get }

    /// Finishes pending work (checkpoints, syncs) and releases the files. The object is unusable afterwards.
    func close() throws(BenchError)
    /// Starts a transaction.
    func beginBatch() throws(BenchError)
    /// Commits the transaction with the store's durability.
    func commitBatch() throws(BenchError)
    /// Inserts or replaces a value.
    func put(_ table: Int32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(BenchError)
    /// Runs `body` with the value of `key` (valid only during `body`); nil when absent.
    func get<R>(_ table: Int32, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) throws(BenchError) -> R?
    /// Visits up to `count` entries with keys strictly greater than `key`, ascending (an empty key starts at the
    /// first entry); returns how many it visited.
    func scan(_ table: Int32, after key: UnsafeRawBufferPointer, count: Int,
              _ visit: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void) throws(BenchError) -> Int
    /// Where the closed store in `directory` puts its pages, for a note under a write row; nil for engines that
    /// cannot tell (the default).
    static func spaceNote(directory: String) -> String?
}

extension BenchEngine {
    /// The bytes the store's files occupy on disk.
    var bytesOnDisk: Int { diskUsage(directory) }

    static func spaceNote(directory: String) -> String? { nil }
}

/// A database: besides the `BenchEngine` operations it deletes keys, overwrites in place and recovers after an
/// unclean stop. The raw mmap file is not one, so the workloads that need these run on the other engines only.
protocol DatabaseEngine: BenchEngine {
    /// The file holding commits that recovery replays after an unclean stop, when the engine has one.
    static var logFileName: String? { get }
    /// Deletes a key if present.
    func remove(_ table: Int32, key: UnsafeRawBufferPointer) throws(BenchError)
    /// Rewrites the store into its minimal form (outside a batch). The store is closed afterwards.
    func compactAndClose() throws(BenchError)
    /// Opens the store like `init(directory:durability:)`, with Boxwood's checkpoint thresholds (WAL and dirty-memory
    /// bytes) set to `checkpointBytes` when given. Other engines keep their own checkpoint settings.
    init(directory: String, durability: Durability, checkpointBytes: Int?) throws(BenchError)
    /// True when `init(directory:durability:checkpointBytes:)` applies `checkpointBytes` (Boxwood).
    static var takesCheckpointBytes: Bool { get }
}

extension DatabaseEngine {
    init(directory: String, durability: Durability, checkpointBytes: Int?) throws(BenchError) {
        try self.init(directory: directory, durability: durability)
    }

    static var takesCheckpointBytes: Bool { false }
}

/// How each engine's durability is set for each Boxwood durability, as printed in the output header.
let durabilityMapping = [
    "boxwood full/normal/off = ValueBoxOptions(durability:); commit syncs the WAL in full (fdatasync on Linux, F_FULLFSYNC on Darwin), checkpoints (8 MiB WAL or 64 MiB dirty memory, and close) sync in normal",
    "sqlite  full/normal/off = PRAGMA synchronous=FULL/NORMAL/OFF with journal_mode=WAL (Postbox: NORMAL)",
    "lmdb    full = default flags (each commit syncs data and meta pages); normal = MDB_NOSYNC plus mdb_env_sync(force) once 8 MiB of keys and values were committed since the last sync, and at close (Boxwood's checkpoint cadence; unlike Boxwood, LMDB keeps its integrity on a power cut only if the file system preserves write order); off = MDB_NOSYNC",
    "mmap    full = write + fdatasync per commit (append log); normal = write per commit, fdatasync at close; off = never synced",
]
