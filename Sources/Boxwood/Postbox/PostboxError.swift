/// Errors of the Postbox layer itself (the storage engine's are `BoxwoodError`, the coder's
/// ``PostboxDecodingError``; they pass through unchanged).
public enum PostboxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A ``Transaction`` was used after its transaction ended.
    case transactionEnded
    /// The database was written by a newer schema (user version) than this build knows.
    case newerUserVersion(found: Int32, supported: Int32)
    /// No registered upgrade step starts at this user version.
    case noUpgradePath(from: Int32, to: Int32)
    /// An upgrade step did not end at a higher version than it started from.
    case invalidUpgrade(from: Int32, to: Int32)
    /// The Postbox was closed.
    case closed
    /// The Postbox is suspended (``Postbox/suspend()``) until ``Postbox/resume()``.
    case suspended

    public var description: String {
        switch self {
        case .transactionEnded: return "the transaction has ended; a Transaction must not escape its closure"
        case .suspended: return "the Postbox is suspended (the app is in the background); call resume() first"
        case let .newerUserVersion(found, supported):
            return "the database has user version \(found); this build supports up to \(supported)"
        case let .noUpgradePath(from, to): return "no upgrade step from user version \(from) (current \(to))"
        case let .invalidUpgrade(from, to): return "upgrade step from user version \(from) goes to \(to)"
        case .closed: return "the postbox is closed"
        }
    }
}
