/// The workloads, in the order they run (later ones reuse the database `load-random` builds).
enum WorkloadID: String, CaseIterable, Sendable {
    case loadSorted = "load-sorted"
    case loadRandom = "load-random"
    case getRandom = "get-random"
    case scan = "scan-100"
    case randomSets = "txn-1000-set"
    case randomRemoves = "txn-1000-remove"
    case compact = "compact"
    case singleNormal = "single-normal"
    case singleFull = "single-full"
    case postbox = "postbox-txn"
    case value100 = "value-100"
    case value4K = "value-4k"
    case value64K = "value-64k"
    case reopen = "reopen-unclean"
    case fullText = "full-text"
    case externalCommit = "external-commit"
    case idleViews = "idle-views"
    case extensionMemory = "extension-memory"
    case syncCatchUp = "sync-catchup"
    case latencySingleNormal = "latency-single-normal"
    case latencySingleFull = "latency-single-full"
    case latencyTransactions = "latency-txn-1000"
    // After the latency rows, so that adding them left every earlier workload's random choices (`Bench.generator(for:)`) as they were.
    case reopen1M = "reopen-unclean-1m"
    case reopen8M = "reopen-unclean-8m"
    case reopen64M = "reopen-unclean-64m"

    /// One line for `--help` and the output header.
    var summary: String {
        switch self {
        case .loadSorted: return "put every key in ascending key order into a fresh database, 10,000 puts per transaction"
        case .loadRandom: return "the same in random order; the result is the database the next seven workloads use"
        case .getRandom: return "random point reads (1,000 per read transaction) after a warm-up scan"
        case .scan: return "range scans of the 100 entries after random existing keys, 10 per read transaction (ops = scans)"
        case .randomSets: return "overwrites of random existing keys, 1,000 per transaction"
        case .randomRemoves: return "removes of distinct random keys, 1,000 per transaction"
        case .compact: return "rewrite the churned database into a minimal file (boxwood compact, SQLite VACUUM + wal_checkpoint(TRUNCATE), LMDB mdb_env_copy2 MDB_CP_COMPACT swapped in); ops = live entries"
        case .singleNormal: return "one overwrite per transaction, durability normal"
        case .singleFull: return "one overwrite per transaction, durability full"
        case .postbox: return "a message arriving in a chat: read state get, history and tag index inserts, chat list move, read state put (ops = transactions)"
        case .value100, .value4K, .value64K: return "\(valueLengthText) text values (compressible): puts in ~1 MiB transactions, then random gets"
        case .reopen: return "open + first get after a process wrote to a fresh database and exited without closing (ops = opens)"
        case .reopen1M, .reopen8M: return "the same with fewer or more puts before the unclean stop: about \(reopenLogText) of Boxwood WAL, default checkpoint thresholds"
        case .reopen64M: return "the same with about \(reopenLogText) of Boxwood WAL: Boxwood's checkpoint thresholds raised to 256 MiB in this row only (the 8 MiB WAL default would checkpoint first)"
        case .externalCommit: return "boxwood only: another process commits; time until a live view here shows it (ops = commits; p50/p99 in the note)"
        case .idleViews: return "boxwood only: context switches of this process with 20 live views and no commits (ops/s = wake-ups per second)"
        case .extensionMemory: return "boxwood only: a fresh process opens a big database with Postbox and reads 1,000 messages; its private dirty memory growth (ops = messages)"
        case .syncCatchUp: return "boxwood only: a synced client with live history views catches up with updates generated over ~1,000 chats while it was offline (simulated server in process; ops = updates applied)"
        case .latencySingleNormal: return "commit latency (p50/p99/p99.9/max, begin to commit's return) of one-overwrite transactions, durability normal, on the loaded database (ops = commits, ops/s = commits ÷ their summed latency; databases only)"
        case .latencySingleFull: return "the same with durability full"
        case .latencyTransactions: return "the same for transactions of 1,000 random overwrites, durability normal (ops = transactions)"
        case .fullText: return "full-text index (boxwood and sqlite FTS5 only): synthetic chat messages indexed 1,000 per transaction (ops = messages), then term, prefix, AND, phrase and per-chat queries (ops = queries; result sets compared)"
        }
    }

    /// The Boxwood WAL size the unclean-reopen variants aim at (each put logs ~124 bytes of 100-byte values).
    private var reopenLogText: String {
        switch self {
        case .reopen1M: return "1 MiB"
        case .reopen8M: return "8 MiB"
        case .reopen64M: return "64 MiB"
        default: return "6 MiB"
        }
    }

    /// The value length of the value-size workloads.
    var valueLength: Int {
        switch self {
        case .value4K: return 4 << 10
        case .value64K: return 64 << 10
        default: return 100
        }
    }

    private var valueLengthText: String {
        switch self {
        case .value4K: return "4 KiB"
        case .value64K: return "64 KiB"
        default: return "100-byte"
        }
    }
}

/// How big a run is.
enum Profile: String, Sendable {
    /// The default: 1,000,000 keys.
    case full
    /// About 100,000 keys; the whole run takes under a minute.
    case quick
    /// A few thousand operations per workload, for CI.
    case smoke

    var defaultKeys: Int {
        switch self {
        case .full: return 1_000_000
        case .quick: return 100_000
        case .smoke: return 4_000
        }
    }
}

