import ArgumentParser
import Boxwood
import BoxwoodStore
import BoxwoodSync
import BoxwoodSyncSimulator
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `boxwood demo`: a full sync session on an embedded database. A simulated server with users, groups, channels
/// and thousands of messages; a client process (`boxwood-sync-child`) syncing it over pipes with faults on;
/// this process opens the same database and shows its chat list from a live view (it refreshes on the client's
/// commits through the shared header). The client syncs, goes offline, catches up (progress bar), runs live,
/// is SIGKILLed part-way and restarted, then settles; the last line is the verdict of comparing the client's
/// database with the server's state.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a sync session on an embedded database: simulated server, client process, live views, a crash, a verdict."
    )

    @Option(help: "Random seed of the simulated server (the same seed gives the same world and traffic).") var seed: UInt64 = 1
    @Option(help: "Seconds of live traffic.") var duration: Double = 12
    @Option(help: "How many times the client is SIGKILLed and restarted during live traffic (evenly spaced).") var kills: Int = 1
    @Flag(help: "Plain log lines instead of the terminal view (for CI and pipes).") var noTui = false
    @Option(help: "Directory for the demo database (deleted and recreated).") var dataDir = "./demo-data"

    static let marker = ".boxwood-demo"

    func validate() throws {
        if duration <= 0 || duration > 3600 { throw ValidationError("--duration must be in (0, 3600] seconds") }
        if dataDir.isEmpty { throw ValidationError("--data-dir must not be empty") }
        if kills < 0 || kills > 1_000 { throw ValidationError("--kills must be in [0, 1000]") }
    }

    func run() throws {
        try recreateScratchDirectory(dataDir, marker: Demo.marker, command: "boxwood demo")
        let session = DemoSession(seed: seed, duration: duration, kills: kills, tui: !noTui && isatty(1) != 0, databasePath: dataDir + "/db")
        let semaphore = DispatchSemaphore(value: 0)
        let outcome = OutcomeBox()
        Task {
            do {
                outcome.set(try await session.run())
            } catch {
                outcome.fail("\(error)")
            }
            semaphore.signal()
        }
        semaphore.wait()
        switch outcome.value {
        case .consistent?:
            return
        case .inconsistent?:
            throw ExitCode(ExitStatus.failure)
        case nil:
            throw CommandFailure(status: ExitStatus.failure, outcome.error ?? "the demo failed", place: nil)
        }
    }
}

/// Carries the session's result from its task to the command.
final class OutcomeBox: @unchecked Sendable {
    private let lock = NSLockLike()
    private(set) var value: DemoVerdict?
    private(set) var error: String?

    func set(_ verdict: DemoVerdict) { lock.locked { value = verdict } }
    func fail(_ message: String) { lock.locked { error = message } }
}

/// A minimal mutex over pthread (the CLI does not import Foundation).
final class NSLockLike: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}

enum DemoVerdict: Sendable {
    case consistent
    case inconsistent
}
