import Boxwood
import BoxwoodPlatform
import BoxwoodStore
import Dispatch
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Boxwood-only rows about live views across processes (the other engines have no change notification):
///
/// - `external-commit`: another process commits a preferences entry holding its CLOCK_MONOTONIC time; this process
///   has a live view of that key and records, for each commit, the time from the commit's timestamp to the view's
///   new snapshot (commit → shared-header wake → empty transaction → view refresh → stream). The child commits one
///   entry per byte it reads from stdin, so commits never queue behind each other. Ops are commits; the note gives
///   p50 / p99 / max.
/// - `idle-views`: 20 live views on an idle database; the row counts the voluntary context switches of all of this
///   process's threads (getrusage: a thread that sleeps and is woken counts one) over a quiet window, the measuring
///   thread's own sleep included. Ops are those wake-ups, so ops/s is wake-ups per second; the note adds the
///   involuntary switches (preemptions by other processes, which depend on the machine's load).
extension Bench {
    static let externalCommitKey = ValueBoxKey("bench.external-commit")

    func externalCommitLatency() throws(BenchError) -> Measurement {
        let workload = WorkloadID.externalCommit.rawValue
        let directory = root + "/boxwood-external-commit"
        let commits = sizes.externalCommits
        removeTree(directory)
        let latencies = try runAsync { () async throws -> [Double] in
            let postbox = try await Postbox.open(path: directory)
            var views = postbox.view(.preferences(keys: [Self.externalCommitKey])).makeAsyncIterator()
            _ = try await views.next()
            let executable = try CurrentProcess.executablePath()
            var spawned = try ChildProcess.spawn(executable: executable, arguments: ["--external-commit-child", directory],
                                                 standardInput: .pipe, standardOutput: .nullDevice)
            guard let toChild = spawned.standardInput.take() else { throw BenchError.io(operation: "spawn", path: directory, errno: EBADF) }
            var results: [Double] = []
            var sent: UInt64 = 0
            for _ in 0..<commits {
                var byte: UInt8 = 1
                _ = try withUnsafeBytes(of: &byte) { try toChild.descriptor.writeAll($0) }
                sent += 1
                // Wait for the snapshot showing this commit (its entry carries the child's commit counter).
                while true {
                    guard let view = try await views.next() else { throw BenchError.verification(engine: .boxwood, workload: workload, detail: "the view ended") }
                    let now = monotonicNanoseconds()
                    guard let entry = view.values[Self.externalCommitKey] as? CodableEntry,
                          entry.data.count == 16 else { continue }
                    let (stamp, counter) = entry.data.withUnsafeBytes { ($0.load(as: UInt64.self), $0.load(fromByteOffset: 8, as: UInt64.self)) }
                    if counter == sent {
                        results.append(Double(now &- stamp) / 1e9)
                        break
                    }
                }
            }
            try toChild.close()
            try await postbox.close()
            let termination = try await spawned.process.terminated()
            guard termination == .exited(0) else {
                throw BenchError.verification(engine: .boxwood, workload: workload, detail: "the committing child ended with \(termination)")
            }
            return results
        }
        removeTree(directory)
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        let total = latencies.reduce(0, +)
        return Measurement(row: workload, engine: .boxwood, ops: latencies.count, seconds: total,
                           note: "commit → live view in another process: p50 \(fixed(percentile(0.5) * 1000, 3)) ms, p99 \(fixed(percentile(0.99) * 1000, 3)) ms, max \(fixed(sorted.last! * 1000, 3)) ms (\(latencies.count) commits)")
    }

