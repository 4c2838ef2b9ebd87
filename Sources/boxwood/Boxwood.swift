import ArgumentParser
import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `boxwood` command-line tool: inspect, dump, load and verify Boxwood databases, and run a storage demo.
///
/// Exit codes: 0 success, 1 failure (engine or I/O error, `check` found problems), 2 bad input or usage.
/// Every failure prints one message on stderr; the tool never traps.
@main
struct BoxwoodCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "boxwood",
        abstract: "Inspect, dump, load, verify and watch Boxwood databases; search and read synced chats.",
        discussion: "A database is a directory holding the files 'data' and 'wal'. Exit codes: 0 ok, 1 failure, 2 bad input or usage.",
        subcommands: [Stat.self, Dump.self, Load.self, Check.self, Compact.self, Recover.self, Watch.self, Search.self, History.self, Demo.self, Workload.self]
    )

    /// Parses and runs like `ParsableCommand.main()`, except that usage errors exit with 2 (not 64).
    static func main() {
        // A closed pipe becomes a write error (reported, exit 1) instead of a kill by SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                writeStderr(fullMessage(for: error))
                fflush(nil)
                exitProcess(ExitStatus.badInput)
            }
            fflush(nil)
            exit(withError: error)
        }
    }
}

/// Exit codes shared by the subcommands.
enum ExitStatus {
    static let failure: Int32 = 1
    static let badInput: Int32 = 2
}

/// Writes a message line to stderr, prefixed with `boxwood: `.
func printError(_ message: String) {
    writeStderr("boxwood: " + message)
}

/// Writes `message` and a newline (unless it ends with one) to stderr, unbuffered, after flushing stdout (and
/// erasing a progress bar).
func writeStderr(_ message: String) {
    ProgressBar.active?.clear()
    fflush(nil)
    writeAll(2, message.hasSuffix("\n") ? message : message + "\n")
}

/// Flushes stdout (after a progress line).
func flushStdout() {
    fflush(nil)
}

extension ValueBox {
    /// `set` with the bytes of an array, keeping the engine's typed error.
    func set(_ table: ValueBoxTable, key: ValueBoxKey, array: [UInt8]) throws(BoxwoodError) {
        let failure: BoxwoodError? = array.withUnsafeBytes { raw -> BoxwoodError? in
            do throws(BoxwoodError) { try set(table, key: key, bytes: raw) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }
}

/// Writes every byte to a file descriptor (unbuffered).
func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
    var offset = 0
    while offset < bytes.count {
        let n = systemWrite(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            return
        }
        offset += n
    }
}

/// Writes a string to a file descriptor (unbuffered).
func writeAll(_ fd: Int32, _ text: String) {
    var text = text
    text.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
}

/// `n` and a noun, plural unless `n` is 1: `1 table`, `3 entries` (nouns ending in "y" after a consonant
/// take "ies").
func counted(_ n: Int, _ noun: String) -> String {
    if n == 1 { return "\(n) \(noun)" }
    if noun.hasSuffix("y"), let before = noun.dropLast().last, !"aeiou".contains(before) { return "\(n) \(noun.dropLast())ies" }
    return "\(n) \(noun)s"
}

/// Minimal JSON string escaping for the `--json` outputs.
func jsonString(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        default:
            if scalar.value < 0x20 {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}

/// Ends the process with `code`.
func exitProcess(_ code: Int32) -> Never {
    #if canImport(Glibc)
    Glibc.exit(code)
    #else
    Darwin.exit(code)
    #endif
}
