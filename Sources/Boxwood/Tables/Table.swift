import BoxwoodStore
/// The base of every Postbox-layer table: an engine table (some tables use a few) on the shared value box,
/// and the two hooks the transaction machinery calls.
///
/// Tables follow one of three patterns (as in Postbox): *write-through* (every change goes to the value box
/// at once), *write-back* (changes collect in a dirty dictionary and are flushed by ``beforeCommit()``), or a
/// *read cache* in front of write-through storage. ``clearMemoryCache()`` empties the caches when another
/// process committed (the value box's `lastBeginSawExternalCommits`) — never while something is dirty.
///
/// Tables are used only from the Postbox queue, inside a value-box transaction.
class Table {
    let valueBox: ValueBox
    let table: ValueBoxTable
    /// False for short-lived instances (extensions): write-back caches are dropped after every flush.
    let useCaches: Bool

    init(valueBox: ValueBox, table: ValueBoxTable, useCaches: Bool = true) {
        self.valueBox = valueBox
        self.table = table
        self.useCaches = useCaches
    }

    /// Drops every cached value (nothing may be dirty).
    func clearMemoryCache() {}

    /// Writes pending changes to the value box. Runs for every table at the end of each transaction, after
    /// the change record was built and before the value box commits.
    func beforeCommit() throws {}
}
