#if os(Linux) || os(macOS)
import CBoxwoodPlatform
import Dispatch
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with `posix_spawn`, and the one place that waits for it.
///
/// Invariants kept here:
/// - **The child is reaped once, and never signalled after.** ``wait()`` first waits for the exit *without* reaping
///   (`waitid(WNOWAIT)`: the zombie keeps the pid ours), then reaps under the lock that ``send(signal:)`` takes, so a
///   signal can never reach another process that was given the pid after the reap.
/// - **The child inherits only its three standard streams.** Every descriptor this layer creates is close-on-exec,
///   and the spawn closes everything above stderr in the child (`posix_spawn_file_actions_addclosefrom_np` on Linux,
///   `POSIX_SPAWN_CLOEXEC_DEFAULT` on Darwin), whatever other code in the process opened without the flag.
/// - The parent's ends of the child's pipes are returned in ``SpawnedChild`` as ``OwnedDescriptor``s: the caller owns
///   them and this type never touches them (waiting for the child closes no descriptor).
///
/// Not on iOS, tvOS, watchOS or visionOS: apps there may not spawn processes.
public final class ChildProcess: @unchecked Sendable {
    /// The child's process id (valid for signals until the child was reaped).
    public let pid: pid_t
    private let mutex = PlatformLock()
    /// Set once, under `mutex`, by the call that reaped the child.
    private var termination: ChildTermination?

    private init(pid: pid_t) {
        self.pid = pid
    }

    /// Starts `executable` (a path; no `PATH` search) with `arguments` (argv[0] is the executable's path) and
    /// `environment` ("NAME=value" strings; nil passes this process's environment). Each standard stream is
    /// connected as asked; for each `.pipe` this process's end is in the result. The child starts with SIGPIPE at
    /// its default action and no signal blocked, whatever this process ignores or blocks.
    public static func spawn(
        executable: FilePath,
        arguments: [String],
        environment: [String]? = nil,
        standardInput: ChildStream = .inherit,
        standardOutput: ChildStream = .inherit,
        standardError: ChildStream = .inherit
    ) throws(ChildProcessError) -> SpawnedChild {
        var input = try StreamEnds(standardInput, childReads: true)
        var output = try StreamEnds(standardOutput, childReads: false)
        var error = try StreamEnds(standardError, childReads: false)

        let actions = try SpawnFileActions()
        try actions.connect(input.child?.descriptor, to: 0)
        try actions.connect(output.child?.descriptor, to: 1)
        try actions.connect(error.child?.descriptor, to: 2)
        try actions.closeEverythingAboveStandardStreams()
        let attributes = try SpawnAttributes()
        try attributes.resetSignals()

        let argv = ([executable.string] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let environmentCopy = environment.map { $0.map { strdup($0) } + [nil] }
        defer { for pointer in environmentCopy ?? [] { free(pointer) } }

        var pid: pid_t = 0
        let status = executable.withPlatformString { path in
            if let environmentCopy {
                return environmentCopy.withUnsafeBufferPointer { envp in
                    posix_spawn(&pid, path, actions.actions, attributes.attributes, argv, envp.baseAddress)
                }
            }
            return posix_spawn(&pid, path, actions.actions, attributes.attributes, argv, currentEnvironment())
        }
        guard status == 0 else { throw ChildProcessError(operation: "posix_spawn \(executable)", errno: Errno(rawValue: status)) }
        // The child has its copies now; ours of its ends close here (when `input.child` etc. go out of scope).
        return SpawnedChild(process: ChildProcess(pid: pid),
                            standardInput: input.parent.take(),
                            standardOutput: output.parent.take(),
                            standardError: error.parent.take())
    }

    /// Sends `signal` to the child; does nothing once the child was reaped (the pid may belong to another process by
    /// then).
    public func send(signal: CInt) {
        mutex.withLock {
            guard termination == nil else { return }
            // Before the reap the pid is ours (a zombie at worst): kill cannot fail with ESRCH or EPERM.
            _ = sendSystemSignal(pid, signal)
        }
    }

    /// SIGKILLs the child (nothing once it was reaped).
    public func kill() {
        send(signal: SIGKILL)
    }

    /// Blocks until the child ends, reaps it and returns how it ended; later calls (from any thread) return the
    /// same answer at once.
    public func wait() throws(ChildProcessError) -> ChildTermination {
        if let known = mutex.withLock({ termination }) { return known }
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 {
            let code = errno
            if code == EINTR { continue }
            // ECHILD: another caller reaped it between our check and the wait.
            if code == ECHILD, let known = mutex.withLock({ termination }) { return known }
            throw ChildProcessError(operation: "waitid \(pid)", errno: Errno(rawValue: code))
        }
        return try mutex.withLock { () throws(ChildProcessError) -> ChildTermination in
            if let known = termination { return known }
            var status: CInt = 0
            while waitpid(pid, &status, 0) < 0 {
                let code = errno
                if code == EINTR { continue }
                throw ChildProcessError(operation: "waitpid \(pid)", errno: Errno(rawValue: code))
            }
            let ended = ChildTermination(waitStatus: status)
            termination = ended
            return ended
        }
    }

    /// Waits for the child to end without blocking the caller's thread (``wait()`` runs on a Dispatch worker), reaps
    /// it and returns how it ended.
    public func terminated() async throws(ChildProcessError) -> ChildTermination {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<ChildTermination, ChildProcessError>, Never>) in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { () throws(ChildProcessError) -> ChildTermination in try self.wait() })
            }
        }
        return try result.get()
    }

    /// How the child ended, if it was reaped already; never blocks.
    public var reapedTermination: ChildTermination? {
        mutex.withLock { termination }
    }
}

