import Atomics

/// Boxwood's ValueBox: tables of ordered key/value pairs in one database directory, with Postbox's
/// semantics (see `docs/architecture.md`). A database is a directory holding `data` (the page file), `wal`
/// (the write-ahead log) and `header` (the shared header that processes coordinate through).
///
/// Several value boxes — in one process or in several — may have the same database open. One of them at a
/// time writes (``begin()`` takes the writer lock and waits up to ``ValueBoxOptions/lockTimeout`` for it);
/// the others keep reading, each from a consistent snapshot, and see a commit from the first call after it.
///
/// Not thread-safe: like Postbox, use one instance from one serial queue (or one actor). This is enforced, not
/// only stated: `ValueBox` is deliberately not `Sendable`, so Swift 6 refuses to capture it in a `@Sendable`
/// closure or pass it between tasks; several threads that need the database open a value box each (they then
/// coordinate as processes do), or go through `Postbox`, whose transactions run on its own queue. Mutations happen between
/// ``begin()`` and ``commit()`` (or ``abort()``); reads work inside or outside a transaction and see the
/// transaction's own changes. A read outside a transaction sees the newest commit of any process; use
/// ``beginRead()`` / ``endRead()`` to make several reads see the same snapshot.
public final class ValueBox {
    /// The longest key accepted.
    public static let maxKeySize = 1280
    /// The data file format version this build reads and writes.
    public static let formatVersion = MetaPage.formatVersion

    /// The database directory.
    public let path: String
    /// The options it was opened with.
    public let options: ValueBoxOptions
    /// A random id for this value box, the candidate value of ``masterClientId`` (Postbox's `sessionClientId`).
    public let sessionClientId: Int64

    let fileSystem: StorageFileSystem
    // `dataFile`, `pager` and `meta` are implicitly unwrapped: `open()` sets them before `init` returns, and only
    // `releaseFiles()` clears them, setting `isClosed`. Every public call that uses them first runs `checkUsable()`
    // or `enterRead()`, which then throws `.closed` (or, while `failure` is set, reopens and so sets them again);
    // `abort()` uses them only inside a transaction, which `close()` and `reopen()` end.
    var dataFile: StorageFile!
    @exclusivity(unchecked) var pager: Pager!
    /// The write-ahead log: nil only in a read-only value box whose database has no `wal` file. A writable one
    /// always has it while open (`openFromFiles` creates it; `loadSnapshot` never installs a state without it).
    var wal: WriteAheadLog?

    /// The meta of the checkpoint this state is built on.
    var meta: MetaPage!

