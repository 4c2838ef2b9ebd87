#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Bench {
    /// A forked child opens a fresh database, puts `reopenPuts(workload)` keys in 1,000-put transactions (durability
    /// normal; the 64 MiB row raises Boxwood's checkpoint thresholds, `reopenCheckpointBytes`) and exits without closing: no checkpoint, no deinit, no atexit handlers, as when an app is killed. The parent
    /// then times the open plus the first get (SQLite recovers its WAL index on the first read), checks the key set and
    /// reports the size of the log the engine had to replay. The files are in the page cache, so this measures
    /// recovery work, not disk reads.
    func uncleanReopen<E: DatabaseEngine>(_: E.Type, _ row: WorkloadID) throws(BenchError) -> Measurement {
        let workload = row.rawValue
        func failure(_ detail: String) -> BenchError { .verification(engine: E.kind, workload: workload, detail: detail) }
        let directory = root + "/" + E.kind.rawValue + "-" + workload
        let count = sizes.reopenPuts(row)
        let checkpointBytes = sizes.reopenCheckpointBytes(row)
        let keys = self.keys
        let values = randomValues
        let length = sizes.valueLength
        let batch = sizes.transactionBatch

        fflushStdout()
        let child = fork()
        guard child >= 0 else { throw .io(operation: "fork", path: directory, errno: errno) }
        if child == 0 {
            do throws(BenchError) {
                let engine = try E(directory: directory, durability: .normal, checkpointBytes: checkpointBytes)
                try inBatches(engine, count: count, batch: batch) { (n) throws(BenchError) in
                    try engine.put(mainTableID, key: keys.key(n), value: values.value(n, version: 1, length: length))
                }
                // Keep the engine alive until the exit: releasing it earlier would close it cleanly.
                withExtendedLifetime(engine) { _exit(0) }
            } catch {
                printError("the unclean-stop child failed: \(error)")
                _exit(1)
            }
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 {
            guard errno == EINTR else { throw .io(operation: "waitpid", path: directory, errno: errno) }
        }
        guard status & 0x7F == 0 && (status >> 8) & 0xFF == 0 else { throw failure("the child writing the database failed (wait status \(status))") }
        let logBytes = E.logFileName.flatMap { fileSize(directory + "/" + $0) }

        let last = count - 1
        let lastValue = values.value(last, version: 1, length: length)
        let watch = Stopwatch()
        let engine = try E(directory: directory, durability: .normal, checkpointBytes: checkpointBytes)
        try engine.beginBatch()
        let found = try engine.get(mainTableID, key: keys.key(last)) { bytesEqual($0, lastValue) }
        let seconds = watch.seconds
        guard found == true else { throw failure("the last key written is missing or wrong") }
        var rng = generator(for: row)
        for _ in 0..<min(count, 200) {
            let n = rng.below(count)
            let expected = values.value(n, version: 1, length: length)
            guard try engine.get(mainTableID, key: keys.key(n), { bytesEqual($0, expected) }) == true else {
                throw failure("key #\(n) is missing or wrong")
            }
        }
        try engine.commitBatch()
        try engine.close()
        removeTree(directory)
        var log = logBytes.map { "log \(formatBytes($0))" } ?? "no log"
        if let checkpointBytes, E.takesCheckpointBytes { log += ", checkpoint thresholds raised to \(formatBytes(checkpointBytes))" }
        return Measurement(row: workload, engine: E.kind, ops: 1, seconds: seconds, note: "\(fixed(seconds * 1000, 2)) ms (\(log))")
    }
}
