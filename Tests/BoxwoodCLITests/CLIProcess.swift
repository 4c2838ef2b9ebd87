import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A `boxwood` process started in the background (for `watch`), its stdout and stderr captured in files that
/// the test polls.
final class RunningCLI {
    let process = Process()
    private let scratch: TempDir
    private let outURL: URL
    private let errURL: URL

    private let stdinPipe: Pipe?

    /// Starts `boxwood args...`; stdin is empty, or (with `feedsStdin`) a pipe that ``writeStdin(_:)`` feeds.
    init(_ args: [String], feedsStdin: Bool = false) throws {
        guard let binary = CLI.binary else {
            Issue.record("the boxwood executable was not found; run `swift build` before `swift test` (or set BOXWOOD_BIN)")
            throw CLIError.missingBinary
        }
        scratch = try TempDir()
        outURL = scratch.url.appendingPathComponent("stdout")
        errURL = scratch.url.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.executableURL = binary
        process.arguments = args
        stdinPipe = feedsStdin ? Pipe() : nil
        process.standardInput = stdinPipe ?? FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        try process.run()
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// Writes to the process's stdin (started with `feedsStdin`).
    func writeStdin(_ text: String) {
        stdinPipe?.fileHandleForWriting.write(Data(text.utf8))
    }

    var output: String { (try? String(contentsOf: outURL, encoding: .utf8)) ?? "" }
    var errors: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    /// Polls stdout until `condition` holds; false after `timeout` seconds (or when the process ended first
    /// without it holding).
    func waitForOutput(timeout: Double = 20, _ condition: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(output) { return true }
            if !process.isRunning { return condition(output) }
            usleep(10_000)
        }
        return false
    }

    /// Waits for the process to exit; false after `timeout` seconds.
    func waitForExit(timeout: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { return false }
        process.waitUntilExit()
        return true
    }
}

extension CLI {
    /// The path of `setpriv` when this process can use it to run a command as another user (it runs as root),
    /// else nil.
    static let setpriv: String? = {
        guard getuid() == 0 else { return nil }
        return ["/usr/bin/setpriv", "/bin/setpriv"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Runs `boxwood args...` as the unprivileged user `nobody` (uid and gid 65534) through `setpriv`, so that
    /// file permissions apply even though the tests run as root.
    static func runAsNobody(_ args: [String], input: String = "") throws -> CLIResult {
        guard let setpriv, let binary else { throw CLIError.missingBinary }
        return try run(["--reuid=65534", "--regid=65534", "--clear-groups", binary.path] + args, stdin: Data(input.utf8),
                       executable: URL(fileURLWithPath: setpriv))
    }

    /// Runs `boxwood args...` with stderr on a pseudo-terminal (so that it draws progress bars) and stdout in
    /// a file. Returns the result with everything written to the terminal as `stderr`.
    static func runWithTerminalStderr(_ args: [String], stdin: Data = Data(), environment: [String: String] = [:]) throws -> CLIResult {
        var master: Int32 = -1
        var slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw CLIError.missingBinary }
        defer { close(master) }
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        var terminal = Data()
        let drain = {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = read(master, &buffer, buffer.count)
                if n <= 0 { break }
                terminal.append(contentsOf: buffer[0..<n])
            }
        }
        let result = try run(args, stdin: stdin, stderr: FileHandle(fileDescriptor: slave, closeOnDealloc: true),
                             environment: environment, whileRunning: drain)
        drain()
        return CLIResult(status: result.status, exitedNormally: result.exitedNormally, stdout: result.stdout,
                         stderr: String(decoding: terminal, as: UTF8.self))
    }
}