    /// The logical state every read and write works on: the last commit's, or inside a transaction what the
    /// transaction has made of it so far (see `CommittedState`).
    @exclusivity(unchecked) var state = CommittedState()
    /// The open transaction, nil outside one.
    @exclusivity(unchecked) var transaction: OpenTransaction?
    /// The open write transaction's WAL record.
    let record = TransactionRecord()
    /// Writes that layers above the engine keep in memory until `commit()` (see `ValueBox+TransactionBuffers.swift`).
    @exclusivity(unchecked) var transactionBuffers: [Int64: any TransactionBuffer] = [:]
    /// Set after a failed write or sync: the in-memory state can no longer be trusted to match the files.
    /// The next call recovers (see `ValueBox+Recovery.swift`) before doing anything else. The writer lock
    /// stays held until then.
    @exclusivity(unchecked) var failure: BoxwoodError?
    /// A failed commit whose WAL record could not be cut off yet: the log must end here before anything else.
    var pendingWALRollback: UInt64?
    /// A checkpoint meta whose write or sync failed after its pages were made durable: it is written and
    /// synced again before the files are trusted (after a failed fsync the page cache may hold bytes the
    /// disk does not).
    var pendingMeta: MetaPage?
    /// The checkpoint being written in the background, until it is installed (see `BackgroundCheckpoint`).
    var backgroundCheckpoint: BackgroundCheckpoint?
    /// Commits that waited for the background checkpointer (paced or at a cap), and how long they waited in all.
    var checkpointWaits: UInt64 = 0
    var checkpointWaitNanoseconds: UInt64 = 0
    /// What the last background checkpoint took per byte it wrote (the next one's progress estimate).
    var checkpointNanosecondsPerByte: Double?
    /// The WAL's end when the last background checkpoint froze its state: the records before it are (or are being)
    /// checkpointed, so the WAL threshold counts from here. Reset with the log.
    var walCheckpointedEnd: UInt64 = 0
    /// Pages the last shrinking checkpoint (`checkpoint(shrinking:)`) moved toward the start of the file (tests and
    /// diagnostics).
    var pagesMovedByLastShrink = 0
    /// Writes the extents of values written once (see ValueBox+WrittenOnceValues.swift).
    let valueWriter = ExtentWriter()
    /// True when this value box wrote an extent the data file may not hold durably yet (no sync since).
    var dataFileHasUnsyncedValues = false
    /// Heads of the extents the running recovery checked before admitting their records (`admitsRecoveredRecord`):
    /// applying the record takes them without hashing them again. Empty outside a recovery.
    var extentsCheckedByRecovery: Set<UInt64> = []
    /// Bytes of extents this value box wrote for values written once since the last checkpoint began: an eighth of
    /// them counts toward the WAL threshold (`checkpointAfterCommit`), so that a recovery after a restart, which
    /// checks each named extent whole, reads a bounded amount of them.
    var valueBytesWrittenOnce: UInt64 = 0
    /// While a background checkpoint runs: the pages it may append (from the page count at its freeze to its
    /// `FrozenCheckpointWriter.fence`); values written once meanwhile go past them. Empty when none runs.
    var backgroundCheckpointReserve: Range<UInt64> = 0..<0

    // MARK: Sharing (see ValueBox+Sharing.swift)

    /// The shared header; nil only for a read-only open that cannot create or write it (nothing coordinates
    /// with other processes then).
    var header: SharedHeader?
    /// This value box's reader slot in the header.
    var readerSlot: Int?
    /// True while this value box holds the writer lock (inside a write transaction, a checkpoint, or a
    /// recovery that has not finished).
    var holdsWriterLock = false
    /// True while a snapshot is pinned: an explicit `beginRead`, a read-only transaction, or a read call.
    @exclusivity(unchecked) var isPinned = false
    /// Read callbacks running now that were lent page bytes (`withValue`, `withRange` and the other walks). While
    /// one runs, the decrypted-page cache is not trimmed: a read inside the callback must not free or reuse the page
    /// its caller's bytes are in — which a pinned snapshot prevents anyway, but a value box without a shared header
    /// (a read-only file system) pins nothing.
    @exclusivity(unchecked) var lendingDepth = 0
    var inExplicitRead = false
    /// The header's seqlock value when this state was last known to match what it published.
    @exclusivity(unchecked) var seenHeaderSequence: UInt64 = .max
    /// True when this value box created the header file (a failed open removes it again, changing nothing).
    var createdHeaderFile = false
    /// The last version this value box committed (read by ``externalChanges()``'s watcher thread).
    let ownCommits = ManagedAtomic<UInt64>(0)
    /// `state.version` when the previous transaction ended.
    var versionAtLastTransaction: UInt64 = 0

    /// True when the last ``begin()`` found commits of other value boxes (other processes) that this one
    /// had not seen at the end of its previous transaction: caches built from earlier reads are stale
    /// (Postbox's `afterBegin` check).
    public internal(set) var lastBeginSawExternalCommits = false

    /// The error of the last automatic checkpoint that failed after its commit had already succeeded (the
    /// commit stands; the database recovered from its files). Nil when the last automatic checkpoint worked.
    public internal(set) var lastCheckpointError: BoxwoodError?
    /// What the last open (or reopen) from the files found in the WAL; nil when this value box loaded a live
    /// writer's published state instead of recovering from the files.
    public internal(set) var lastRecovery: RecoveryReport?
    @exclusivity(unchecked) var isClosed = false
    /// Set by ``suspend()``, cleared by ``resume()``: every call in between throws `.suspended`.
    @exclusivity(unchecked) var suspended = false
    /// The threads of ``externalChanges()`` streams, stopped by ``suspend()`` and ``close()``.
    let commitWatchers = CommitWatcherRegistry()

