#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Boxwood's ValueBox: tables of ordered key/value pairs in one database directory, with Postbox's
/// semantics (see `docs/architecture.md`). A database is a directory holding `data` (the page file) and
/// `wal` (the write-ahead log).
///
/// Not thread-safe: like Postbox, use one instance from one serial queue. Mutations happen between
/// ``begin()`` and ``commit()`` (or ``abort()``); reads work inside or outside a transaction and see the
/// transaction's own changes.
public final class ValueBox {
    /// The longest key accepted.
    public static let maxKeySize = 1280
    /// The data file format version this build reads and writes.
    public static let formatVersion = MetaPage.formatVersion

    /// The database directory.
    public let path: String
    /// The options it was opened with.
    public let options: ValueBoxOptions

    let fileSystem: StorageFileSystem
    var dataFile: StorageFile!
    @exclusivity(unchecked) var pager: Pager!
    var wal: WriteAheadLog?

    /// The meta of the last checkpoint (the durable state of the data file).
    var meta: MetaPage!
    /// Pages of the durable catalog tree (freed by the next checkpoint, which writes a new one).
    var catalogPages: [UInt64] = []

    /// Every table, by id.
    @exclusivity(unchecked) var tables: [Int32: TableState] = [:]
    /// `tables` as of `begin()`, restored by `abort()`.
    var tablesAtBegin: [Int32: TableState] = [:]
    /// TransactionStateVersion of the last commit.
    var lastSequence: UInt64 = 0

    @exclusivity(unchecked) var inTransaction = false
    /// The open transaction's WAL record: `WriteAheadLog.recordHeaderSize` reserved bytes, then operations.
    let record = ByteBuffer(capacity: 64 << 10)
    @exclusivity(unchecked) var recordOperations: UInt32 = 0
    /// True while replaying the WAL (operations are applied but not logged again).
    @exclusivity(unchecked) var replaying = false
    /// Set after a failed write or sync: the in-memory state can no longer be trusted to match the files.
    /// The next call recovers (see `ValueBox+Recovery.swift`) before doing anything else.
    @exclusivity(unchecked) var failure: BoxwoodError?
    /// A failed commit whose WAL record could not be cut off yet: the log must end here before anything else.
    var pendingWALRollback: UInt64?
    /// A checkpoint meta whose write or sync failed after its pages were made durable: it is written and
    /// synced again before the files are trusted (after a failed fsync the page cache may hold bytes the
    /// disk does not).
    var pendingMeta: MetaPage?

    /// The error of the last automatic checkpoint that failed after its commit had already succeeded (the
    /// commit stands; the database recovered from its files). Nil when the last automatic checkpoint worked.
    public internal(set) var lastCheckpointError: BoxwoodError?
    @exclusivity(unchecked) var isClosed = false