/// The amount of work in each workload, fixed by the profile and the number of keys.
struct BenchSizes: Sendable {
    let profile: Profile
    let keys: Int
    let valueLength = 100
    let loadBatch = 10_000
    let transactionBatch = 1_000
    let readBatch = 1_000
    let scanLength = 100
    let gets: Int
    let scans: Int
    let sets: Int
    let removes: Int
    let singleNormal: Int
    let singleFull: Int
    let postboxTransactions: Int
    let postboxPeers: Int
    let postboxMessageLength = 150
    /// Puts before the unclean stop of `reopen-unclean` (the other reopen rows: `reopenPuts(_:)`).
    let reopenPuts: Int
    /// Commits timed by `external-commit`.
    let externalCommits: Int
    /// The quiet window `idle-views` counts wake-ups in.
    let idleWindowSeconds: Double
    /// The database size `extension-memory` builds.
    let extensionDatabaseBytes: Int
    /// Timed commits of `latency-single-normal` and `latency-single-full`, and 1,000-op transactions of
    /// `latency-txn-1000`: at 1,000,000 keys, enough random overwrites for Boxwood to cross its 64 MiB dirty-memory
    /// checkpoint threshold (16,384 dirty pages) at least once in each row: ~19,000 single overwrites reach it on
    /// the randomly loaded tree (~57,000 leaves), ~25,000 on the compacted one a full run leaves behind.
    let latencyCommits: (normal: Int, full: Int, transactions: Int)
    private let valueCounts: (small: Int, medium: Int, large: Int)

    init(profile: Profile, keys: Int) {
        self.profile = profile
        self.keys = keys
        gets = keys
        scans = max(keys / 100, 20)
        sets = min(keys, max(keys / 5, 1_000))
        removes = max(keys / 10, 100)
        reopenPuts = min(keys, 50_000)
        switch profile {
        case .full: (externalCommits, idleWindowSeconds, extensionDatabaseBytes) = (1_000, 10, 1 << 30)
        case .quick: (externalCommits, idleWindowSeconds, extensionDatabaseBytes) = (300, 5, 256 << 20)
        case .smoke: (externalCommits, idleWindowSeconds, extensionDatabaseBytes) = (50, 1, 16 << 20)
        }
        switch profile {
        case .full:
            latencyCommits = (50_000, 30_000, 150)
            (singleNormal, singleFull, postboxTransactions, postboxPeers) = (20_000, 2_000, 20_000, 1_000)
            valueCounts = (min(keys, 100_000), 20_000, 2_000)
        case .quick:
            latencyCommits = (10_000, 1_000, 30)
            (singleNormal, singleFull, postboxTransactions, postboxPeers) = (5_000, 300, 5_000, 500)
            valueCounts = (min(keys, 20_000), 5_000, 400)
        case .smoke:
            latencyCommits = (300, 30, 5)
            (singleNormal, singleFull, postboxTransactions, postboxPeers) = (1_000, 50, 1_000, 100)
            valueCounts = (1_000, 200, 30)
        }
    }

    /// How many values a value-size workload puts (and then reads): at most one per key.
    func valueCount(_ workload: WorkloadID) -> Int {
        switch workload {
        case .value4K: return min(keys, valueCounts.medium)
        case .value64K: return min(keys, valueCounts.large)
        default: return min(keys, valueCounts.small)
        }
    }

    /// Puts before the unclean stop of an unclean-reopen row, at most one per key. Chosen so that Boxwood's WAL (about
    /// 124 bytes per put of a 100-byte value) holds about 1, 8 (just under the 8 MiB checkpoint threshold) and 64 MiB.
    func reopenPuts(_ workload: WorkloadID) -> Int {
        switch workload {
        case .reopen1M: return min(keys, 8_400)
        case .reopen8M: return min(keys, 67_000)
        case .reopen64M: return min(keys, 540_000)
        default: return reopenPuts
        }
    }

    /// Checkpoint thresholds (WAL and dirty memory bytes) an unclean-reopen row sets on Boxwood; nil: the defaults.
    func reopenCheckpointBytes(_ workload: WorkloadID) -> Int? {
        workload == .reopen64M ? 256 << 20 : nil
    }

    /// Puts per transaction in the value-size workloads: about 1 MiB of values, at most `loadBatch`.
    func valueBatch(_ workload: WorkloadID) -> Int {
        max(1, min(loadBatch, (1 << 20) / workload.valueLength))
    }

    /// One line per workload describing its size, for the output header.
    var lines: [String] {
        [
            "keys: \(grouped(keys)) (8-byte big-endian, SplitMix64 permutation), values \(valueLength) B (incompressible) unless noted",
            "load: \(grouped(keys)) puts, \(grouped(loadBatch)) per transaction; gets: \(grouped(gets)); scans: \(grouped(scans)) × \(scanLength)",
            "sets: \(grouped(sets)), removes: \(grouped(removes)) (\(grouped(transactionBatch)) per transaction); single-op transactions: \(grouped(singleNormal)) normal, \(grouped(singleFull)) full",
            "postbox: \(grouped(postboxTransactions)) transactions over \(grouped(postboxPeers)) chats, \(postboxMessageLength)-byte messages; reopen: \(grouped(reopenPuts)) puts before the unclean stop (-1m/-8m/-64m: \(grouped(reopenPuts(.reopen1M)))/\(grouped(reopenPuts(.reopen8M)))/\(grouped(reopenPuts(.reopen64M))))",
            "values: \(grouped(valueCount(.value100))) × 100 B, \(grouped(valueCount(.value4K))) × 4 KiB, \(grouped(valueCount(.value64K))) × 64 KiB",
            "latency: \(grouped(latencyCommits.normal)) normal and \(grouped(latencyCommits.full)) full single-op commits, \(grouped(latencyCommits.transactions)) transactions of \(grouped(transactionBatch)) overwrites",
            "full-text: \(grouped(fullTextMessages)) messages over \(grouped(FullTextCorpus.chatCount)) chats, \(grouped(fullTextQueries)) queries of each kind",
        ]
    }
}
