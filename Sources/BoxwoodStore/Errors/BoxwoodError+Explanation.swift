import SystemPackage

extension BoxwoodError {
    /// An engine error explained for the person who meets it — the user of an app, or the developer reading its
    /// log: what is wrong, what can be done about it, and where.
    ///
    /// ```swift
    /// } catch let error as BoxwoodError {
    ///     let explanation = error.explanation
    ///     showAlert(title: explanation.problem, message: explanation.recoverySuggestion)
    ///     log(explanation.line)   // "cannot open: permission denied. … (/path/to/db/data)"
    /// }
    /// ```
    ///
    /// The texts are English sentences without a trailing period, written for any program that embeds Boxwood
    /// (they name no command-line tool). With the `Boxwood` module, `BoxwoodError` is also a `LocalizedError`
    /// built from this explanation.
    public struct Explanation: Equatable, Sendable {
        /// What is wrong, without the place: "cannot write: the disk is full (errno 28)".
        public let problem: String
        /// What the user or the app can do about it ("free some space and retry"), or nil when there is nothing
        /// to do but report the error (programming errors, unreadable versions).
        public let recoverySuggestion: String?
        /// The file or directory concerned — the database directory when the error concerns the database as a
        /// whole (a lock, the reader slots) — or nil for errors that concern no file (a key too large, say).
        public let place: String?
        /// The data-file page concerned, for damage found in one page; nil otherwise.
        public let page: UInt64?

        /// An explanation from its parts.
        public init(problem: String, recoverySuggestion: String? = nil, place: String? = nil, page: UInt64? = nil) {
            self.problem = problem
            self.recoverySuggestion = recoverySuggestion
            self.place = place
            self.page = page
        }

        /// The problem and what to do about it as one message: `<problem>; <recoverySuggestion>`.
        public var what: String {
            problem + (recoverySuggestion.map { "; " + $0 } ?? "")
        }

        /// The whole explanation on one line, for a log: `<what> (<place>)`.
        public var line: String {
            what + (place.map { " (\($0))" } ?? "")
        }

        /// The problem and its place as a sentence, for an alert's title or `localizedDescription`: "Cannot
        /// write: the disk is full (errno 28) (/path/to/db/wal)."
        public var problemSentence: String {
            Self.sentence(problem + (place.map { " (\($0))" } ?? ""))
        }

        /// The recovery suggestion as a sentence, for an alert's message: "Free some space and retry."
        public var recoverySuggestionSentence: String? {
            recoverySuggestion.map(Self.sentence)
        }

        /// `text` with a capital first letter and a final period.
        private static func sentence(_ text: String) -> String {
            guard let first = text.first else { return text }
            return first.uppercased() + text.dropFirst() + (text.hasSuffix(".") ? "" : ".")
        }
    }

