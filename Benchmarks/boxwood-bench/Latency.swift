import BoxwoodStore
import Histogram

/// The distribution of one engine's commit latencies in a `latency-*` row: every commit is recorded, in
/// nanoseconds, into an HdrHistogram with three significant digits (each percentile within 0.1 % of a recorded
/// value; the maximum is exact).
struct CommitLatency {
    let commits: Int
    let p50: UInt64
    let p99: UInt64
    let p999: UInt64
    let max: UInt64
    /// What the checkpoints cost, when the engine counts them (only Boxwood does; nil otherwise).
    let checkpoints: CheckpointCommits?

    init(_ histogram: Histogram<UInt64>, checkpoints: CheckpointCommits?) {
        commits = Int(histogram.totalCount)
        p50 = histogram.valueAtPercentile(50)
        p99 = histogram.valueAtPercentile(99)
        p999 = histogram.valueAtPercentile(99.9)
        max = histogram.maxRecorded
        self.checkpoints = checkpoints
    }
}

/// The timed commits that ran a checkpoint (the checkpoint generation moved during the commit) against the rest.
struct CheckpointCommits {
    /// Checkpoints written during the timed commits.
    var count: UInt64 = 0
    /// The fastest and slowest commit that ran one (meaningful only when `count` > 0).
    var fastest: UInt64 = .max
    var slowest: UInt64 = 0
    /// The slowest commit that ran none.
    var slowestWithout: UInt64 = 0
    /// Commits that waited for the background checkpointer (paced by its progress, or at a cap), and their waits
    /// in all (`DatabaseStatistics.checkpointWaits`).
    var waits: UInt64 = 0
    var waitNanoseconds: UInt64 = 0

    mutating func add(_ nanoseconds: UInt64, checkpoints: UInt64) {
        guard checkpoints > 0 else {
            slowestWithout = Swift.max(slowestWithout, nanoseconds)
            return
        }
        count += checkpoints
        fastest = Swift.min(fastest, nanoseconds)
        slowest = Swift.max(slowest, nanoseconds)
    }
}

/// What an engine that counts its checkpoints reports: checkpoints written since the database was created, and its
/// commits' waits for a background checkpointer since it was opened.
struct CheckpointCounts {
    var generation: UInt64
    var waits: UInt64
    var waitNanoseconds: UInt64
}

/// An engine that reports how many checkpoints its database has written since it was created.
protocol CheckpointCounting {
    func checkpointCounts() throws(BenchError) -> CheckpointCounts
}

extension Bench {
    /// A `latency-*` row: random overwrites of the loaded main database (the `load-random` one, so its pages are
    /// those of a realistic tree; in a full run, as the earlier write rows and `compact` left it), one or 1,000 per
    /// transaction, each transaction timed from before `begin` to the return of `commit` (CLOCK_MONOTONIC) into a
    /// histogram. Only the commits are timed: open and close are not (close's checkpoint is no commit's latency), so
    /// whatever an engine defers to a commit — Boxwood's checkpoints, SQLite's WAL auto-checkpoints, LMDB's periodic
    /// sync in `normal` — lands in the commit that runs it. Ops are transactions, ops/s is transactions ÷ the sum of
    /// their latencies. Verified like the other write workloads: reopened and sampled.
    func commitLatency<E: DatabaseEngine>(_: E.Type, _ workload: WorkloadID) throws(BenchError) -> Measurement {
        let table = try mainTable(E.self)
        let commits: Int
        let batch: Int
        let durability: Durability
        switch workload {
        case .latencySingleFull: (commits, batch, durability) = (sizes.latencyCommits.full, 1, .full)
        case .latencyTransactions: (commits, batch, durability) = (sizes.latencyCommits.transactions, sizes.transactionBatch, .normal)
        default: (commits, batch, durability) = (sizes.latencyCommits.normal, 1, .normal)
        }
        var rng = generator(for: workload)
        let writes = plannedOverwrites(table, count: commits * batch, &rng)
        let keys = self.keys
        let values = randomValues
        let length = sizes.valueLength
        // Sized for a minute's commit; it grows (between two commits, outside the timed span) if one takes longer.
        var histogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        histogram.autoResize = true
        let engine = try E(directory: table.directory, durability: durability)
        // Boxwood's checkpoint generation, read between commits (untimed) to tell the commits that ran one.
        let counting = engine as? CheckpointCounting
        var counts = try counting?.checkpointCounts()
        var checkpoints = CheckpointCommits()
        var elapsed: UInt64 = 0
        var n = 0
        for _ in 0..<commits {
            let start = monotonicNanoseconds()
            try engine.beginBatch()
            for _ in 0..<batch {
                let index = Int(writes[n].index)
                try engine.put(mainTableID, key: keys.key(index), value: values.value(index, version: writes[n].version, length: length))
                n += 1
            }
            try engine.commitBatch()
            let nanoseconds = monotonicNanoseconds() - start
            histogram.record(nanoseconds)
            elapsed += nanoseconds
            if let counting, let before = counts {
                let after = try counting.checkpointCounts()
                checkpoints.add(nanoseconds, checkpoints: after.generation > before.generation ? after.generation - before.generation : 0)
                checkpoints.waits += after.waits - before.waits
                checkpoints.waitNanoseconds += after.waitNanoseconds - before.waitNanoseconds
                counts = after
            }
        }
        try engine.close()
        try verify(E.self, table, after: workload, checkScans: true)
        let counted = counting == nil ? nil : checkpoints
        return Measurement(row: workload.rawValue, engine: E.kind, ops: commits, seconds: Double(elapsed) / 1e9,
                           note: counted.map { "\($0.count) checkpoints during the timed commits" },
                           latency: CommitLatency(histogram, checkpoints: counted))
    }
}
