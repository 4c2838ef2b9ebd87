/// How a table orders its keys.
public enum ValueBoxKeyType: Int32, Sendable, CustomStringConvertible {
    /// Raw bytes compared with memcmp, shorter first on a common prefix.
    case binary = 0
    /// 8-byte big-endian integers (see ``ValueBoxKey/init(int64:)``), ordered by signed numeric value.
    case int64 = 1

    public var description: String { self == .binary ? "binary" : "int64" }
}

/// A table descriptor. The table itself is created lazily by its first write.
///
/// Negative ids are reserved for the engine: the full-text index keeps its data in tables with negative ids
/// (see ``ValueBoxFullTextTable``). Use ids `>= 0` for your own tables: a descriptor made with
/// ``init(id:keyType:compactValuesOnCreation:)`` and a negative id may be read (a dump lists the engine's tables)
/// but must not be written: `requireWritableId()` throws ``BoxwoodError/reservedTableId(id:)`` for it.
public struct ValueBoxTable: Sendable, Hashable {
    public let id: Int32
    public let keyType: ValueBoxKeyType
    /// Accepted for Postbox compatibility; Boxwood stores every table the same way.
    public let compactValuesOnCreation: Bool
    /// Set only by ``init(engineTableId:keyType:)``: the descriptor may name one of the engine's own tables.
    /// Not part of the descriptor's identity (equality and hashing look at the other fields).
    let namesEngineTable: Bool

    public init(id: Int32, keyType: ValueBoxKeyType, compactValuesOnCreation: Bool = false) {
        self.id = id
        self.keyType = keyType
        self.compactValuesOnCreation = compactValuesOnCreation
        namesEngineTable = false
    }

    /// A descriptor of one of the engine's own tables (a negative id), for the engine itself — the full-text
    /// index — and for tools that copy a database's tables verbatim (`boxwood load --engine-tables`).
    @_spi(EngineTables)
    public init(engineTableId id: Int32, keyType: ValueBoxKeyType) {
        self.id = id
        self.keyType = keyType
        compactValuesOnCreation = false
        namesEngineTable = true
    }

    /// Throws ``BoxwoodError/reservedTableId(id:)`` unless the descriptor may be written: a caller's table
    /// (`id >= 0`), or an engine table named through ``init(engineTableId:keyType:)``. For the public mutations
    /// (`ValueBox+Writes.swift`) to call before they touch the table.
    func requireWritableId() throws(BoxwoodError) {
        if id < 0 && !namesEngineTable { throw .reservedTableId(id: id) }
    }

    public static func == (lhs: ValueBoxTable, rhs: ValueBoxTable) -> Bool {
        lhs.id == rhs.id && lhs.keyType == rhs.keyType && lhs.compactValuesOnCreation == rhs.compactValuesOnCreation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(keyType)
        hasher.combine(compactValuesOnCreation)
    }
}

/// What a `filteredRange` callback says about an entry.
public enum ValueBoxFilterResult: Sendable {
    /// Count it towards the limit and continue.
    case accept
    /// Do not count it; continue.
    case skip
    /// End the scan.
    case stop
}

/// When a commit is made durable (like SQLite's `synchronous`).
public enum Durability: String, Sendable, CaseIterable {
    /// `commit` returns after its WAL record is on stable storage (fdatasync). A power cut loses nothing
    /// that was acknowledged.
    case full
    /// `commit` appends to the WAL without syncing; checkpoints sync. A power cut may drop a suffix of the
    /// commits since the last checkpoint, never part of a transaction. The default, as in Postbox.
    case normal
    /// Nothing is ever synced. A killed process loses nothing; a power cut or OS crash voids every promise:
    /// data may be lost, the database may refuse to open, or it may show pages of an older checkpoint.
    /// For caches that can be rebuilt.
    case off
}

