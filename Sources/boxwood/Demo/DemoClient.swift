import BoxwoodPlatform
import BoxwoodSync
import BoxwoodSyncSimulator
import SystemPackage
import Boxwood
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The demo's sync client: a `boxwood-sync-child` process and the host that serves it the simulated server over
/// its stdin and stdout. The process is this value's to signal and reap; the pipes are the host's alone (it closes
/// each once, when the child has gone).
///
/// Every command must get the reply it asks for. A missing reply (the child went away), a `failed` reply or a
/// child that is gone when it should be working is a ``DemoClientError`` that says what happened — the demo stops
/// there instead of computing a verdict on a half-run.
struct DemoClient {
    let process: ChildProcess
    let host: PipeServerHost

    /// Starts the client on `databasePath`, keeping history views of `viewing` open in it.
    static func start(databasePath: String, server: SimulatedServer, viewing peers: [PeerId]) throws -> DemoClient {
        let executable = try CurrentProcess.siblingExecutable("boxwood-sync-child")
        var spawned = try ChildProcess.spawn(
            executable: executable,
            arguments: [databasePath, String(server.accountPeerId.toInt64()),
                        "--view", peers.map { String($0.toInt64()) }.joined(separator: ",")],
            standardInput: .pipe, standardOutput: .pipe, standardError: .inherit)
        guard let fromChild = spawned.standardOutput.take(), let toChild = spawned.standardInput.take() else {
            spawned.process.kill()
            _ = try? spawned.process.wait()
            throw ChildProcessError(operation: "spawn \(executable): no pipe end returned for stdin/stdout", errno: .badFileDescriptor)
        }
        let host = PipeServerHost(server: server, input: fromChild, output: toChild)
        host.start()
        return DemoClient(process: spawned.process, host: host)
    }

    var pid: pid_t { process.pid }

    /// Sends `command` and returns the child's reply; throws when there is none or it reports a failure.
    @discardableResult
    func run(_ command: ChildCommand) async throws -> ChildReply {
        guard let reply = await host.command(command) else {
            throw DemoClientError.noReply(pid: pid, command: command.name, termination: await observedEnd())
        }
        if case let .failed(message) = reply {
            throw DemoClientError.commandFailed(pid: pid, command: command.name, message: message)
        }
        return reply
    }

    /// The child's statistics.
    func statistics() async throws -> SyncStatistics {
        let reply = try await run(.statistics)
        guard case let .statistics(statistics) = reply else {
            throw DemoClientError.unexpectedReply(pid: pid, command: "statistics", reply: "\(reply)")
        }
        return statistics
    }

    /// Throws when the child has gone although it should be running (it exited or was killed by something else).
    func ensureRunning(during phase: String) async throws {
        if host.isClosed {
            throw DemoClientError.endedUnexpectedly(pid: pid, phase: phase, termination: await observedEnd())
        }
    }

    /// Asks the client to stop cleanly (`exit`), then reaps it; it must reply `stopped` and exit with status 0.
    func stop() async throws {
        let reply = try await run(.exit)
        guard reply == .stopped else { throw DemoClientError.unexpectedReply(pid: pid, command: "exit", reply: "\(reply)") }
        let termination = try await process.terminated()
        guard termination == .exited(0) else {
            throw DemoClientError.stopFailed(pid: pid, termination: termination)
        }
        await host.waitUntilClosed()
    }

    /// SIGKILLs the client and waits until it is reaped and everything it wrote was handled.
    func kill() async throws {
        process.kill()
        _ = try await process.terminated()
        await host.waitUntilClosed()
    }

    /// How a child that went away ended. Its pipe closed, so it is exiting or has exited; if it is somehow still
    /// running with its stdout closed, it is killed so that the wait cannot hang (a SIGKILL does not change the
    /// status of a child that already exited).
    private func observedEnd() async -> ChildTermination? {
        process.kill()
        return try? await process.terminated()
    }
}

/// Why the demo stopped before its verdict.
enum DemoClientError: Error, CustomStringConvertible {
    /// The client went away without replying to `command`.
    case noReply(pid: pid_t, command: String, termination: ChildTermination?)
    /// The client replied that `command` failed.
    case commandFailed(pid: pid_t, command: String, message: String)
    /// The client replied something that does not answer `command`.
    case unexpectedReply(pid: pid_t, command: String, reply: String)
    /// The client was gone while it should have been syncing (it exited, crashed or was killed by someone else).
    case endedUnexpectedly(pid: pid_t, phase: String, termination: ChildTermination?)
    /// The client replied to `exit` but did not exit with status 0.
    case stopFailed(pid: pid_t, termination: ChildTermination)

    var description: String {
        switch self {
        case let .noReply(pid, command, termination):
            return "client process \(pid) went away without replying to '\(command)' (\(Self.describe(termination))); no verdict on a half-run"
        case let .commandFailed(pid, command, message):
            return "client process \(pid) failed '\(command)': \(message)"
        case let .unexpectedReply(pid, command, reply):
            return "client process \(pid) answered '\(command)' with \(reply)"
        case let .endedUnexpectedly(pid, phase, termination):
            return "client process \(pid) ended unexpectedly during \(phase) (\(Self.describe(termination))); no verdict on a half-run"
        case let .stopFailed(pid, termination):
            return "client process \(pid) replied 'stopped' but ended with \(termination)"
        }
    }

    private static func describe(_ termination: ChildTermination?) -> String {
        termination.map { "it ended with \($0)" } ?? "its end could not be observed"
    }
}

extension ChildCommand {
    /// The command's name, for messages.
    var name: String {
        switch self {
        case .send: return "send"
        case .read: return "read"
        case .edit: return "edit"
        case .react: return "react"
        case .sendFile: return "send file"
        case .forward: return "forward"
        case .quiesce: return "quiesce"
        case .exit: return "exit"
        case .statistics: return "statistics"
        }
    }
}