    func idleViewWakeups() throws(BenchError) -> Measurement {
        let workload = WorkloadID.idleViews.rawValue
        let directory = root + "/boxwood-idle-views"
        let window = sizes.idleWindowSeconds
        removeTree(directory)
        let (switches, baseline, views) = try runAsync { () async throws -> ((voluntary: Int, involuntary: Int), Int, Int) in
            // The same window with no database open: what this process wakes anyway (on Linux, libdispatch's
            // worker-pool monitor ticks once a second in every process that has used Dispatch).
            let quietStart = contextSwitches()
            usleep(UInt32(window * 1_000_000))
            let baseline = contextSwitches().voluntary - quietStart.voluntary
            let postbox = try await Postbox.open(path: directory)
            var tasks: [Task<Void, Never>] = []
            for i in 0..<20 {
                let stream = postbox.view(.preferences(keys: [ValueBoxKey("bench.idle.\(i)")]))
                let started = SnapshotLatch()
                // A failed view ends its task; `liveViewCount` below then shows fewer than 20.
                tasks.append(Task { _ = try? await stream.first { _ in started.open(); return false } })
                await started.wait()
            }
            let live = postbox.liveViewCount
            // Let everything settle, then count.
            try await Task.sleep(for: .milliseconds(200))
            let before = contextSwitches()
            usleep(UInt32(window * 1_000_000))
            let after = contextSwitches()
            try await postbox.close()
            for task in tasks { await task.value }
            return ((after.voluntary - before.voluntary, after.involuntary - before.involuntary), baseline, live)
        }
        removeTree(directory)
        guard views == 20 else { throw .verification(engine: .boxwood, workload: workload, detail: "\(views) live views, not 20") }
        return Measurement(row: workload, engine: .boxwood, ops: switches.voluntary, seconds: window,
                           note: "\(switches.voluntary) wake-ups (voluntary context switches, all threads, the measuring sleep included) in \(fixed(window, 1)) s with 20 live views and no commits: \(fixed(Double(switches.voluntary) / window, 2))/s; the same window with no database open: \(baseline); \(switches.involuntary) involuntary")
    }
}

/// The child of `external-commit`: commits the preferences entry (its CLOCK_MONOTONIC time and a counter) once
/// per byte read from stdin; exits 0 at end of file.
func runExternalCommitChild(directory: String) -> Int32 {
    do {
        try runAsync { () async throws in
            let postbox = try await Postbox.open(path: directory)
            var counter: UInt64 = 0
            var byte: UInt8 = 0
            let input = FileDescriptor.standardInput
            while try withUnsafeMutableBytes(of: &byte, { try input.read(into: $0) }) == 1 {
                counter += 1
                let stampedCounter = counter
                try await postbox.transaction { tx in
                    var bytes = [UInt8](repeating: 0, count: 16)
                    bytes.withUnsafeMutableBytes {
                        $0.storeBytes(of: monotonicNanoseconds(), as: UInt64.self)
                        $0.storeBytes(of: stampedCounter, toByteOffset: 8, as: UInt64.self)
                    }
                    try tx.setPreferencesEntry(key: Bench.externalCommitKey, value: CodableEntry(data: bytes))
                }
            }
            try await postbox.close()
        }
        return 0
    } catch {
        printError("external-commit child: \(error)")
        return 1
    }
}

/// CLOCK_MONOTONIC in nanoseconds: the same clock in every process of the machine.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Voluntary and involuntary context switches of every thread of this process so far.
private func contextSwitches() -> (voluntary: Int, involuntary: Int) {
    var usage = rusage()
    #if os(Linux)
    getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    return (usage.ru_nvcsw, usage.ru_nivcsw)
}

/// Runs async work from the synchronous harness and waits for it.
func runAsync<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws(BenchError) -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    switch box.result! {
    case let .success(value): return value
    case let .failure(error as BenchError): throw error
    case let .failure(error as BoxwoodError): throw .boxwood(error)
    case let .failure(error): throw .verification(engine: .boxwood, workload: "live views", detail: "\(error)")
    }
}

private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

/// Opens once (on a view's first snapshot); `wait` returns after that.
private final class SnapshotLatch: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let lock = PlatformLock()
    private var opened = false

    func open() {
        let first = lock.withLock { () -> Bool in
            defer { opened = true }
            return !opened
        }
        if first { semaphore.signal() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.semaphore.wait()
                continuation.resume()
            }
        }
    }
}
