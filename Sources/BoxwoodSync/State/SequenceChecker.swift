import Boxwood

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
    /// seq: `seq` with count `seq - seq_start + 1`). Any Int32 values are accepted (the arithmetic is in Int64).
    public static func check(local: Int32, value: Int32, count: Int32) -> SequenceCheck {
        check(local: Int64(local), start: Int64(value) - Int64(count), end: Int64(value))
    }

    /// Checks a seq-ordered batch covering `seqStart...seq` (it moves the counter from `seqStart − 1` to `seq`).
    public static func check(local: Int32, seqStart: Int32, seq: Int32) -> SequenceCheck {
        check(local: Int64(local), start: Int64(seqStart) - 1, end: Int64(seq))
    }

    /// The rule, on values that cannot overflow: the step moves the counter from `start` to `end`.
    private static func check(local: Int64, start: Int64, end: Int64) -> SequenceCheck {
        if start == local { return .apply }
        if end <= local { return .alreadyApplied }
        // A count-0 update at or below the local value, or one that overlaps it partly, was applied already.
        if start < local { return .alreadyApplied }
        return .gap
    }

    /// Whether a server can send a step that moves a counter to `value` by `count`: counters start at 0 and
    /// only grow, so `count ≥ 0` and the step starts at `value − count ≥ 0`. Anything else (`Int32.min`
    /// as a pts or a count, a count larger than the counter) is impossible: the reducer does not order
    /// it among real updates but drops it and fetches what the server really has (see ``ImplausibleCounter``).
    public static func isPlausible(value: Int32, count: Int32) -> Bool {
        count >= 0 && Int64(value) - Int64(count) >= 0
    }

    /// Whether a server can send a seq-ordered batch covering `seqStart...seq` (`seqStart == 0` marks an
    /// unordered batch and never reaches here): seq numbers start at 1 and the range is not empty.
    public static func isPlausible(seqStart: Int32, seq: Int32) -> Bool {
        seqStart >= 1 && seq >= seqStart
    }
}

/// A counter value no server can send (see ``SequenceChecker/isPlausible(value:count:)``). The update that
/// carried it is not applied; the reducer treats it as a gap that only the server can fill — the common box
/// polls getDifference, a channel polls getChannelDifference — so whatever the server really has still arrives,
/// and nothing is held behind an update that can never apply.
public enum ImplausibleCounter: Error, Hashable, Sendable {
    /// A pts update (or bare pts step) of the common box.
    case pts(pts: Int32, count: Int32)
    /// A secret-chat update (qts counts 1, so `qts ≥ 1`).
    case qts(Int32)
    /// A channel update.
    case channelPts(channelId: PeerId, pts: Int32, count: Int32)
    /// A seq-ordered batch.
    case seq(start: Int32, end: Int32)
}
