import Boxwood
import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A user-facing explanation of an engine error: what is wrong and what the user can do (`what`), and the file or
/// directory concerned, with a page when there is one (`place`; nil for errors that name none).
func describe(_ error: BoxwoodError) -> (what: String, place: String?) {
    switch error {
    case let .notABoxwoodDatabase(path, reason):
        let hint = reason.contains("holding") ? "" : "; a database is a directory holding the files 'data' and 'wal'"
        return ("not a Boxwood database: \(reason)\(hint)", path)
    case let .lockTimeout(path, seconds):
        return ("another process has held the write lock for more than \(formatSeconds(seconds)) s. "
                + "A writer that crashed releases it at once, so that process is still running (or hung); if it is stopped, "
                + "nothing committed is lost (the next writer recovers from the WAL). It is safe to retry, or raise --lock-timeout",
                databaseDirectory(of: path))
    case let .unsupportedFormatVersion(path, found, supported):
        let what = path.hasSuffix("/" + "wal") ? "WAL format" : "data format"
        if found > supported {
            return ("\(what) version \(found) is newer than this build supports (version \(supported)); use a newer boxwood", path)
        }
        return ("\(what) version \(found) is not one this build reads (it supports version \(supported))", path)
    case let .readOnly(path):
        return ("opened read-only; this operation needs write access", path)
    case let .io(operation, path, code) where code == EACCES || code == EPERM:
        return ("cannot \(operation): permission denied. The database directory or its files are not writable "
                + "by this user; read-only commands (stat, dump, check, search, history) still work", path)
    case let .io(operation, path, code) where code == EROFS:
        return ("cannot \(operation): the file system is read-only; read-only commands (stat, dump, check, search, history) still work", path)
    case let .io(operation, path, code) where code == ENOSPC:
        return ("cannot \(operation): the disk is full (errno \(code)); nothing committed is lost, free some space and retry", path)
    case let .io(operation, path, code):
        return ("I/O error: \(operation) failed: \(String(cString: strerror(code))) (errno \(code))", path)
    case let .readerSlotsFull(path, slots):
        return ("all \(slots) reader slots are taken by processes that have the database open; close some and retry", databaseDirectory(of: path))
    case let .incompatibleLockScheme(path):
        return ("a process running an older Boxwood (lock scheme 1) has this database open; close it first", path)
    case let .checksumMismatch(file, page, offset):
        let at = page.map { "page \($0), offset \(offset)" } ?? "offset \(offset)"
        return ("checksum mismatch at \(at): the file is damaged (run `boxwood check` for a full report, `boxwood recover` to salvage)", file)
    case let .corrupted(file, page, reason):
        let at = page.map { " in page \($0)" } ?? ""
        return ("damaged\(at): \(reason) (run `boxwood check` for a full report, `boxwood recover` to salvage)", file)
    case let .suspended(path):
        return ("the database is suspended (the app is in the background); resume it first", path)
    case let .symbolicLink(path):
        return ("a symbolic link: Boxwood keeps its files in the database directory itself (link the directory instead)", path)
    case let .compactionFileBlocked(path):
        return ("in the way: not a regular file, so compaction will not replace it; remove it and compact again", path)
    case let .destinationExists(path):
        return ("already exists; a backup is only written to a new path", path)
    case .keyTooLarge, .invalidInt64Key, .keyTypeMismatch, .noActiveTransaction, .transactionAlreadyActive, .closed,
         .transactionTooLarge, .outOfBounds, .invalidFullTextTable, .reservedTableId:
        return (error.description, nil)
    }
}

/// `describe` as one line, `<what> (<where>)`: for notes and for messages that add their own context.
func explain(_ error: BoxwoodError) -> String {
    let described = describe(error)
    return described.what + (described.place.map { " (\($0))" } ?? "")
}

/// A one-line explanation of an error of the layers above the engine, met on a sync database: Postbox errors and
/// decoding errors.
func explainNonEngine(_ error: any Error) -> String {
    switch error {
    case let error as PostboxError:
        switch error {
        case let .newerUserVersion(found, supported):
            return "Postbox schema version \(found) is newer than this build supports (version \(supported)); use a newer boxwood"
        case let .noUpgradePath(from, to):
            return "Postbox schema version \(from) is not one this build reads (it supports version \(to))"
        default:
            return "\(error)"
        }
    case let error as PostboxDecodingError:
        return "stored data could not be decoded (\(error)); it was written by a newer version or is not a sync database"
    default:
        return "\(error)"
    }
}

/// The database directory for a path inside it (`DB/header` → `DB`).
private func databaseDirectory(of path: String) -> String {
    for name in ["/header", "/data", "/wal"] where path.hasSuffix(name) { return String(path.dropLast(name.count)) }
    return path
}

/// Seconds without a needless `.0`.
private func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int64(seconds)) : String(seconds)
}
