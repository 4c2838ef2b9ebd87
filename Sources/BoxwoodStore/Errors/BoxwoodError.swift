import SystemPackage

/// Every error the storage engine reports. The engine never traps on bad input or a bad file: it throws one
/// of these, and the database stays usable (or, for a damaged file, refuses to open with a precise reason).
public enum BoxwoodError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A key is longer than ``ValueBox/maxKeySize``.
    case keyTooLarge(length: Int, limit: Int)
    /// A key of an `int64` table is not exactly 8 bytes.
    case invalidInt64Key(length: Int)
    /// The path exists but holds something that is not a Boxwood database.
    case notABoxwoodDatabase(path: String, reason: String)
    /// The database was written by a newer (or unknown) format version.
    case unsupportedFormatVersion(path: String, found: UInt32, supported: UInt32)
    /// A checksum did not match. `page` is the page number for data-file pages, `offset` the byte offset.
    case checksumMismatch(file: String, page: UInt64?, offset: UInt64)
    /// A structure failed a consistency check (bad page type, impossible length, broken tree shape).
    case corrupted(file: String, page: UInt64?, reason: String)
    /// A system call failed.
    case io(operation: String, path: String, errno: Int32)
    /// A table was used with a key type other than the one it was created with.
    case keyTypeMismatch(table: Int32, existing: String, requested: String)
    /// A mutation was attempted outside `begin()` / `commit()`.
    case noActiveTransaction
    /// `begin()` was called while a transaction was already open.
    case transactionAlreadyActive
    /// Another value box (in this or another process) kept the writer lock longer than
    /// ``ValueBoxOptions/lockTimeout``.
    case lockTimeout(path: String, seconds: Double)
    /// Every reader slot of the shared header is owned by a live value box.
    case readerSlotsFull(path: String, slots: Int)
    /// A process running an older Boxwood (shared-header lock scheme 1) has the database open; the two schemes do
    /// not exclude each other, so this one refuses to open until that process closes it.
    case incompatibleLockScheme(path: String)
    /// The value box was closed.
    case closed
    /// The value box is suspended (``ValueBox/suspend()``) until ``ValueBox/resume()``.
    case suspended(path: String)
    /// A transaction's operations do not fit one WAL record (`bytes` of payload; the format's limit is 4 GiB).
    /// Nothing was written; split the work into several transactions.
    case transactionTooLarge(bytes: Int, limit: Int)
    /// A partial write (`readWrite`) addressed bytes outside the value.
    case outOfBounds(offset: Int, length: Int, valueLength: Int)
    /// The operation is not allowed on a database opened read-only.
    case readOnly(path: String)
    /// A ``ValueBoxFullTextTable`` id outside `0..<ValueBoxFullTextTable.idLimit`.
    case invalidFullTextTable(id: Int32)
    /// The full-text table `id` of the database at `path` was written in on-disk layout `found`, which this
    /// version does not read (it reads layout `supported`). Its results would be wrong, so every call on it
    /// throws; rebuild it: `fullTextReset` (module BoxwoodFullText) clears it, then index the items again.
    case fullTextLayoutMismatch(path: String, id: Int32, found: UInt32, supported: UInt32)
    /// A ``ValueBoxTable`` id below zero: negative ids are reserved for the engine's own tables (the full-text
    /// index keeps its data there), so a caller's table could overwrite them.
    case reservedTableId(id: Int32)
    /// One of the database's files (`data`, `wal` or `header`) is a symbolic link. Boxwood refuses it rather than
    /// follow it: compaction renames a new data file over the name, which would replace the link and leave its
    /// target — with every value secure delete had scrubbed — behind. Keep the files in the database directory
    /// (link the directory instead).
    case symbolicLink(path: String)
    /// Something other than a regular file has the name compaction writes its new data file under
    /// (`data.compact`): compaction does not remove or write through what it did not create. Opening ignores it.
    case compactionFileBlocked(path: String)
    /// A backup (or another command that creates a new database) was given a destination that already exists:
    /// nothing is ever written over it.
    case destinationExists(path: String)
    /// The database is encrypted and was opened without ``ValueBoxOptions/encryption``.
    case encryptionKeyRequired(path: String)
    /// The encryption key or salt given is not the one the database was encrypted with (the key check value in
    /// the data file's header does not match). Nothing was read or changed.
    case wrongKey(path: String)
    /// The cryptography library refused an operation (not expected with the engine's fixed key and nonce sizes).
    case cryptographyFailed(operation: String, reason: String)

    /// True for the errors of a database this key cannot open: ``wrongKey(path:)`` and
    /// ``encryptionKeyRequired(path:)`` (what Postbox's `removeDatabaseOnError` wipes and recreates).
    public var isUndecryptable: Bool {
        switch self {
        case .wrongKey, .encryptionKeyRequired: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case let .keyTooLarge(length, limit):
            return "key too large: \(length) bytes (limit \(limit))"
        case let .invalidInt64Key(length):
            return "int64 table keys must be 8 bytes, got \(length)"
        case let .notABoxwoodDatabase(path, reason):
            return "\(path) is not a Boxwood database: \(reason)"
        case let .unsupportedFormatVersion(path, found, supported):
            return "\(path) uses format version \(found); this build supports up to \(supported)"
        case let .checksumMismatch(file, page, offset):
            if let page { return "checksum mismatch in \(file), page \(page) (offset \(offset))" }
            return "checksum mismatch in \(file) at offset \(offset)"
        case let .corrupted(file, page, reason):
            if let page { return "corrupted \(file), page \(page): \(reason)" }
            return "corrupted \(file): \(reason)"
        case let .io(operation, path, code):
            return "\(operation) failed on \(path): \(Errno(rawValue: code).description) (errno \(code))"
        case let .keyTypeMismatch(table, existing, requested):
            return "table \(table) has key type \(existing), used as \(requested)"
        case .noActiveTransaction:
            return "mutation outside a transaction (call begin() first)"
        case .transactionAlreadyActive:
            return "a transaction is already active"
        case let .lockTimeout(path, seconds):
            return "\(path): another writer held the write lock for more than \(seconds) s"
        case let .readerSlotsFull(path, slots):
            return "\(path): all \(slots) reader slots are in use by open value boxes"
        case let .incompatibleLockScheme(path):
            return "\(path): a process running an older Boxwood (lock scheme 1) has this database open; close it first"
        case .closed:
            return "the value box is closed"
        case let .suspended(path):
            return "\(path) is suspended (the app is in the background); call resume() first"
        case let .transactionTooLarge(bytes, limit):
            return "transaction too large: \(bytes) bytes of operations, the limit of one commit is \(limit)"
        case let .outOfBounds(offset, length, valueLength):
            return "\(length) bytes at offset \(offset) are outside a value of \(valueLength) bytes"
        case let .readOnly(path):
            return "\(path) is open read-only"
        case let .invalidFullTextTable(id):
            return "full-text table id \(id) is outside 0..<\(1 << 27)"   // ValueBoxFullTextTable.idLimit (BoxwoodFullText)
        case let .fullTextLayoutMismatch(path, id, found, supported):
            return "full-text table \(id) of \(path) has on-disk layout \(found), this version reads layout \(supported) only; rebuild the index (fullTextReset, then index the items again)"
        case let .reservedTableId(id):
            return "table id \(id) is reserved: negative table ids belong to the engine (use ids from 0 up)"
        case let .symbolicLink(path):
            return "\(path) is a symbolic link; Boxwood keeps its files in the database directory itself (compaction would replace the link and leave the old file unscrubbed)"
        case let .compactionFileBlocked(path):
            return "\(path) is in the way: it is not a regular file, so compaction will not replace it; remove it and compact again"
        case let .destinationExists(path):
            return "\(path) already exists; a backup is only written to a new path"
        case let .encryptionKeyRequired(path):
            return "\(path) is encrypted; open it with its encryption key and salt"
        case let .wrongKey(path):
            return "\(path) is encrypted under another key or salt (the key check value does not match)"
        case let .cryptographyFailed(operation, reason):
            return "\(operation) failed: \(reason)"
        }
    }
}
