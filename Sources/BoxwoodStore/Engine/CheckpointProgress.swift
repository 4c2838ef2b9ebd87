import BoxwoodPlatform

/// How far a background checkpoint has got, shared by the checkpointer thread (which reports) and the value box's
/// committing thread (which paces its commits by it; see `ValueBox.paceCommitsByCheckpoint`).
///
/// Most of a checkpoint's time is its final `fsync` (the device taking the pages), whose progress no call reports,
/// so the estimate is in time: `startedAt` plus the share of `expectedDuration`, the time the previous checkpoint
/// took for as many bytes. Without one (the first checkpoint), the share of the pages written stands in.
///
/// Invariant: `written` only grows, and once `ended` is set nothing changes again; every change wakes the waiters,
/// so a commit that waits sleeps in the kernel until the estimate says the share is done or the checkpoint ended.
final class CheckpointProgress: @unchecked Sendable {
    /// The bytes of frozen pages and values the checkpoint writes (its catalog and freelist pages not counted, so
    /// the bytes written may pass it at the end).
    let expectedBytes: UInt64
    let startedAt = ContinuousClock.now
    /// How long the checkpoint should take, from the previous one's rate; nil when there was none.
    let expectedDuration: Duration?
    private let condition = PlatformCondition()
    private var written: UInt64 = 0
    private var ended = false
    /// When the checkpoint ended (read after `end`).
    private(set) var endedAt: ContinuousClock.Instant?

    init(expectedBytes: UInt64, nanosecondsPerByte: Double?) {
        self.expectedBytes = max(1, expectedBytes)
        expectedDuration = nanosecondsPerByte.map { .nanoseconds(Int64(min(Double(Int64.max), $0 * Double(max(1, expectedBytes))))) }
    }

    /// The checkpointer wrote `bytes` in all so far.
    func noteWritten(_ bytes: UInt64) {
        condition.changeAndBroadcast { written = max(written, bytes) }
    }

    /// The checkpoint ended (written, synced and its meta written, or failed).
    func end() {
        let now = ContinuousClock.now
        condition.changeAndBroadcast {
            endedAt = now
            ended = true
        }
    }

    /// What the checkpoint took per expected byte, once it ended.
    var nanosecondsPerByte: Double? {
        condition.withLock {
            guard let endedAt else { return nil }
            let took = startedAt.duration(to: endedAt).components
            return (Double(took.seconds) * 1e9 + Double(took.attoseconds) / 1e9) / Double(expectedBytes)
        }
    }

    /// True when the checkpoint ended or, by the estimate, has done `share` (0...1) of its work.
    func hasDone(_ share: Double) -> Bool {
        condition.withLock { isDone(share) }
    }

    /// Sleeps until the checkpoint ended or, by the estimate, has done `share` (0...1) of its work.
    func wait(untilDone share: Double) {
        if let expectedDuration {
            let deadline = startedAt.advanced(by: expectedDuration * min(1, max(0, share)))
            _ = condition.wait(until: { ended }, timeout: ContinuousClock.now.duration(to: deadline))
        } else {
            condition.wait { isDone(share) }
        }
    }

    /// `hasDone` with the lock held.
    private func isDone(_ share: Double) -> Bool {
        if ended { return true }
        let share = min(1, max(0, share))
        if let expectedDuration {
            return startedAt.duration(to: .now) >= expectedDuration * share
        }
        return Double(written) >= share * Double(expectedBytes)
    }
}
