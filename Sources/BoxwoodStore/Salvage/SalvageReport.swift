/// What ``ValueBox/salvage(from:to:progress:)`` recovered from a damaged database and what it could not.
///
/// Page numbers are pages of the source's `data` file. "Lost" means damaged and not recovered: a page whose
/// checksum or structure fails, an entry whose value could not be read back whole. Counts of entries are exact for
/// what the salvage saw; entries held only by a damaged page are unknown, which is why the per-table
/// ``Table/entriesExpected`` (the source catalog's count at its checkpoint) is given beside the counts recovered.
public struct SalvageReport: Sendable, Equatable {
    /// What one meta page (slot 0 or 1 of the data file) held.
    public enum MetaSlot: Sendable, Equatable, CustomStringConvertible {
        /// A valid meta page of checkpoint `generation`.
        case valid(generation: UInt64)
        /// The Boxwood magic, but a bad checksum or field (`reason`).
        case damaged(reason: String)
        /// No Boxwood magic at all: zeroed, overwritten, or not a Boxwood file.
        case missing
        /// A valid meta page of a format version this build does not read.
        case unsupportedVersion(UInt32)

        public var description: String {
            switch self {
            case let .valid(generation): return "valid (generation \(generation))"
            case let .damaged(reason): return "damaged (\(reason))"
            case .missing: return "missing (no Boxwood meta page there)"
            case let .unsupportedVersion(version): return "format version \(version), not readable by this build"
            }
        }
    }

    /// How the salvage knew which table a tree belongs to.
    public enum Attribution: String, Sendable, Equatable {
        /// The table's entry in the catalog of the checkpoint salvaged.
        case catalog
        /// The catalog entry was lost; the tree holds pages that belonged to this table at the previous checkpoint
        /// (see docs/file-format.md, "Salvage").
        case previousCatalog
        /// Not in the source's pages: created by a WAL commit replayed on top.
        case wal
    }

    /// The outcome for one table.
    public struct Table: Sendable, Equatable {
        /// The table id (negative: one of the engine's own tables, such as the full-text index's).
        public let id: Int32
        public let keyType: ValueBoxKeyType
        /// How the table's tree was found.
        public var attribution: Attribution
        /// Entries the source catalog counted at its checkpoint; nil when that catalog entry was lost.
        public var entriesExpected: Int?
        /// Entries written to the destination from the source's pages (before the WAL was replayed), including
        /// ``entriesFromOrphanPages``.
        public var entriesFromPages = 0
        /// Of those, entries taken from pages that no intact branch leads to (under a damaged branch page).
        public var entriesFromOrphanPages = 0
        /// The orphan leaf pages those entries came from.
        public var orphanLeafPages: [UInt64] = []
        /// Entries seen but not recovered: a value whose overflow chain or compressed bytes are damaged (the entry
        /// is left out, never written truncated).
        public var entriesLost = 0
        /// Pages of this table's tree (branch, leaf or overflow) that failed their checksum or structure checks.
        /// Entries held only by a lost leaf page are unknown and not counted in ``entriesLost``.
        public var pagesLost: [UInt64] = []
        /// Entries of the table in the destination after the WAL was replayed.
        public var entries = 0

        public init(id: Int32, keyType: ValueBoxKeyType, attribution: Attribution) {
            self.id = id
            self.keyType = keyType
            self.attribution = attribution
        }

        /// True when nothing of this table was lost.
        public var isComplete: Bool { entriesLost == 0 && pagesLost.isEmpty }
    }

    /// What the WAL replay did.
    public struct WAL: Sendable, Equatable {
        /// Commits (WAL records) replayed on top of the salvaged pages.
        public var commitsReplayed = 0
        /// Bytes of the `wal` file not replayed (0 when replayed to its end or when there is no log).
        public var bytesNotReplayed: UInt64 = 0
        /// True when the bytes not replayed hold commits: intact records follow damage in the log, or the whole
        /// log could not be replayed (its header is damaged, or it belongs to a checkpoint whose meta page is lost).
        /// False for a torn tail (an append that never finished), which opening the database would cut off too.
        public var commitsLost = false
        /// Why the replay stopped before the end of the file, or why the log was not replayed; nil when it was
        /// replayed to its end (or there was no log).
        public var note: String?

        public init() {}
    }

    /// Meta pages 0 and 1 as found.
    public var metaSlots: [MetaSlot] = []
    /// The checkpoint generation whose trees were salvaged; nil when neither meta page is usable (then no
    /// tree can be walked: every leaf page is unattributed).
    public var checkpointGeneration: UInt64?
    /// True when the WAL proves that a newer checkpoint existed whose meta page is lost: the salvage read the
    /// previous checkpoint's (consistent, older) state, and the commits of the last checkpoint interval are lost.
    public var usedOlderCheckpoint = false
    /// True when every page of the catalog (the tree of tables) was intact.
    public var catalogComplete = false
    /// Catalog pages that failed their checks.
    public var catalogPagesLost: [UInt64] = []
    /// True when the freelist was read whole: only then can pages no tree reaches be told apart from free pages
    /// (old versions), and orphan pages be used.
    public var freelistUsable = false
    /// Every table recovered or known, by ascending id.
    public var tables: [Table] = []
    /// Leaf pages of the live state that no intact branch leads to and that could not be attributed to exactly
    /// one table: their entries are not recovered.
    public var unattributedLeafPages: [UInt64] = []
    /// Entries on ``unattributedLeafPages``.
    public var unattributedEntries = 0
    /// Pages of the live state that no intact structure leads to and that fail their checks (so their table is
    /// unknown).
    public var unattributedDamagedPages: [UInt64] = []
    /// The WAL replay.
    public var wal = WAL()
    /// Pages of the data file (its size in whole pages).
    public var pagesInFile: UInt64 = 0
    /// Pages read and checked.
    public var pagesRead = 0
    /// Other findings, one sentence each (a page reached twice, a malformed catalog entry, a damaged freelist…).
    public var notes: [String] = []

    public init() {}

    /// Entries in the destination, all tables.
    public var entriesRecovered: Int { tables.reduce(0) { $0 + $1.entries } }

    /// True when nothing was lost: a usable newest checkpoint, an intact catalog and trees, every value read
    /// whole, no unattributed page, and the WAL replayed up to its end or a torn tail.
    public var isComplete: Bool {
        checkpointGeneration != nil && !usedOlderCheckpoint && catalogComplete && tables.allSatisfy(\.isComplete)
            && unattributedLeafPages.isEmpty && unattributedDamagedPages.isEmpty && !wal.commitsLost
    }

    /// True when something was lost but nothing was recovered: no table could be read from the source (no usable
    /// meta page, or a catalog lost with no tree attributable) and the WAL gave nothing either.
    public var recoveredNothing: Bool {
        !isComplete && tables.allSatisfy { $0.entriesFromPages == 0 } && wal.commitsReplayed == 0
    }
}

/// How far a ``ValueBox/salvage(from:to:progress:)`` has got.
public struct SalvageProgress: Sendable, Equatable {
    /// Pages of the source read and checked so far.
    public let pagesRead: Int
    /// Pages in the source's data file (a page may be read twice, once in a tree and once in the scan for
    /// orphans, so `pagesRead` may end above it).
    public let pagesTotal: Int
    /// Entries written to the destination so far.
    public let entriesRecovered: Int
}