/// What one of a child's standard streams is connected to.
public enum ChildStream: Sendable, Equatable {
    /// This process's own stream.
    case inherit
    /// `/dev/null`.
    case nullDevice
    /// A file: read for stdin; for stdout and stderr created if missing (permissions 0600) and truncated.
    case file(FilePath)
    /// A new pipe; this process's end is returned in ``SpawnedChild``.
    case pipe
}

/// A child just started, and this process's ends of its `.pipe` streams (nil for the others). The descriptors are
/// the caller's to own: move them to whatever reads and writes them.
public struct SpawnedChild: ~Copyable {
    /// The child.
    public let process: ChildProcess
    /// The write end of the child's stdin pipe.
    public var standardInput: OwnedDescriptor?
    /// The read end of the child's stdout pipe.
    public var standardOutput: OwnedDescriptor?
    /// The read end of the child's stderr pipe.
    public var standardError: OwnedDescriptor?
}

/// How a reaped child ended.
public enum ChildTermination: Sendable, Equatable, CustomStringConvertible {
    /// It exited with this status.
    case exited(CInt)
    /// This signal ended it.
    case signaled(CInt)

    /// Decodes a `waitpid` status (`WIFEXITED`/`WEXITSTATUS`/`WTERMSIG` are macros Swift does not import; the layout
    /// is the same on Linux and Darwin). Stopped children are never reported: `WUNTRACED` is not used.
    init(waitStatus status: CInt) {
        let signal = status & 0x7F
        self = signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
    }

    public var description: String {
        switch self {
        case let .exited(status): return "exit status \(status)"
        case let .signaled(signal): return "signal \(signal)"
        }
    }
}

/// A failed system call while starting or waiting for a child.
public struct ChildProcessError: Error, Sendable, CustomStringConvertible {
    /// What was being done, e.g. "posix_spawn /path/to/tool".
    public let operation: String
    /// The error the system reported.
    public let errno: Errno

    public init(operation: String, errno: Errno) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String { "\(operation) failed: \(errno) (errno \(errno.rawValue))" }
}

// MARK: - Spawn plumbing

/// The child's and this process's ends of one standard stream.
private struct StreamEnds: ~Copyable {
    var child: OwnedDescriptor?
    var parent: OwnedDescriptor?

    init(_ stream: ChildStream, childReads: Bool) throws(ChildProcessError) {
        child = nil
        parent = nil
        switch stream {
        case .inherit:
            break
        case .nullDevice:
            child = try Self.open("/dev/null", childReads ? .readOnly : .writeOnly, create: false)
        case let .file(path):
            child = try Self.open(path, childReads ? .readOnly : .writeOnly, create: !childReads)
        case .pipe:
            let pipe: PipeDescriptors
            do { pipe = try PipeDescriptors() } catch { throw ChildProcessError(operation: "pipe", errno: error) }
            if childReads {
                child = consume pipe.readEnd
                parent = consume pipe.writeEnd
            } else {
                child = consume pipe.writeEnd
                parent = consume pipe.readEnd
            }
        }
        // A child end on 0, 1 or 2 (this process had one of them closed) could be overwritten by another stream's
        // dup2 before its own: move it above.
        if let low = child.take() {
            child = try Self.aboveStandardStreams(low)
        }
    }

    static func open(_ path: FilePath, _ mode: FileDescriptor.AccessMode, create: Bool) throws(ChildProcessError) -> OwnedDescriptor {
        do {
            let options: FileDescriptor.OpenOptions = create ? [.create, .truncate, .closeOnExec] : [.closeOnExec]
            let descriptor = try FileDescriptor.open(path, mode, options: options,
                                                     permissions: create ? [.ownerReadWrite] : nil)
            return OwnedDescriptor(taking: descriptor)
        } catch {
            throw ChildProcessError(operation: "open \(path)", errno: error as? Errno ?? .ioError)
        }
    }