    /// The key and salt this value box opens encrypted data files with: `options.encryption` until a rekey
    /// changes it (see ValueBox+Encryption.swift).
    var encryptionParameters: ValueBoxEncryptionParameters?

    let path_ = TreePath()
    let cellBuffer = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)

    /// Opens (creating when missing) the database directory at `path`, recovering from the WAL.
    public init(path: String, options: ValueBoxOptions = ValueBoxOptions(), fileSystem: StorageFileSystem = PosixFileSystem.shared) throws(BoxwoodError) {
        self.path = path
        self.options = options
        self.fileSystem = fileSystem
        self.sessionClientId = Int64.random(in: 1...Int64.max)
        self.encryptionParameters = options.encryption
        do {
            try open()
            try encryptInPlaceIfAsked()
        } catch {
            releaseFiles()
            detachHeader()
            if createdHeaderFile { try? fileSystem.removeFile(path + "/" + ValueBox.headerFileName) }
            throw error
        }
    }

    deinit {
        if !isClosed { try? close() }
        cellBuffer.deallocate()
    }

    /// Aborts an open transaction, checkpoints (unless read-only, failed, or another value box is writing
    /// right now) and closes the files. When the close has something to checkpoint, at least a sixteenth of the data
    /// file (and 64 pages) is free and no reader pins an older snapshot, the checkpoint also moves the pages past a line into free pages below it and
    /// cuts the file there (docs/architecture.md, "Shrinking on close"): a few more checkpoints, no compaction.
    public func close() throws(BoxwoodError) {
        if isClosed {
            // A recovery whose reopen failed (`reopen`) left the files released but `failure` set, so that the next
            // call retries it, and the header attached, maybe with the writer lock held. Closing ends that: nothing
            // is retried behind the caller's back, and no lock outlives the value box.
            if failure != nil {
                commitWatchers.stopAll()
                detachHeader()
                failure = nil
            }
            return
        }
        if transaction != nil { abort() }
        endRead()
        waitForBackgroundCheckpoint()
        var closeError: BoxwoodError? = nil
        if failure == nil && !options.readOnly {
            do { try checkpointIfWriterLockIsFree(shrinking: true) } catch { closeError = error }
        } else if failure != nil, pendingWALRollback != nil {
            // A failed commit's record may still be in the log: cut it off one last time.
            do { try recoverFromFailure() } catch { closeError = error }
        }
        commitWatchers.stopAll()
        releaseFiles()
        detachHeader()
        failure = nil
        if let closeError { throw closeError }
    }

    func releaseFiles() {
        joinBackgroundCheckpoint()
        isClosed = true
        pager = nil
        dataFile?.close()
        wal?.file.close()
        dataFile = nil
        wal = nil
    }

    /// The number of non-empty transactions committed to the database since it was created, by any value box
    /// in any process: one atomic load from the shared header, no I/O.
    public var transactionStateVersion: UInt64 { header?.transactionStateVersion ?? state.version }

    /// The TransactionStateVersion of the state this value box reads now (it catches up with
    /// ``transactionStateVersion`` at the next transaction or read).
    public var snapshotVersion: UInt64 { state.version }

    /// True between `begin()` and `commit()`/`abort()`.
    public var isInTransaction: Bool { transaction != nil }

    func checkUsable() throws(BoxwoodError) {
        if backgroundCheckpoint != nil { settleBackgroundCheckpoint() }
        if failure != nil { try recoverFromFailure() }
        if isClosed { throw .closed }
        if suspended { throw .suspended(path: path) }
    }

    /// Throws unless a write transaction is open on a usable, writable value box — the check every mutation
    /// makes first. For a layer that reads before it writes (the full-text index) and must fail the same way
    /// a mutation would, before its reads.
    @_spi(EngineTables)
    public func checkWritable() throws(BoxwoodError) {
        try checkUsable()
        if options.readOnly { throw .readOnly(path: path) }
        if transaction == nil { throw .noActiveTransaction }
    }

    // MARK: Transactions

    /// Starts a transaction: takes the writer lock (waiting up to ``ValueBoxOptions/lockTimeout``; a
    /// read-only value box pins a snapshot instead) and catches up with every commit made so far.
    public func begin() throws(BoxwoodError) {
        try checkUsable()
        if transaction != nil || inExplicitRead { throw .transactionAlreadyActive }
        if options.readOnly {
            try pinSnapshot()
        } else {
            try lockWriter()
            do { try catchUp() } catch { unlockWriter(); throw error }
        }
        lastBeginSawExternalCommits = state.version != versionAtLastTransaction
        transaction = OpenTransaction(base: state)
        record.start()
    }

    /// Commits the transaction: appends its WAL record (synced in `.full` mode), publishes it to other value
    /// boxes and releases the writer lock. A transaction that changed nothing writes nothing and does not
    /// bump the version. May run a checkpoint afterwards; if that checkpoint fails the commit still stands
    /// (it is in the WAL), the error is kept in ``lastCheckpointError`` and the next call recovers from the
    /// files.
    ///
    /// If writing or syncing the record fails, `commit` throws, the transaction is rolled back, and the
    /// record is cut off the log (durably) so that it can never be replayed: the database stays usable and
    /// holds exactly the commits that succeeded.
    public func commit() throws(BoxwoodError) {
        try checkUsable()
        guard transaction != nil else { throw .noActiveTransaction }
        if !transactionBuffers.isEmpty { try flushTransactionBuffers() }
        if record.operationCount == 0 {
            pager.commitTransaction()
            endTransaction()
            return
        }
        let sequence = state.version + 1
        let log = wal!  // a writable value box has its log (see `wal`), and a read-only one has no transaction to commit
        let previousEnd = log.size
        header?.writerIsChangingFiles = true
        do {
            try syncValuesWrittenOnce(before: log)
            try log.append(sequence: sequence, record: record.bytes, operationCount: record.operationCount, sync: options.durability == .full)
        } catch {
            // The record may be partly or wholly written (a failed fsync says nothing about what reached the
            // disk): roll the transaction back and cut the record off the log.
            rollBackTransaction()
            do throws(BoxwoodError) {
                try log.rollBack(to: previousEnd, sync: options.durability != .off)
                header?.writerIsChangingFiles = false
                endTransaction()
            } catch let rollbackError {
                // Keep the writer lock: no other writer may append after a record that must be cut off.
                transaction = nil
                pendingWALRollback = previousEnd
                failure = rollbackError
            }
            throw error
        }
        pager.commitTransaction()
        state.version = sequence
        transaction = nil
        record.clear()
        ownCommits.store(sequence, ordering: .releasing)
        publishState()
        checkpointAfterCommit(log)
        endTransaction()
    }

    /// Rolls back the transaction: nothing it did survives.
    public func abort() {
        guard transaction != nil else { return }
        rollBackTransaction()
        endTransaction()
    }

    /// Restores the state the transaction started from and drops the pages it made (the transaction stays
    /// formally open until `endTransaction`).
    func rollBackTransaction() {
        if let transaction { state = transaction.base }
        pager.abortTransaction()
        record.clear()
        transactionBuffers.removeAll()
    }

    /// Leaves the transaction: releases the writer lock (unless a failure keeps it) or the read pin.
    func endTransaction() {
        transaction = nil
        transactionBuffers.removeAll()
        versionAtLastTransaction = state.version
        if !isPinned { trimDecryptedPagesIfNeeded() }
        if options.readOnly { unpinSnapshot() } else if failure == nil { unlockWriter() }
    }

    /// Deletes every table (Postbox's `drop`), as one commit that every process sees, then checkpoints.
    /// The TransactionStateVersion keeps counting (other processes compare it to notice changes).
    public func drop() throws(BoxwoodError) {
        if isClosed { throw .closed }
        if options.readOnly { throw .readOnly(path: path) }
        if transaction != nil { abort() }
        endRead()
        try begin()
        do {
            for id in state.tables.keys.sorted() { try perform(.removeTable(table: id)) }
        } catch {
            abort()
            throw error
        }
        try commit()
        try checkpoint()
    }

    static let dataFileName = "data"
    static let walFileName = "wal"
    static let headerFileName = "header"
}
