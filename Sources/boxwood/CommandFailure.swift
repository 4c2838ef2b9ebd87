import ArgumentParser
import Boxwood
import BoxwoodStore

/// Exit codes shared by the subcommands (listed in `boxwood --help` and the README).
enum ExitStatus {
    /// Success.
    static let ok: Int32 = 0
    /// A failure (engine or I/O error), or what was asked for is not there (a key, a table, a chat).
    static let failure: Int32 = 1
    /// Bad input or usage: an argument, a key or a dump line that does not parse, a path that is not a database,
    /// a destination that already exists.
    static let badInput: Int32 = 2
    /// The database is damaged: a checksum or structure check failed (`check` found problems).
    static let damaged: Int32 = 3
    /// The database is locked: another process held the write lock past the timeout, or every reader slot is taken.
    static let locked: Int32 = 4

    /// The line `--help` shows.
    static let summary = "Exit codes: 0 ok, 1 failure or not found, 2 bad input or usage, 3 database damaged, 4 locked or timed out."
}

/// Why a subcommand failed: what went wrong, where (a path, maybe with a page), and the exit code. Subcommands
/// throw it; ``BoxwoodCommand/main()`` reports it — the one error contract of the tool:
///
/// - as one line on stderr, `boxwood: <what> (<where>)`;
/// - with `--json` (a command conforming to ``JSONOutput`` with the flag set), as one object on stdout,
///   `{"error": {"code": <exit code>, "message": "<what>", "path": "<where>"}}` (`path` null when there is none),
///   and nothing on stderr.
struct CommandFailure: Error {
    /// The exit code (``ExitStatus``).
    let status: Int32
    /// What went wrong, and what the user can do: one sentence or two, no trailing period.
    let message: String
    /// Where: the file or directory concerned (and a page or offset when there is one), or nil.
    let place: String?

    init(status: Int32, _ message: String, place: String?) {
        self.status = status
        self.message = message
        self.place = place
    }

    /// An engine error met while working on `database` (the place when the error names none).
    init(_ error: BoxwoodError, database: String? = nil) {
        let described = describe(error)
        self.init(status: CommandFailure.status(for: error), described.what, place: described.place ?? database)
    }

    /// Any error the tool can meet while working on the database at `database`: engine errors, Postbox errors,
    /// decoding errors of a sync database.
    init(anyError error: any Error, database: String) {
        if let failure = error as? CommandFailure {
            self = failure
        } else if let error = error as? BoxwoodError {
            self.init(error, database: database)
        } else {
            self.init(status: ExitStatus.failure, explainNonEngine(error), place: database)
        }
    }

    /// The exit code for an engine error.
    static func status(for error: BoxwoodError) -> Int32 {
        switch error {
        case let .notABoxwoodDatabase(_, reason) where reason == "no such directory":
            return ExitStatus.failure   // not found
        case .corrupted, .checksumMismatch:
            return ExitStatus.damaged
        case .lockTimeout, .readerSlotsFull, .incompatibleLockScheme:
            return ExitStatus.locked
        case .keyTooLarge, .invalidInt64Key, .keyTypeMismatch, .reservedTableId, .outOfBounds, .invalidFullTextTable,
             .notABoxwoodDatabase, .destinationExists, .symbolicLink, .wrongKey, .encryptionKeyRequired:
            return ExitStatus.badInput
        default:
            return ExitStatus.failure
        }
    }

    /// The line for stderr: `boxwood: <what> (<where>)`.
    var line: String {
        "boxwood: " + message + (place.map { " (\($0))" } ?? "")
    }

    /// The object for stdout under `--json`.
    var json: String {
        "{\"error\": {\"code\": \(status), \"message\": \(jsonString(message)), \"path\": \(place.map(jsonString) ?? "null")}}"
    }

    /// Reports the failure as the contract says.
    func report(json: Bool) {
        if json {
            print(self.json)
            flushStdout()
        } else {
            writeStderr(line)
        }
    }
}

/// A subcommand with a `--json` flag: its errors are reported as JSON too.
protocol JSONOutput {
    var json: Bool { get }
}

/// Runs an engine call on the database at `database`, turning a `BoxwoodError` into a ``CommandFailure``.
func engine<T>(_ database: String, _ body: () throws(BoxwoodError) -> T) throws(CommandFailure) -> T {
    do {
        return try body()
    } catch {
        throw CommandFailure(error, database: database)
    }
}
