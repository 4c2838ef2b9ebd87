import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The demo's kill-and-restart path (issue 28): a restarted client must keep syncing, and a client lost any other
/// way must stop the demo with an error, never a verdict on a half-run.
@Suite("demo restarts")
struct DemoRestartTests {
    @Test("short demo sessions with SIGKILL restarts, two at a time, all consistent (BOXWOOD_DEMO_STRESS_RUNS, _SEED)")
    func shortSessionsWithRestarts() throws {
        let environment = ProcessInfo.processInfo.environment
        let runs = environment["BOXWOOD_DEMO_STRESS_RUNS"].flatMap { Int($0) } ?? 6
        let baseSeed = environment["BOXWOOD_DEMO_STRESS_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...1_000_000)
        let kills = 3
        print("demo restarts: \(runs) sessions of 2 s with \(kills) kills each, seeds \(baseSeed)..<\(baseSeed + UInt64(runs)) "
              + "(BOXWOOD_DEMO_STRESS_SEED=\(baseSeed) replays)")
        let directory = try TempDir()
        let root = directory.path("")
        let failures = FailureList()
        for pair in stride(from: 0, to: runs, by: 2) {
            DispatchQueue.concurrentPerform(iterations: min(2, runs - pair)) { offset in
                let seed = baseSeed + UInt64(pair + offset)
                let data = root + "/demo-\(seed)"
                do {
                    let demo = try CLI.run(["demo", "--no-tui", "--duration", "2", "--kills", "\(kills)", "--seed", "\(seed)",
                                            "--data-dir", data])
                    let lines = demo.output.split(separator: "\n")
                    if demo.status != 0 || lines.last != "verdict: consistent" {
                        failures.add("seed \(seed): status \(demo.status), \(lines.suffix(2)); stderr: \(demo.stderr.suffix(1_500))")
                    } else if demo.stderr.contains("the parent is gone") {
                        failures.add("seed \(seed): a client lost its parent: \(demo.stderr.suffix(1_500))")
                    } else if !demo.output.contains("client kills             \(kills) ") {
                        failures.add("seed \(seed): not \(kills) kills: \(demo.output.suffix(800))")
                    }
                } catch {
                    failures.add("seed \(seed): \(error)")
                }
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.joined(separator: "\n"))")
    }

    @Test("a client killed by someone else stops the demo with an error naming it, and no verdict")
    func clientKilledFromOutside() throws {
        let directory = try TempDir()
        let demo = try RunningCLI(["demo", "--no-tui", "--duration", "120", "--kills", "0", "--seed", "3",
                                   "--data-dir", directory.path("demo-data")])
        #expect(demo.waitForOutput(timeout: 120) { $0.contains("── live") }, "\(demo.output)\n\(demo.errors)")
        let started = demo.output.split(separator: "\n").compactMap { line -> pid_t? in
            guard let range = line.range(of: "client process ") else { return nil }
            return pid_t(line[range.upperBound...].prefix(while: \.isNumber))
        }
        let pid = try #require(started.last)
        #expect(kill(pid, SIGKILL) == 0)
        #expect(demo.waitForExit(timeout: 60), "the demo did not notice its client was gone")
        #expect(demo.process.terminationStatus == 1)
        let errors = demo.errors
        #expect(errors.contains("client process \(pid)") && errors.contains("signal \(SIGKILL)")
                && (errors.contains("ended unexpectedly during live traffic") || errors.contains("went away without replying")),
                "\(errors)")
        #expect(!demo.output.contains("verdict:"), "\(demo.output)")
    }
}

/// Failure messages collected from concurrent runs.
private final class FailureList: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []

    func add(_ message: String) { lock.withLock { messages.append(message) } }
    var all: [String] { lock.withLock { messages } }
}