    static func aboveStandardStreams(_ owned: consuming OwnedDescriptor) throws(ChildProcessError) -> OwnedDescriptor {
        guard owned.descriptor.rawValue <= 2 else { return owned }
        let moved = fcntl(owned.descriptor.rawValue, F_DUPFD_CLOEXEC, 3)
        guard moved >= 0 else { throw ChildProcessError(operation: "fcntl(F_DUPFD_CLOEXEC)", errno: Errno(rawValue: errno)) }
        _ = try? owned.close()
        return OwnedDescriptor(takingRaw: moved)
    }
}

/// `posix_spawn_file_actions_t`, on the heap (it must not move once initialized), destroyed with the value.
private struct SpawnFileActions: ~Copyable {
    #if os(Linux)
    let actions = UnsafeMutablePointer<posix_spawn_file_actions_t>.allocate(capacity: 1)
    #else
    let actions = UnsafeMutablePointer<posix_spawn_file_actions_t?>.allocate(capacity: 1)
    #endif

    init() throws(ChildProcessError) {
        #if os(Linux)
        actions.initialize(to: posix_spawn_file_actions_t())
        #else
        actions.initialize(to: nil)
        #endif
        let status = posix_spawn_file_actions_init(actions)
        guard status == 0 else {
            actions.deallocate()
            throw ChildProcessError(operation: "posix_spawn_file_actions_init", errno: Errno(rawValue: status))
        }
    }

    deinit {
        posix_spawn_file_actions_destroy(actions)
        actions.deallocate()
    }

    /// In the child, `descriptor` (when given) becomes `target`; dup2 leaves the copy without close-on-exec.
    func connect(_ descriptor: FileDescriptor?, to target: CInt) throws(ChildProcessError) {
        guard let descriptor else { return }
        let status = posix_spawn_file_actions_adddup2(actions, descriptor.rawValue, target)
        guard status == 0 else { throw ChildProcessError(operation: "posix_spawn_file_actions_adddup2", errno: Errno(rawValue: status)) }
    }

    /// In the child, after the dup2s: close every descriptor above stderr (Linux; Darwin does it through the
    /// attribute POSIX_SPAWN_CLOEXEC_DEFAULT).
    func closeEverythingAboveStandardStreams() throws(ChildProcessError) {
        #if os(Linux)
        let status = boxwood_spawn_add_close_from(actions, 3)
        guard status == 0 else { throw ChildProcessError(operation: "posix_spawn_file_actions_addclosefrom_np", errno: Errno(rawValue: status)) }
        #endif
    }
}

/// `posix_spawnattr_t`, on the heap, destroyed with the value.
private struct SpawnAttributes: ~Copyable {
    #if os(Linux)
    let attributes = UnsafeMutablePointer<posix_spawnattr_t>.allocate(capacity: 1)
    #else
    let attributes = UnsafeMutablePointer<posix_spawnattr_t?>.allocate(capacity: 1)
    #endif

    init() throws(ChildProcessError) {
        #if os(Linux)
        attributes.initialize(to: posix_spawnattr_t())
        #else
        attributes.initialize(to: nil)
        #endif
        let status = posix_spawnattr_init(attributes)
        guard status == 0 else {
            attributes.deallocate()
            throw ChildProcessError(operation: "posix_spawnattr_init", errno: Errno(rawValue: status))
        }
    }

    deinit {
        posix_spawnattr_destroy(attributes)
        attributes.deallocate()
    }

    /// SIGPIPE back to its default action (an ignored signal stays ignored across exec) and an empty signal mask;
    /// on Darwin also POSIX_SPAWN_CLOEXEC_DEFAULT.
    func resetSignals() throws(ChildProcessError) {
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        var mask = sigset_t()
        sigemptyset(&mask)
        var flags = CInt(POSIX_SPAWN_SETSIGDEF) | CInt(POSIX_SPAWN_SETSIGMASK)
        #if os(macOS)
        flags |= CInt(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #endif
        for (name, status) in [("setsigdefault", posix_spawnattr_setsigdefault(attributes, &defaults)),
                               ("setsigmask", posix_spawnattr_setsigmask(attributes, &mask)),
                               ("setflags", posix_spawnattr_setflags(attributes, Int16(flags)))] where status != 0 {
            throw ChildProcessError(operation: "posix_spawnattr_\(name)", errno: Errno(rawValue: status))
        }
    }
}

/// `kill(2)` (the name is taken inside ``ChildProcess``).
private func sendSystemSignal(_ pid: pid_t, _ signal: CInt) -> CInt {
    kill(pid, signal)
}

/// This process's environment block, for `posix_spawn`.
private func currentEnvironment() -> UnsafePointer<UnsafeMutablePointer<CChar>?>? {
    #if os(Linux)
    return UnsafePointer(environ)
    #else
    return UnsafePointer(_NSGetEnviron().pointee)
    #endif
}
#endif