    let path_ = TreePath()
    let cellBuffer = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)

    /// Opens (creating when missing) the database directory at `path`, recovering from the WAL.
    public init(path: String, options: ValueBoxOptions = ValueBoxOptions(), fileSystem: StorageFileSystem = PosixFileSystem.shared) throws(BoxwoodError) {
        self.path = path
        self.options = options
        self.fileSystem = fileSystem
        do {
            try open()
        } catch {
            releaseFiles()
            throw error
        }
    }

    deinit {
        if !isClosed { try? close() }
        cellBuffer.deallocate()
    }

    /// Aborts an open transaction, checkpoints (unless read-only or failed) and closes the files.
    public func close() throws(BoxwoodError) {
        if isClosed { return }
        if inTransaction { abort() }
        var closeError: BoxwoodError? = nil
        if failure == nil && !options.readOnly {
            do { try checkpoint() } catch { closeError = error }
        } else if failure != nil, pendingWALRollback != nil {
            // A failed commit's record may still be in the log: cut it off one last time.
            do { try recoverFromFailure() } catch { closeError = error }
        }
        releaseFiles()
        failure = nil
        if let closeError { throw closeError }
    }

    func releaseFiles() {
        isClosed = true
        pager = nil
        dataFile?.close()
        wal?.file.close()
        dataFile = nil
        wal = nil
    }

    /// The number of non-empty transactions committed since the database was created. Costs no I/O.
    public var transactionStateVersion: UInt64 { lastSequence }

    /// True between `begin()` and `commit()`/`abort()`.
    public var isInTransaction: Bool { inTransaction }

    func checkUsable() throws(BoxwoodError) {
        if failure != nil { try recoverFromFailure() }
        if isClosed { throw .closed }
    }

    func checkWritable() throws(BoxwoodError) {
        try checkUsable()
        if options.readOnly { throw .readOnly(path: path) }
        if !inTransaction { throw .noActiveTransaction }
    }

    // MARK: Transactions

    /// Starts a transaction.
    public func begin() throws(BoxwoodError) {
        try checkUsable()
        if inTransaction { throw .transactionAlreadyActive }
        beginInternal()
    }

    func beginInternal() {
        inTransaction = true
        tablesAtBegin = tables
        record.reset()
        record.reserve(WriteAheadLog.recordHeaderSize)
        record.append(UnsafeRawPointer(cellBuffer), WriteAheadLog.recordHeaderSize)
        recordOperations = 0
    }

    /// Commits the transaction: appends its WAL record (synced in `.full` mode) and makes its changes
    /// visible. A transaction that changed nothing writes nothing and does not bump the version.
    /// May run a checkpoint afterwards; if that checkpoint fails the commit still stands (it is in the WAL),
    /// the error is kept in ``lastCheckpointError`` and the next call recovers from the files.
    ///
    /// If writing or syncing the record fails, `commit` throws, the transaction is rolled back, and the
    /// record is cut off the log (durably) so that it can never be replayed: the database stays usable and
    /// holds exactly the commits that succeeded.
    public func commit() throws(BoxwoodError) {
        try checkUsable()
        guard inTransaction else { throw .noActiveTransaction }
        if recordOperations == 0 {
            pager.commitTransaction()
            inTransaction = false
            return
        }
        let sequence = lastSequence + 1
        let log = wal!
        let previousEnd = log.size
        do {
            try log.append(sequence: sequence, record: record, operationCount: recordOperations, sync: options.durability == .full)
        } catch {
            // The record may be partly or wholly written (a failed fsync says nothing about what reached the
            // disk): roll the transaction back and cut the record off the log.
            abort()
            do throws(BoxwoodError) {
                try log.rollBack(to: previousEnd, sync: options.durability != .off)
            } catch let rollbackError {
                pendingWALRollback = previousEnd
                failure = rollbackError
            }
            throw error
        }
        pager.commitTransaction()
        lastSequence = sequence
        inTransaction = false
        record.reset()
        record.shrinkIfLarge()
        if wal!.size >= options.checkpointWALBytes
            || pager.liveDirtyPages * PageLayout.pageSize + pager.liveBlobBytes >= options.checkpointMemoryBytes {
            do {
                try checkpoint()
                lastCheckpointError = nil
            } catch {
                lastCheckpointError = error
            }
        }
    }

    /// Rolls back the transaction: nothing it did survives.
    public func abort() {
        guard inTransaction else { return }
        tables = tablesAtBegin
        pager.abortTransaction()
        inTransaction = false
        record.reset()
    }

    /// Deletes every table and starts over with an empty database (Postbox's `drop`).
    public func drop() throws(BoxwoodError) {
        if isClosed { throw .closed }
        if options.readOnly { throw .readOnly(path: path) }
        if inTransaction { abort() }
        releaseFiles()
        failure = nil
        pendingWALRollback = nil
        pendingMeta = nil
        try fileSystem.removeFile(path + "/" + ValueBox.walFileName)
        try fileSystem.removeFile(path + "/" + ValueBox.dataFileName)
        try fileSystem.syncDirectory(path)
        try reopen()
    }

    static let dataFileName = "data"
    static let walFileName = "wal"
}