/// Options for opening a ``ValueBox``.
public struct ValueBoxOptions: Sendable {
    /// Commit durability. Default `.normal`.
    public var durability: Durability = .normal
    /// Open without writing: no mutations, no checkpoint, the WAL is replayed in memory only.
    public var readOnly = false
    /// A checkpoint runs after a commit once the WAL holds this many bytes. Default 8 MiB.
    public var checkpointWALBytes: UInt64 = 8 << 20
    /// A checkpoint also runs once uncheckpointed pages and values hold this many bytes of memory. Default 64 MiB.
    public var checkpointMemoryBytes = 64 << 20
    /// Automatic checkpoints are written on a thread of their own while commits go on (default true): the commit
    /// that crosses a threshold returns after its WAL append. A commit waits only when dirty memory reaches twice
    /// ``checkpointMemoryBytes`` (for the running background checkpoint to end; then the next starts) or the WAL four
    /// times ``checkpointWALBytes`` (then it also checkpoints inline, which empties the WAL: a background checkpoint
    /// leaves it as it is). False: every automatic checkpoint runs inside the commit that crosses a threshold.
    public var backgroundCheckpoints = true
    /// Values at least this long (and at most ``compressionLimit``) are LZ4-compressed when that saves at least
    /// 1/8 of their size. Default 256.
    public var compressionThreshold = 256
    /// Values longer than this are stored uncompressed, whatever LZ4 would save. Default 1000 bytes: a longer value
    /// goes to overflow pages, where a raw value is read without decompressing — lent in place from its page when it
    /// takes one (up to 4064 bytes), copied once when it takes more — while a compressed one is decompressed on every
    /// read (see docs/benchmarks.md, "Large values", for the measurement). `Int.max` compresses every value
    /// from ``compressionThreshold`` on (the policy of earlier versions); files hold the codec of each value, so
    /// either setting reads both kinds.
    public var compressionLimit = 1000
    /// How long ``ValueBox/begin()`` (and a checkpoint or open that must repair the files) waits for another
    /// value box — in this or another process — to release the writer lock before it throws
    /// `.lockTimeout`. Default 10 seconds.
    public var lockTimeout: Double = 10
    /// The key and salt of an encrypted database (see ``ValueBoxEncryptionParameters`` and docs/encryption.md).
    /// A new database is created encrypted; an encrypted one opens only with its own key and salt
    /// (``BoxwoodError/wrongKey(path:)``, ``BoxwoodError/encryptionKeyRequired(path:)``); a plain one stays plain
    /// unless ``ValueBoxEncryptionParameters/forceEncryptionIfNoSet`` is set. Default nil: a plain database.
    public var encryption: ValueBoxEncryptionParameters? = nil
    /// In an encrypted database, decrypted pages are kept in memory up to about this many bytes (trimmed between
    /// operations by a CLOCK sweep that keeps the pages reads come back to). A page read while not held is
    /// decrypted again, so a budget that holds the working set makes reads cost what plain ones do; it is dirty
    /// memory, so keep it small in an app extension. Default 64 MiB.
    public var decryptedPageCacheBytes = 64 << 20

    public init(durability: Durability = .normal, readOnly: Bool = false) {
        self.durability = durability
        self.readOnly = readOnly
    }
}

/// Per-table figures reported by ``ValueBox/tableStatistics()``.
public struct TableStatistics: Sendable, Equatable {
    public let id: Int32
    public let keyType: ValueBoxKeyType
    /// Number of entries.
    public let entries: Int
    /// Sum of key and (uncompressed) value lengths.
    public let bytes: Int
}

/// Whole-database figures reported by ``ValueBox/statistics()``.
public struct DatabaseStatistics: Sendable, Equatable {
    /// The data file's format version. A value box opens only files whose meta pages carry
    /// ``BoxwoodFormat/dataVersion`` (any other throws `.unsupportedFormatVersion`), so an open one reports it.
    public let formatVersion: UInt32
    public let pageSize: Int
    /// Pages in the data file accounted for by the last checkpoint (both meta pages included).
    public let pagesTotal: UInt64
    /// Pages on the free list (reusable by the next checkpoint) plus pages waiting to become free.
    public let pagesFree: UInt64
    /// Bytes in the write-ahead log.
    public let walBytes: UInt64
    /// The number of non-empty transactions ever committed.
    public let transactionStateVersion: UInt64
    /// Checkpoints written since the database was created.
    public let checkpointGeneration: UInt64
    public let tables: [TableStatistics]
    /// True when the data file and the WAL are encrypted (docs/encryption.md).
    public let isEncrypted: Bool
    /// Bytes of the data file the last checkpoint accounts for (an encrypted file's header and page slots included).
    public let fileBytes: UInt64
    /// Commits of this value box, since it was opened, that waited for its background checkpointer: paced by its
    /// progress, or at a hard cap (``ValueBoxOptions/backgroundCheckpoints``).
    public let checkpointWaits: UInt64
    /// How long those commits waited in all, in nanoseconds.
    public let checkpointWaitNanoseconds: UInt64
}
