import BoxwoodPlatform

/// Deallocates a batch of page buffers that nothing references any more, off the committing thread when the batch is
/// large: a background checkpoint's install releases every frozen page at once (16,000 pages for the default 64 MiB
/// memory budget), and freeing them one by one took 5–25 ms of the commit that installed it (`perf`, `latency-txn-1000`
/// row: `free` was 44 % of the install). A short-lived detached thread frees them instead; when no thread can be made
/// they are freed here, as before.
///
/// Invariant kept by the callers: every buffer handed over was allocated with `UnsafeMutableRawPointer.allocate`, is
/// referenced by nothing (no dirty page slot, no spare list, no frozen array still read), and is handed over once.
/// From the call on, the batch owns them.
enum PageBufferRelease {
    /// Batches of at least this many buffers go to a thread of their own; smaller ones are freed at once (starting a
    /// thread costs about as much as freeing a few hundred pages).
    static let backgroundThreshold = 1024

    /// Deallocates `buffers`, on a detached thread when there are at least `backgroundThreshold` of them.
    static func deallocate(_ buffers: [UnsafeMutableRawPointer]) {
        guard buffers.count >= backgroundThreshold else {
            for buffer in buffers { buffer.deallocate() }
            return
        }
        let batch = OwnedBuffers(buffers)
        do {
            try DetachedThread.start(name: "boxwood-free") { batch.deallocateAll() }
        } catch {
            // No thread (the process is at its limit): pay for it here.
            batch.deallocateAll()
        }
    }
}

/// Buffers whose ownership moves to the thread that frees them (see `PageBufferRelease`'s invariant): nothing else
/// holds them, so sending the pointers is safe.
private final class OwnedBuffers: @unchecked Sendable {
    private let buffers: [UnsafeMutableRawPointer]
    init(_ buffers: [UnsafeMutableRawPointer]) { self.buffers = buffers }
    func deallocateAll() { for buffer in buffers { buffer.deallocate() } }
}
