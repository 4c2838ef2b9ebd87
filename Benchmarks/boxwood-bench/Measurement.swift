/// One engine's result for one output row.
struct Measurement {
    /// The row: a workload name, or `<workload>-put`/`-get` for the value-size workloads.
    let row: String
    let engine: EngineKind
    /// Timed operations (puts, gets, scans, transactions or opens, as the workload defines).
    let ops: Int
    let seconds: Double
    /// The files' size after the workload, when it wrote.
    var bytesOnDisk: Int? = nil
    /// The sum of the key and value bytes the store holds, when it wrote.
    var rawBytes: Int? = nil
    /// The read checksum (see `ReadSink`), which every engine running the row must agree on.
    var checksum: UInt64? = nil
    /// Extra detail printed under the row.
    var note: String? = nil
    /// The distribution of commit latencies, for the `latency-*` rows.
    var latency: CommitLatency? = nil

    var opsPerSecond: Double { Double(ops) / seconds }
}
