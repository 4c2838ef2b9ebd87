import BoxwoodPlatform
import Foundation
import BoxwoodTestSupport
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process of the crash and multi-process tests, started through the platform layer's ``ChildProcess``:
/// stdin is /dev/null, stdout a pipe read line by line, stderr a file. ``sigkill()`` kills it, ``wait()`` reaps it;
/// an unreaped child is killed and reaped when the value is released. The read end of the stdout pipe is this
/// value's alone and closes with it.
final class CrashChild {
    let process: ChildProcess
    var pid: pid_t { process.pid }
    private let output: OwnedDescriptor
    private var pending: [UInt8] = []
    /// True once the pipe reported end of file: the child exited (or closed its stdout).
    private(set) var reachedEnd = false

    init(executable: String, arguments: [String], stderrPath: String) throws(ChildProcessError) {
        var spawned = try ChildProcess.spawn(executable: FilePath(executable), arguments: arguments,
                                             standardInput: .nullDevice, standardOutput: .pipe,
                                             standardError: .file(FilePath(stderrPath)))
        process = spawned.process
        guard let output = spawned.standardOutput.take() else {
            spawned.process.kill()
            _ = try? spawned.process.wait()
            throw ChildProcessError(operation: "spawn \(executable): no pipe end returned", errno: .badFileDescriptor)
        }
        self.output = output
    }

    deinit {
        if process.reapedTermination == nil {
            process.kill()
            _ = try? process.wait()
        }
    }

    /// The next complete stdout line (without its newline), waiting for it until `deadline`. Nil when the
    /// deadline passed or the pipe reached its end (see ``reachedEnd``).
    func nextLine(before deadline: ContinuousClock.Instant) -> String? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            if reachedEnd { return nil }
            let remaining = deadline - .now
            if remaining <= .zero { return nil }
            let (seconds, attoseconds) = remaining.components
            var descriptor = pollfd(fd: output.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: seconds * 1_000 + attoseconds / 1_000_000_000_000_000 + 1))
            if ready > 0 { readAvailable() }
        }
    }

    /// Every line still to come, up to the end of the pipe (call after the child died).
    func remainingLines() -> [String] {
        var lines: [String] = []
        while let line = nextLine(before: .now + .seconds(3_600)) { lines.append(line) }
        return lines
    }

    private func readAvailable() {
        var chunk = [UInt8](repeating: 0, count: 4_096)
        let n = chunk.withUnsafeMutableBytes { read(output.descriptor.rawValue, $0.baseAddress, $0.count) }
        if n > 0 {
            pending += chunk[..<n]
        } else if n == 0 || errno != EINTR {
            reachedEnd = true
        }
    }

    /// Sends SIGKILL (nothing once the child was reaped).
    func sigkill() {
        process.kill()
    }

    /// Waits for the child to end and reaps it (a failed wait is a failed test).
    func wait() -> ChildTermination {
        do {
            return try process.wait()
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// Finds the built `boxwood-crash-child` (or another child): `BOXWOOD_CRASH_CHILD` when it names it, then the
    /// build directory (see `BuiltExecutable`).
    static func locate(_ name: String) -> String? {
        BuiltExecutable.locate(name, override: "BOXWOOD_CRASH_CHILD", overrideMustNameIt: true)
    }
}