    /// What is wrong, what can be done about it and where (see ``Explanation``).
    public var explanation: Explanation {
        switch self {
        case let .notABoxwoodDatabase(path, reason):
            let hint = reason.contains("holding") ? "" : "; a database is a directory holding the files 'data' and 'wal'"
            return Explanation(problem: "not a Boxwood database: \(reason)\(hint)", place: path)
        case let .lockTimeout(path, seconds):
            return Explanation(
                problem: "another process has held the write lock for more than \(Self.formatSeconds(seconds)) s. "
                    + "A writer that crashed releases it at once, so that process is still running (or hung); if it is stopped, "
                    + "nothing committed is lost (the next writer recovers from the WAL)",
                recoverySuggestion: "it is safe to retry", place: Self.databaseDirectory(of: path))
        case let .unsupportedFormatVersion(path, found, supported):
            let format = path.hasSuffix("/wal") ? "WAL format" : "data format"
            if found > supported {
                return Explanation(problem: "\(format) version \(found) is newer than this build supports (version \(supported))",
                                   recoverySuggestion: "open it with a newer version of Boxwood (update the app)", place: path)
            }
            return Explanation(problem: "\(format) version \(found) is not one this build reads (it supports version \(supported))", place: path)
        case let .readOnly(path):
            return Explanation(problem: "opened read-only; this operation needs write access", place: path)
        case let .io(operation, path, code):
            return Self.explainIO(operation: operation, path: path, errno: Errno(rawValue: code))
        case let .readerSlotsFull(path, slots):
            return Explanation(problem: "all \(slots) reader slots are taken by processes that have the database open",
                               recoverySuggestion: "close some and retry", place: Self.databaseDirectory(of: path))
        case let .incompatibleLockScheme(path):
            return Explanation(problem: "a process running an older Boxwood (lock scheme 1) has this database open",
                               recoverySuggestion: "close it first", place: path)
        case let .checksumMismatch(file, page, offset):
            let at = page.map { "page \($0), offset \(offset)" } ?? "offset \(offset)"
            return Explanation(problem: "checksum mismatch at \(at): the file is damaged", recoverySuggestion: Self.damageSuggestion,
                               place: file, page: page)
        case let .corrupted(file, page, reason):
            let at = page.map { " in page \($0)" } ?? ""
            return Explanation(problem: "damaged\(at): \(reason)", recoverySuggestion: Self.damageSuggestion, place: file, page: page)
        case let .suspended(path):
            return Explanation(problem: "the database is suspended (the app is in the background)", recoverySuggestion: "resume it first",
                               place: path)
        case let .symbolicLink(path):
            return Explanation(problem: "a symbolic link: Boxwood keeps its files in the database directory itself",
                               recoverySuggestion: "link the directory instead", place: path)
        case let .compactionFileBlocked(path):
            return Explanation(problem: "in the way: not a regular file, so compaction will not replace it",
                               recoverySuggestion: "remove it and compact again", place: path)
        case let .destinationExists(path):
            return Explanation(problem: "already exists; a backup is only written to a new path", place: path)
        case let .encryptionKeyRequired(path):
            return Explanation(problem: "the database is encrypted and no key was given",
                               recoverySuggestion: "open it with the key and salt it was created with", place: Self.databaseDirectory(of: path))
        case let .wrongKey(path):
            return Explanation(problem: "the database is encrypted under another key or salt",
                               recoverySuggestion: "open it with the key and salt it was created with; the files were not changed",
                               place: Self.databaseDirectory(of: path))
        case let .cryptographyFailed(operation, reason):
            return Explanation(problem: "\(operation) failed in the cryptography library: \(reason)")
        case let .fullTextLayoutMismatch(path, id, found, supported):
            return Explanation(
                problem: "full-text table \(id) was written in on-disk layout \(found); this version reads layout \(supported) only, so its results would be wrong",
                recoverySuggestion: "rebuild the index: fullTextReset clears it, then index the items again", place: path)
        case .keyTooLarge, .invalidInt64Key, .keyTypeMismatch, .noActiveTransaction, .transactionAlreadyActive, .closed,
             .transactionTooLarge, .outOfBounds, .invalidFullTextTable, .reservedTableId:
            // Programming errors: the description says what the caller did wrong, and no file is concerned.
            return Explanation(problem: description)
        }
    }

    /// What to do about a damaged file.
    private static let damageSuggestion = "restore the database from a backup, or salvage what is intact with ValueBox.salvage(from:to:)"

    /// A failed system call: permission, a read-only file system and a full disk in words, any other errno by
    /// its system message.
    private static func explainIO(operation: String, path: String, errno: Errno) -> Explanation {
        switch errno {
        case .permissionDenied, .notPermitted:
            return Explanation(problem: "cannot \(operation): permission denied. The database directory or its files are not writable by this user",
                               recoverySuggestion: "give this user write access, or open the database read-only", place: path)
        case .readOnlyFileSystem:
            return Explanation(problem: "cannot \(operation): the file system is read-only",
                               recoverySuggestion: "open the database read-only, or move it to a writable file system", place: path)
        case .noSpace:
            return Explanation(problem: "cannot \(operation): the disk is full (errno \(errno.rawValue))",
                               recoverySuggestion: "nothing committed is lost, free some space and retry", place: path)
        default:
            return Explanation(problem: "I/O error: \(operation) failed: \(errno.description) (errno \(errno.rawValue))", place: path)
        }
    }

    /// The database directory for a path inside it (`DB/header` → `DB`).
    private static func databaseDirectory(of path: String) -> String {
        for name in ["/header", "/data", "/wal"] where path.hasSuffix(name) { return String(path.dropLast(name.count)) }
        return path
    }

    /// Seconds without a needless `.0`.
    private static func formatSeconds(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int64(seconds)) : String(seconds)
    }
}
