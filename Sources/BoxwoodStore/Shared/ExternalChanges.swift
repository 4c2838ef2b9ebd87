import Atomics
import BoxwoodPlatform
import SystemPackage

extension ValueBox {
    /// Versions committed by other value boxes (other processes) after this call, as they happen: a stream of
    /// ``transactionStateVersion`` values. No polling: a thread of its own sleeps in the kernel on the shared
    /// header's commit word (a shared futex on Linux, `os_sync_wait_on_address` on Darwin) and is woken by the
    /// committing process. Versions this value box committed itself are not reported, and several commits that
    /// land while the stream's consumer is busy are reported once, as the newest version. Meant for refreshing live
    /// views of a process that is not writing (Postbox notices only at its next transaction).
    ///
    /// The stream ends when the task iterating it is cancelled or drops it — the thread is woken and exits, and
    /// nothing of it wakes afterwards — and when the value box is suspended or closed. A value box without a shared
    /// header (a read-only open in a read-only directory) has nothing to watch: its stream ends at once. The stream
    /// throws a ``BoxwoodError`` when watching cannot start: `.closed` or `.suspended` for a value box in that
    /// state, `.io` when the header cannot be mapped or the thread cannot be started.
    public func externalChanges() -> AsyncThrowingStream<UInt64, any Error> {
        if isClosed { return AsyncThrowingStream { $0.finish(throwing: BoxwoodError.closed) } }
        if suspended { return AsyncThrowingStream { $0.finish(throwing: BoxwoodError.suspended(path: path)) } }
        guard header != nil else { return AsyncThrowingStream { $0.finish() } }
        let monitor: HeaderMonitor
        do {
            monitor = try HeaderMonitor(path: path + "/" + ValueBox.headerFileName, fileSystem: fileSystem, ownCommits: ownCommits)
        } catch {
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        let (stream, continuation) = AsyncThrowingStream<UInt64, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // The baseline is the version now, not when the thread first runs: a commit made right after this call
        // is reported.
        let baseline = monitor.version
        let watcher = CommitWatcher(monitor: monitor, baseline: baseline) { version in continuation.yield(version) }
        do {
            try watcher.start { continuation.finish() }
        } catch {
            let failure = BoxwoodError.io(operation: "start the commit watcher thread", path: path + "/" + ValueBox.headerFileName,
                                          errno: error.rawValue)
            return AsyncThrowingStream { $0.finish(throwing: failure) }
        }
        continuation.onTermination = { _ in watcher.stop() }
        commitWatchers.add(watcher)
        return stream
    }
}

/// The thread behind ``ValueBox/externalChanges()``: sleeps until the published version moves, reports versions
/// other value boxes committed, and exits once stopped.
///
/// The header mapping it sleeps on (`monitor`) lives as long as this object — it is unmapped in `deinit`, never by
/// the thread — because ``stop()`` touches it from other threads (the stream's termination, `suspend`, `close`),
/// possibly while the thread is on its way out.
final class CommitWatcher: @unchecked Sendable {
    private let monitor: HeaderMonitor
    private let report: @Sendable (UInt64) -> Void
    private let stopped = ManagedAtomic<Bool>(false)
    private var last: UInt64

    init(monitor: HeaderMonitor, baseline: UInt64, report: @escaping @Sendable (UInt64) -> Void) {
        self.monitor = monitor
        last = baseline
        self.report = report
    }

    deinit {
        monitor.close()
    }

    /// Starts the thread; `finished` runs on it when it exits (after ``stop()``).
    func start(finished: @escaping @Sendable () -> Void) throws(Errno) {
        try DetachedThread.start(name: "boxwood.commits") { [self] in
            while !stopped.load(ordering: .sequentiallyConsistent) {
                monitor.header.waitForCommit(after: last, timeout: nil)
                let version = monitor.version
                guard version != last else { continue }
                last = version
                if version != monitor.ownCommits.load(ordering: .acquiring) { report(version) }
            }
            finished()
        }
    }

    /// Stops the thread (once): sets the flag, then bumps the commit word and wakes it (the kernel compares the word
    /// before sleeping, so the wake cannot be missed).
    func stop() {
        guard !stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        monitor.header.interruptCommitWaits()
    }
}

/// The live ``CommitWatcher``s of one value box (weakly held), so that `suspend` and `close` can stop them.
final class CommitWatcherRegistry: @unchecked Sendable {
    private let lock = PlatformLock()
    private var watchers: [WeakCommitWatcher] = []

    func add(_ watcher: CommitWatcher) {
        lock.withLock {
            watchers.removeAll { $0.watcher == nil }
            watchers.append(WeakCommitWatcher(watcher: watcher))
        }
    }

    /// Stops every watcher: their threads exit and their streams end.
    func stopAll() {
        let stopping = lock.withLock { () -> [CommitWatcher] in
            defer { watchers = [] }
            return watchers.compactMap(\.watcher)
        }
        for watcher in stopping { watcher.stop() }
    }
}

private struct WeakCommitWatcher {
    weak var watcher: CommitWatcher?
}

/// A second mapping of the shared header that a watcher thread reads (it takes no slot and no lock).
final class HeaderMonitor: @unchecked Sendable {
    private let file: CoordinationFile
    let header: SharedHeader
    let ownCommits: ManagedAtomic<UInt64>

    init(path: String, fileSystem: StorageFileSystem, ownCommits: ManagedAtomic<UInt64>) throws(BoxwoodError) {
        file = try fileSystem.openCoordinationFile(path)
        header = SharedHeader(file: file)
        self.ownCommits = ownCommits
    }

    var version: UInt64 { header.transactionStateVersion }

    func close() { file.close() }
}
