/// Recovery from a failed write or sync (`ENOSPC`, `EIO`) without closing the value box.
///
/// The rule (the "fsync-gate" lesson): after a failed write or fsync nothing the page cache shows is
/// trusted to be on disk. Every failure leaves the files in a state whose durable meaning is known —
/// old meta + WAL, or a new meta whose pages were already synced — and recovery re-establishes it by
/// rewriting what may be missing, then rebuilding the in-memory state from the files.
extension ValueBox {
    /// Runs before any call while `failure` is set. Throws (and stays in the failed state, to be retried
    /// by the next call) when the device still refuses.
    func recoverFromFailure() throws(BoxwoodError) {
        let sync = options.durability != .off
        if let offset = pendingWALRollback {
            // Only the failed commit's record is in doubt; the in-memory state was rolled back already. `wal` is
            // the log `commit()` appended it to: nothing replaces it before this runs.
            try wal!.rollBack(to: offset, sync: sync)
            pendingWALRollback = nil
            failure = nil
            header?.writerIsChangingFiles = false
            if transaction == nil { unlockWriter() }
            return
        }
        if let meta = pendingMeta {
            // The checkpoint's pages were synced before this meta was written: writing it again (which makes
            // the page dirty again) and syncing makes it durable, whatever the failed attempt left.
            try writeMeta(meta, sync: sync)
            pendingMeta = nil
        }
        try reopen()
        if transaction == nil { unlockWriter() }
    }

    /// Drops the in-memory state and opens the files again (recovering from the WAL).
    func reopen() throws(BoxwoodError) {
        releaseFiles()
        isClosed = false
        failure = nil
        transaction = nil
        seenHeaderSequence = .max
        state = CommittedState()
        do {
            try open()
        } catch {
            releaseFiles()
            failure = error
            throw error
        }
    }
}
