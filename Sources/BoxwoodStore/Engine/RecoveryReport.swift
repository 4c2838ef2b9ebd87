/// What opening a database from its files found in the write-ahead log: how many commits were replayed on top
/// of the last checkpoint and whether a torn tail — the unfinished append of a process that was killed or a
/// machine that lost power — was found after them.
///
/// A torn tail never holds an acknowledged commit in `full` mode (each record is synced before `commit`
/// returns), and in `normal` mode only commits that a power cut may lose. Damage with an intact record after
/// it is not a torn tail: the open fails with `.corrupted` instead (see `docs/crash-safety.md`).
public struct RecoveryReport: Equatable, Sendable {
    /// WAL records (commits) replayed on top of the newest checkpoint.
    public let replayedCommits: Int
    /// The offset in `wal` where the torn tail started, nil when the log ended cleanly.
    public let tornTailOffset: UInt64?
    /// Bytes of the torn tail (0 when none).
    public let tornTailBytes: UInt64
    /// True when the torn tail was cut off the log (a read-only open leaves the file as it is).
    public let tornTailWasCut: Bool
}
