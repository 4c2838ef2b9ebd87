/// The one rule every counter (pts, qts, seq, each channel's pts) is checked with: an update that moves the
/// counter from `local` by `count` to `value` is applied when it starts exactly where the local counter is,
/// skipped when it ends at or below it (already applied), and is a gap otherwise.
public enum SequenceCheck: Hashable, Sendable {
    case apply
    case alreadyApplied
    case gap
}

public enum SequenceChecker {
    /// Checks an update that moves a counter to `value` by `count` (pts: `pts`/`pts_count`; qts: count 1;
    /// seq: `seq` with count `seq - seq_start + 1`).
    public static func check(local: Int32, value: Int32, count: Int32) -> SequenceCheck {
        let start = Int64(value) - Int64(count)
        if start == Int64(local) { return .apply }
        if Int64(value) <= Int64(local) { return .alreadyApplied }
        // A count-0 update at or below the local value, or one that overlaps it partly, was applied already.
        if start < Int64(local) { return .alreadyApplied }
        return .gap
    }
}
