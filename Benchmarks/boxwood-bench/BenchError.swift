import BoxwoodStore
import CLMDB
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Everything that stops a benchmark run. A run never reports a speed for an engine that failed or returned wrong
/// data: any of these ends it with exit status 1.
enum BenchError: Error, CustomStringConvertible {
    /// Boxwood refused an operation.
    case boxwood(BoxwoodError)
    /// SQLite returned an error code; `message` is `sqlite3_errmsg`.
    case sqlite(operation: String, message: String)
    /// LMDB returned an error code.
    case lmdb(operation: String, code: Int32)
    /// A system call failed.
    case io(operation: String, path: String, errno: Int32)
    /// An engine was asked for something it does not do (a harness bug, never a measured path).
    case unsupported(engine: EngineKind, operation: String)
    /// An engine returned data other than what was written.
    case verification(engine: EngineKind, workload: String, detail: String)
    /// Engines that must agree (the same reads of the same data) did not.
    case mismatch(workload: String, detail: String)

    var description: String {
        switch self {
        case let .boxwood(error):
            return "boxwood: \(error)"
        case let .sqlite(operation, message):
            return "sqlite: \(operation): \(message)"
        case let .lmdb(operation, code):
            return "lmdb: \(operation): \(String(cString: mdb_strerror(code)))"
        case let .io(operation, path, code):
            return "\(operation) \(path): \(String(cString: strerror(code)))"
        case let .unsupported(engine, operation):
            return "\(engine.rawValue) does not support \(operation)"
        case let .verification(engine, workload, detail):
            return "\(engine.rawValue) failed verification after \(workload): \(detail)"
        case let .mismatch(workload, detail):
            return "engines disagree on \(workload): \(detail)"
        }
    }
}
