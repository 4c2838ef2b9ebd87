import Boxwood
import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-line, user-facing explanation of an engine error: what is wrong and what the user can do.
func explain(_ error: BoxwoodError) -> String {
    switch error {
    case let .notABoxwoodDatabase(path, reason):
        let hint = reason.contains("holding") ? "" : "; a database is a directory holding the files 'data' and 'wal'"
        return "\(path) is not a Boxwood database (\(reason))\(hint)"
    case let .lockTimeout(path, seconds):
        return "\(databaseDirectory(of: path)): another process has held the write lock for more than \(formatSeconds(seconds)) s. "
            + "A writer that crashed releases it at once, so that process is still running (or hung); if it is stopped, "
            + "nothing committed is lost (the next writer recovers from the WAL). It is safe to retry, or raise --lock-timeout"
    case let .unsupportedFormatVersion(path, found, supported):
        let what = path.hasSuffix("/" + "wal") ? "WAL format" : "data format"
        if found > supported {
            return "\(path) uses \(what) version \(found), newer than this build supports (version \(supported)); use a newer boxwood"
        }
        return "\(path) uses \(what) version \(found), which this build does not read (it supports version \(supported))"
    case let .readOnly(path):
        return "\(path) is opened read-only; this operation needs write access"
    case let .io(operation, path, code) where code == EACCES || code == EPERM:
        return "cannot \(operation) \(path): permission denied. The database directory or its files are not writable "
            + "by this user; read-only commands (stat, dump, check, search, history) still work"
    case let .io(operation, path, code) where code == EROFS:
        return "cannot \(operation) \(path): the file system is read-only; read-only commands (stat, dump, check, search, history) still work"
    case let .io(operation, path, code):
        return "I/O error: \(operation) failed on \(path): \(String(cString: strerror(code))) (errno \(code))"
    case let .readerSlotsFull(path, slots):
        return "\(databaseDirectory(of: path)): all \(slots) reader slots are taken by processes that have the database open; close some and retry"
    case .checksumMismatch, .corrupted:
        return error.description + " (run `boxwood check` for a full report)"
    default:
        return error.description
    }
}

/// A one-line explanation of any error the tool can meet: engine errors (``explain(_:)``), Postbox errors and
/// decoding errors of a sync database at `path`.
func explain(_ error: any Error, database path: String) -> String {
    switch error {
    case let error as BoxwoodError:
        return explain(error)
    case let error as PostboxError:
        switch error {
        case let .newerUserVersion(found, supported):
            return "\(path) has Postbox schema version \(found), newer than this build supports (version \(supported)); use a newer boxwood"
        case let .noUpgradePath(from, to):
            return "\(path) has Postbox schema version \(from), which this build cannot read (it supports version \(to))"
        default:
            return "\(path): \(error)"
        }
    case let error as PostboxDecodingError:
        return "\(path): stored data could not be decoded (\(error)); it was written by a newer version or is not a sync database"
    default:
        return "\(path): \(error)"
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
