import Atomics

extension ValueBox {
    /// Versions committed by other value boxes (other processes) after this call, as they happen: an
    /// `AsyncStream` of ``transactionStateVersion`` values, driven by polling the shared header every `pollInterval` (one
    /// atomic load per poll, no I/O). Versions this value box committed itself are not reported, and several
    /// commits between two polls are reported once, as the newest version. Meant for refreshing live views
    /// of a process that is not writing (Postbox notices only at its next transaction). The stream ends
    /// when the task iterating it is cancelled. A value box without a shared header (a read-only open in a
    /// read-only directory) gets a stream that ends at once.
    public func externalChanges(pollInterval: Duration = .milliseconds(10)) -> AsyncStream<UInt64> {
        guard header != nil, let monitor = try? HeaderMonitor(path: path + "/" + ValueBox.headerFileName,
                                                             fileSystem: fileSystem, ownCommits: ownCommits) else {
            return AsyncStream { $0.finish() }
        }
        let (stream, continuation) = AsyncStream<UInt64>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // The baseline is the version now, not when the task first runs: a commit made right after this call
        // is reported.
        let baseline = monitor.version
        let task = Task.detached {
            var last = baseline
            while !Task.isCancelled {
                try? await Task.sleep(for: pollInterval)
                let version = monitor.version
                if version != last {
                    last = version
                    if version != monitor.ownCommits.load(ordering: .acquiring) { continuation.yield(version) }
                }
            }
            monitor.close()
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

/// A second mapping of the shared header that a background task may read (it takes no slot and no lock).
final class HeaderMonitor: @unchecked Sendable {
    private let file: CoordinationFile
    private let header: SharedHeader
    let ownCommits: ManagedAtomic<UInt64>

    init(path: String, fileSystem: StorageFileSystem, ownCommits: ManagedAtomic<UInt64>) throws(BoxwoodError) {
        file = try fileSystem.openCoordinationFile(path)
        header = SharedHeader(file: file)
        self.ownCommits = ownCommits
    }

    var version: UInt64 { header.transactionStateVersion }

    func close() { file.close() }
}
