/// Suspending for an app's background: what iOS needs of an embedded database before it suspends the process.
///
/// iOS suspends an app shortly after it leaves the foreground and kills one that holds a file lock in a shared
/// (app-group) container at that moment (exception 0xdead10cc). A value box holds no lock outside a write
/// transaction, so the point of ``suspend()`` is the rest: no transaction or read snapshot left open, the log
/// folded into the data file when that is cheap (a cheap checkpoint now saves replay work at the next launch),
/// and every thread that waits for other processes' commits stopped, so that nothing of the database wakes while
/// the app sleeps. Until ``resume()`` every call throws ``BoxwoodError/suspended(path:)`` — it fails rather than
/// waits, so that work the app starts by mistake in the background ends at once instead of hanging.
extension ValueBox {
    /// The largest write-ahead log that ``suspend()`` checkpoints: about a millisecond's worth of page writes
    /// and two syncs, so that suspending stays well inside the few seconds an app gets.
    public static let suspendCheckpointLimit: UInt64 = 1 << 20

    /// Prepares for the process being suspended. Throws `.transactionAlreadyActive` when a write transaction is
    /// open (commit or abort it first); ends an open read snapshot; checkpoints when the log holds at most
    /// ``suspendCheckpointLimit`` bytes and no other value box is writing right now (it never waits for the
    /// lock); stops every ``externalChanges()`` stream (their threads exit, the streams end). Suspending a
    /// suspended value box does nothing.
    public func suspend() throws(BoxwoodError) {
        if suspended { return }
        if transaction == nil && !inExplicitRead { waitForBackgroundCheckpoint() }
        try checkUsable()
        if transaction != nil { throw .transactionAlreadyActive }
        endRead()
        if !options.readOnly, let wal, wal.endOffset > UInt64(WriteAheadLog.headerSize),
           wal.endOffset <= ValueBox.suspendCheckpointLimit {
            try checkpointIfWriterLockIsFree()
        }
        commitWatchers.stopAll()
        suspended = true
    }

    /// Ends a suspension: calls work again, and the next one catches up with everything other processes committed
    /// meanwhile. ``externalChanges()`` streams ended by ``suspend()`` must be asked for again.
    public func resume() throws(BoxwoodError) {
        guard suspended else { return }
        suspended = false
        try checkUsable()
    }

    /// True between ``suspend()`` and ``resume()``.
    public var isSuspended: Bool { suspended }
}
