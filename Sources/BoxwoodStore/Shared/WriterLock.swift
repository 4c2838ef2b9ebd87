import Atomics
import BoxwoodPlatform

/// The writer lock: one writer at a time across every value box on the database, in any process. It is held only
/// for a write transaction, a checkpoint or an open's repair — never while idle.
///
/// A waiter sleeps in the kernel on `writerReleases`, which every release bumps (and wakes when `writerWaiters`
/// says someone sleeps). A holder that dies releases the lock through the kernel without waking anyone, so the
/// sleep is cut into slices of ``SharedHeader/lockRetrySlice``: the only periodic wake-up, and only while waiting
/// for a lock.
extension SharedHeader {
    /// The longest a lock waiter sleeps before trying again on its own.
    static let lockRetrySlice: Duration = .milliseconds(100)

    /// The longest wait `lockWriter` accepts (a larger or non-finite timeout is taken as this).
    static let longestLockWait: Double = 365 * 24 * 3600

    /// Takes the writer lock, waiting up to `timeout` seconds. Throws `.lockTimeout` when another holder
    /// keeps it longer.
    func lockWriter(timeout: Double) throws(BoxwoodError) {
        if try tryLockWriter() { return }
        let seconds = timeout.isNaN ? 0 : min(max(timeout, 0), SharedHeader.longestLockWait)
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        let releases = word32(SharedHeader.writerReleasesOffset)
        let waiters = word32(SharedHeader.writerWaitersOffset)
        waiters.wrappingIncrement(ordering: .sequentiallyConsistent)
        defer { waiters.wrappingDecrement(ordering: .sequentiallyConsistent) }
        while true {
            let seen = releases.load(ordering: .sequentiallyConsistent)
            if try tryLockWriter() { return }
            let now = ContinuousClock.now
            if now >= deadline { throw .lockTimeout(path: file.path, seconds: timeout) }
            SharedWordWait.wait(address32(SharedHeader.writerReleasesOffset), whileEquals: seen,
                                timeout: min(deadline - now, SharedHeader.lockRetrySlice))
        }
    }

    /// Takes the writer lock if it is free right now.
    func tryLockWriter() throws(BoxwoodError) -> Bool {
        guard try file.tryLockWriter() else { return false }
        word(SharedHeader.writerHolderOffset).store(file.holderIdentity, ordering: .sequentiallyConsistent)
        return true
    }

    /// Releases the writer lock and wakes its waiters.
    func unlockWriter() {
        word(SharedHeader.writerHolderOffset).store(0, ordering: .sequentiallyConsistent)
        file.unlockWriter()
        // A waiter registers before its last try: one that registered after this load tries after the unlock
        // above and gets the lock, so bumping only for registered waiters loses no wake-up (and leaves the header
        // as it was when nobody waits).
        if word32(SharedHeader.writerWaitersOffset).load(ordering: .sequentiallyConsistent) != 0 {
            word32(SharedHeader.writerReleasesOffset).wrappingIncrement(ordering: .sequentiallyConsistent)
            SharedWordWait.wakeAll(address32(SharedHeader.writerReleasesOffset))
        }
    }
}
