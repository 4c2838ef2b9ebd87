/// The engine's logical state as a commit leaves it: every table (key type, tree root, totals), the MasterClientId,
/// whether a secure remove still waits for its scrub, and the version (TransactionStateVersion) of that commit.
///
/// One value with one owner, `ValueBox.state`, which every read and write works on. A write transaction keeps the
/// value it started from (``OpenTransaction/base``) and changes `state` in place: commit keeps what it made, abort
/// puts the base back. Replaying a WAL record does the same with the record's operations. Pages are not part of
/// it: the trees' roots here name pages the pager holds (dirty, copy-on-write) or the data file holds.
struct CommittedState {
    /// Every table, by id.
    var tables: [Int32: TableState] = [:]
    /// The MasterClientId (0 when no value box became master).
    var masterClientId: Int64 = 0
    /// A committed secure remove (or a meta that says so) has not been scrubbed from the free pages yet (see
    /// `ValueBox.checkpoint()`).
    var secureDeletePending = false
    /// The TransactionStateVersion of the last commit in this state.
    var version: UInt64 = 0
}

/// A transaction in progress: a write transaction between `begin()` and `commit()`/`abort()`, a read-only one
/// (pinned snapshot), or a WAL record being replayed.
struct OpenTransaction {
    /// The state the transaction started from; abort restores it.
    let base: CommittedState
}
