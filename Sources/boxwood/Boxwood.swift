import ArgumentParser
import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `boxwood` command-line tool: inspect, dump, load, verify, back up and watch Boxwood databases, and run a
/// storage demo.
///
/// Every failure is reported one way (``CommandFailure``): one line `boxwood: <what> (<where>)` on stderr, or with
/// `--json` an `{"error": {...}}` object on stdout; exit codes are ``ExitStatus``. The tool never traps.
@main
struct BoxwoodCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "boxwood",
        abstract: "Inspect, dump, load, verify, back up and watch Boxwood databases; search and read synced chats.",
        discussion: "A database is a directory holding the files 'data' and 'wal'. " + ExitStatus.summary
            + " Errors: one line 'boxwood: <what> (<where>)' on stderr; with --json, {\"error\": {\"code\", \"message\", \"path\"}} on stdout.",
        version: ToolVersion.line,
        subcommands: [Stat.self, Dump.self, Load.self, Check.self, Compact.self, Backup.self, Recover.self, Readers.self, Watch.self, Search.self, History.self,
                      Demo.self, Workload.self, Get.self, Put.self, Del.self, Tables.self, Rekey.self]
    )

    /// Parses and runs like `ParsableCommand.main()`, except that usage errors exit with 2 (not 64) and a
    /// ``CommandFailure`` is reported by the error contract.
    static func main() {
        // A closed pipe becomes a write error (reported, exit 1) instead of a kill by SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        var command: ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            if exitCode(for: error) == .validationFailure {
                writeStderr(fullMessage(for: error))
                fflush(nil)
                exitProcess(ExitStatus.badInput)
            }
            fflush(nil)
            exit(withError: error)
        }
        do {
            try command.run()
        } catch let failure as CommandFailure {
            failure.report(json: (command as? JSONOutput)?.json ?? false)
            fflush(nil)
            exitProcess(failure.status)
        } catch {
            fflush(nil)
            exit(withError: error)
        }
    }
}

/// Writes a note (not an error: errors are ``CommandFailure``s) to stderr, prefixed with `boxwood: `.
func printNote(_ message: String) {
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
