import Atomics
import BoxwoodPlatform

/// Waiting for other processes' commits without polling.
///
/// Every publish bumps `commitSignal` and, only when `commitWaiters` is non-zero, wakes the threads sleeping on it
/// (one atomic load per commit otherwise). A waiter registers in `commitWaiters`, reads `commitSignal`, checks the
/// published version, and sleeps only while `commitSignal` still holds the value it read. All of it is
/// sequentially consistent, so a commit either is seen by the version check or changes the word the waiter sleeps
/// on (the kernel compares it before sleeping): no wake-up is lost. With no waiter, nothing wakes at all.
extension SharedHeader {
    /// Called by `publish`: tells the waiters a commit was published.
    func signalCommit() {
        word32(SharedHeader.commitSignalOffset).wrappingIncrement(ordering: .sequentiallyConsistent)
        if word32(SharedHeader.commitWaitersOffset).load(ordering: .sequentiallyConsistent) != 0 {
            SharedWordWait.wakeAll(address32(SharedHeader.commitSignalOffset))
        }
    }

    /// Sleeps until the published version differs from `version`, ``interruptCommitWaits()`` is called, or
    /// `timeout` passes (nil: no limit). May return early; the caller re-reads the version.
    func waitForCommit(after version: UInt64, timeout: Duration?) {
        let waiters = word32(SharedHeader.commitWaitersOffset)
        waiters.wrappingIncrement(ordering: .sequentiallyConsistent)
        defer { waiters.wrappingDecrement(ordering: .sequentiallyConsistent) }
        let seen = word32(SharedHeader.commitSignalOffset).load(ordering: .sequentiallyConsistent)
        if transactionStateVersion != version { return }
        SharedWordWait.wait(address32(SharedHeader.commitSignalOffset), whileEquals: seen, timeout: timeout)
    }

    /// Wakes every commit waiter (they re-check and, finding no new version, sleep again): how a watcher of this
    /// process is told to stop.
    func interruptCommitWaits() {
        word32(SharedHeader.commitSignalOffset).wrappingIncrement(ordering: .sequentiallyConsistent)
        SharedWordWait.wakeAll(address32(SharedHeader.commitSignalOffset))
    }
}
