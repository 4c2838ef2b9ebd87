import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a reaped child process ended.
enum ChildTermination: Equatable, CustomStringConvertible {
    /// It called `exit` with this status.
    case exited(Int32)
    /// A signal ended it.
    case signaled(Int32)

    var description: String {
        switch self {
        case let .exited(status): return "exit status \(status)"
        case let .signaled(signal): return "signal \(signal)"
        }
    }
}

/// A failed system call while driving a child process.
struct ChildProcessError: Error, CustomStringConvertible {
    let operation: String
    let code: Int32

    var description: String { "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))" }
}

/// A child process started with `posix_spawn`: stdin is /dev/null, stdout a pipe (a socket pair on Linux) read line by line, stderr
/// a file. ``sigkill()`` kills it, ``wait()`` reaps it with `waitpid`; an unreaped child is killed and reaped
/// when the value is released.
final class ChildProcess {
    let pid: pid_t
    private let output: Int32
    private var pending: [UInt8] = []
    /// True once the pipe reported end of file: the child exited (or closed its stdout).
    private(set) var reachedEnd = false
    private var reaped = false

    init(executable: String, arguments: [String], stderrPath: String) throws(ChildProcessError) {
        var fds: [Int32] = [0, 0]
        // Created close-on-exec, so that children spawned concurrently by other tests cannot inherit it and keep
        // it open. Glibc's `pipe2` is not imported into Swift: on Linux the "pipe" is a socket pair.
        #if os(Linux)
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw ChildProcessError(operation: "socketpair", code: errno)
        }
        #else
        guard pipe(&fds) == 0 else { throw ChildProcessError(operation: "pipe", code: errno) }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        #endif
        #if os(Linux)
        var actions = posix_spawn_file_actions_t()
        #else
        var actions: posix_spawn_file_actions_t? = nil
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, executable, &actions, nil, argv, envp)
        close(fds[1])
        guard status == 0 else {
            close(fds[0])
            throw ChildProcessError(operation: "posix_spawn \(executable)", code: status)
        }
        pid = child
        output = fds[0]
    }

    deinit {
        if !reaped {
            sigkill()
            _ = wait()
        }
        close(output)
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
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
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
        let n = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
        if n > 0 {
            pending += chunk[..<n]
        } else if n == 0 || errno != EINTR {
            reachedEnd = true
        }
    }

    /// Sends SIGKILL (harmless when the child already exited but is not yet reaped).
    func sigkill() {
        kill(pid, SIGKILL)
    }

    /// Waits for the child to end and reaps it.
    func wait() -> ChildTermination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = true
        // WIFEXITED / WEXITSTATUS / WTERMSIG are C macros that Swift does not import.
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
    }

    /// Finds the built `boxwood-crash-child` like the CLI tests find `boxwood`: `BOXWOOD_CRASH_CHILD`, then
    /// next to the test bundle (the same build directory), then the package's `.build/debug` and
    /// `.build/release`. Nil when it was not built.
    static func locate(_ name: String) -> String? {
        let fm = FileManager.default
        var candidates: [URL] = []
        if let override = ProcessInfo.processInfo.environment["BOXWOOD_CRASH_CHILD"], !override.isEmpty,
           URL(fileURLWithPath: override).lastPathComponent == name {
            candidates.append(URL(fileURLWithPath: override))
        }
        for bundle in [Bundle.main] + Bundle.allBundles {
            candidates.append(bundle.bundleURL.appendingPathComponent(name))
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent(name))
        }
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent(name))
        }
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for config in ["debug", "release"] {
            candidates.append(packageRoot.appendingPathComponent(".build/\(config)/\(name)"))
        }
        return candidates.first { url in
            var isDirectory: ObjCBool = false
            return fm.fileExists(atPath: url.path, isDirectory: &isDirectory) && !isDirectory.boolValue
                && fm.isExecutableFile(atPath: url.path)
        }?.path
    }
}
