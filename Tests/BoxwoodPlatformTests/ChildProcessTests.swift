import BoxwoodPlatform
import Dispatch
import SystemPackage
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads `descriptor` to end of file.
func readAll(_ descriptor: borrowing OwnedDescriptor) throws -> String {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4_096)
    while true {
        let n = try chunk.withUnsafeMutableBytes { try descriptor.descriptor.read(into: $0, retryOnInterrupt: true) }
        if n == 0 { break }
        bytes += chunk[..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Runs `/bin/sh -c script` with stdout on a pipe; returns what it printed and how it ended.
func shell(_ script: String) throws -> (output: String, termination: ChildTermination) {
    var spawned = try ChildProcess.spawn(executable: "/bin/sh", arguments: ["-c", script], standardInput: .nullDevice,
                                         standardOutput: .pipe)
    guard let output = spawned.standardOutput.take() else { throw Errno.badFileDescriptor }
    let text = try readAll(output)
    return (text, try spawned.process.wait())
}

@Suite("child processes")
struct ChildProcessTests {
    @Test("stdin and stdout pipes carry bytes both ways; end of file reaches the child when its stdin owner closes")
    func pipesRoundTrip() throws {
        var spawned = try ChildProcess.spawn(executable: "/bin/cat", arguments: [], standardInput: .pipe, standardOutput: .pipe)
        guard let toChild = spawned.standardInput.take(), let fromChild = spawned.standardOutput.take() else {
            Issue.record("no pipe ends returned")
            return
        }
        let message = Array("hello, child\n".utf8)
        _ = try message.withUnsafeBytes { try toChild.descriptor.writeAll($0) }
        try toChild.close()
        #expect(try readAll(fromChild) == "hello, child\n")
        #expect(try spawned.process.wait() == .exited(0))
    }

    @Test("exit statuses and signals are reported as such")
    func terminations() throws {
        #expect(try shell("exit 7").termination == .exited(7))
        #expect(try shell("kill -KILL $$").termination == .signaled(SIGKILL))
        #expect(try shell("echo done").output == "done\n")
    }

    @Test("kill, then wait: SIGKILL; later waits (from any thread) give the same answer; kill after the reap does nothing")
    func killAndReapOnce() async throws {
        let spawned = try ChildProcess.spawn(executable: "/bin/sleep", arguments: ["30"], standardInput: .nullDevice)
        let process = spawned.process
        process.kill()
        // Four waiters at once: one reaps, all get the same termination (none fails with ECHILD).
        let results = await withTaskGroup(of: ChildTermination?.self) { group in
            for _ in 0..<4 { group.addTask { try? await process.terminated() } }
            var all: [ChildTermination?] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results == Array(repeating: .signaled(SIGKILL), count: 4))
        #expect(process.reapedTermination == .signaled(SIGKILL))
        process.kill()
        #expect(try process.wait() == .signaled(SIGKILL))
    }

    @Test("the child inherits no descriptor but its standard streams, even one opened without close-on-exec")
    func noDescriptorLeaks() throws {
        // A descriptor at 50 without FD_CLOEXEC, as careless code elsewhere in an app might leave one.
        let pipe = try PipeDescriptors()
        let leaked = fcntl(pipe.readEnd.descriptor.rawValue, F_DUPFD, 50)
        #expect(leaked >= 50)
        #expect(fcntl(leaked, F_GETFD) & FD_CLOEXEC == 0)
        let leakedOwner = OwnedDescriptor(takingRaw: leaked)
        // `ls /dev/fd` lists the descriptors of ls itself: 0, 1, 2 and the one it reads the directory with.
        let listed = try shell("ls /dev/fd").output.split(separator: "\n").compactMap { Int32($0) }
        #expect(!listed.contains(leaked), "the child inherited descriptor \(leaked): \(listed)")
        #expect(listed.filter { $0 > 3 }.isEmpty, "unexpected descriptors in the child: \(listed)")
        try leakedOwner.close()
    }

    @Test("the child starts with SIGPIPE at its default action even when this process ignores it")
    func signalDispositionsReset() throws {
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        // With SIGPIPE still ignored the shell would survive and print; at the default action the signal ends it.
        let result = try shell("kill -PIPE $$; echo survived")
        #expect(result.termination == .signaled(SIGPIPE), "output: \(result.output)")
    }

    @Test("a stderr file is created 0600 and receives the child's stderr")
    func standardErrorToAFile() throws {
        let directory = "/tmp/boxwood-platform-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        #expect(mkdir(directory, 0o700) == 0)
        defer { _ = unlink(directory + "/err"); _ = rmdir(directory) }
        let spawned = try ChildProcess.spawn(executable: "/bin/sh", arguments: ["-c", "echo oops >&2"],
                                             standardInput: .nullDevice, standardError: .file(FilePath(directory + "/err")))
        #expect(try spawned.process.wait() == .exited(0))
        var info = stat()
        #expect(stat(directory + "/err", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(info.st_size == 5)
    }

    @Test("a missing executable is a typed error naming it")
    func missingExecutable() {
        #expect {
            _ = try ChildProcess.spawn(executable: "/nonexistent/boxwood-tool", arguments: [])
        } throws: { error in
            guard let error = error as? ChildProcessError else { return false }
            return error.errno == .noSuchFileOrDirectory && error.operation.contains("/nonexistent/boxwood-tool")
        }
    }

    @Test("the running executable's path and its siblings")
    func executablePath() throws {
        let path = try CurrentProcess.executablePath()
        #expect(path.isAbsolute)
        #expect(access(path.string, X_OK) == 0)
        let sibling = try CurrentProcess.siblingExecutable("tool")
        #expect(sibling.lastComponent?.string == "tool")
        #expect(sibling.removingLastComponent() == path.removingLastComponent())
    }
}
