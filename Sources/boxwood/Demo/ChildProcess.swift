#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process whose stdin and stdout are pipes to this process (stderr is inherited).
struct ChildProcess {
    let pid: pid_t
    /// Write end of the child's stdin.
    let toChild: Int32
    /// Read end of the child's stdout.
    let fromChild: Int32

    enum SpawnError: Error, CustomStringConvertible {
        case failed(String, Int32)
        var description: String {
            switch self {
            case let .failed(path, code): return "cannot start \(path): \(String(cString: strerror(code)))"
            }
        }
    }

    /// Starts `path` with `arguments` (argv[0] is `path`).
    static func spawn(_ path: String, _ arguments: [String]) throws -> ChildProcess {
        var input: [Int32] = [0, 0]
        var output: [Int32] = [0, 0]
        guard pipe(&input) == 0, pipe(&output) == 0 else { throw SpawnError.failed(path, errno) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        for fd in [input[0], input[1], output[0], output[1]] { posix_spawn_file_actions_addclose(&actions, fd) }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(input[0])
        close(output[1])
        guard status == 0 else {
            close(input[1])
            close(output[0])
            throw SpawnError.failed(path, status)
        }
        return ChildProcess(pid: pid, toChild: input[1], fromChild: output[0])
    }

    /// SIGKILLs the child and reaps it.
    func kill() {
        _ = Glibc.kill(pid, SIGKILL)
        wait()
    }

    /// Waits for the child to exit; returns its exit status (or 128 + signal).
    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(toChild)
        close(fromChild)
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }
}
