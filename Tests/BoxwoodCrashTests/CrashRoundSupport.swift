import BoxwoodCrashWorkload
import BoxwoodPlatform
import BoxwoodStore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// One round of the crash tests, shared by KillReopenTests and the LazyFS tests: how boxwood-crash-child is
// stopped (KillPlan, ChildStop), running one child and reading its acknowledgements (CrashChildLauncher, ChildRun),
// and checking the database it left behind (CrashWorkload.verifyAfterCrash).

/// When the test kills a child.
enum KillPlan: CustomStringConvertible {
    /// After this many acknowledged commits, then a pause.
    case afterAcks(Int, pauseMicroseconds: Int)
    /// As soon as the child announces a checkpoint.
    case atCheckpoint
    /// As soon as the child announces a commit after which a background checkpoint is being written.
    case atBackgroundCheckpoint
    /// This long after the spawn, whatever the child is doing.
    case afterDelay(milliseconds: Int)

    static func random(using generator: inout SplitMix64) -> KillPlan {
        switch Int.random(in: 0..<10, using: &generator) {
        case 0..<3:
            return .afterAcks(Int.random(in: 0...40, using: &generator), pauseMicroseconds: Int.random(in: 0...3_000, using: &generator))
        case 3..<5:
            return .atCheckpoint
        case 5..<7:
            return .atBackgroundCheckpoint
        default:
            return .afterDelay(milliseconds: Int.random(in: 0...30, using: &generator))
        }
    }

    var description: String {
        switch self {
        case let .afterAcks(acks, pause): return "after \(acks) acks + \(pause) µs"
        case .atCheckpoint: return "at a checkpoint announcement"
        case .atBackgroundCheckpoint: return "while a background checkpoint is written"
        case let .afterDelay(milliseconds): return "\(milliseconds) ms after spawn"
        }
    }
}

/// How a child is stopped.
enum ChildStop {
    /// SIGKILL as the kill-and-reopen test plans it (under LazyFS, LazyFS keeps running).
    case kill(KillPlan)
    /// Wait until the child ends by itself — a LazyFS fault killed LazyFS, and the child's next file operation
    /// failed — but SIGKILL it after `maxAcks` acknowledgements or `timeout` (the fault did not fire).
    case whenLazyFSDies(maxAcks: Int, timeout: Duration)
}

/// What one child did.
struct ChildRun {
    /// The last acknowledged transaction (the harness's `committed` when none).
    var acked: UInt64
    /// The last transaction that a completed checkpoint holds, or `committed` (verified earlier, so durable):
    /// what `normal` mode may not lose. (The child announces a checkpoint with `C n`; any later line shows it
    /// completed.)
    var checkpointed: UInt64
    var atCheckpoint: Bool
    /// Killed right after a commit that left a background checkpoint writing (`B n`).
    var atBackgroundCheckpoint = false
    var termination: ChildTermination
    var stderr: String
}

/// Runs boxwood-crash-child on one database: the executable, the database, the workload's seed and the mode.
struct CrashChildLauncher {
    let executable: String
    let databasePath: String
    let seed: UInt64
    let durability: Durability
    /// The file the child's stderr goes to.
    let stderrPath: String
    /// How much of the child's stderr a run keeps: a crash backtrace can be long, its start says enough.
    let stderrLimit: Int
    /// How the child encrypts the database (`CrashEncryption`).
    var encryption: CrashEncryption = .plain

    /// Spawns a child that runs `transactions` transactions after `committed`, stops it as `stop` says and reaps
    /// it, taking its stdout lines `A n` (transaction n acknowledged) and `C n` (acknowledged, a checkpoint
    /// follows). Nil after handing `fail` a message: the spawn failed, the child printed an unexpected line, a
    /// child meant to be killed ended by itself, or it reported nothing for 60 s.
    func run(after committed: UInt64, transactions: UInt64 = 1_000_000_000, stop: ChildStop,
             fail: (String) -> Void) -> ChildRun? {
        let process: CrashChild
        do {
            process = try CrashChild(executable: executable, arguments: [
                databasePath, String(seed), durability.rawValue, String(committed + 1), String(transactions), encryption.rawValue],
                stderrPath: stderrPath)
        } catch {
            fail("\(error)")
            return nil
        }
        let spawned = ContinuousClock.now
        // Not a timing assertion: only a guard against a hung child.
        let stallDeadline = spawned + .seconds(60)
        var run = ChildRun(acked: committed, checkpointed: committed, atCheckpoint: false, termination: .exited(0), stderr: "")
        var announced: UInt64? = nil
        var acks = 0
        var unexpected: String? = nil
        /// Records an acknowledgement; true when it announces a checkpoint.
        func take(_ line: String) -> Bool {
            let parts = line.split(separator: " ")
            guard parts.count == 2, parts[0] == "A" || parts[0] == "B" || parts[0] == "C", UInt64(parts[1]) == run.acked + 1 else {
                unexpected = unexpected ?? line
                return false
            }
            if let announced { run.checkpointed = max(run.checkpointed, announced) }
            run.acked += 1
            acks += 1
            announced = parts[0] == "C" ? run.acked : nil
            return parts[0] == "C"
        }

        var reachedGoal = true
        switch stop {
        case let .kill(.afterAcks(target, pause)):
            while acks < target, let line = process.nextLine(before: stallDeadline) { _ = take(line) }
            reachedGoal = acks >= target
            if reachedGoal { usleep(UInt32(pause)) }
        case .kill(.atCheckpoint):
            while !run.atCheckpoint, let line = process.nextLine(before: stallDeadline) { run.atCheckpoint = take(line) }
            reachedGoal = run.atCheckpoint
        case .kill(.atBackgroundCheckpoint):
            while !run.atBackgroundCheckpoint, let line = process.nextLine(before: stallDeadline) {
                let announcesCheckpoint = take(line)
                run.atBackgroundCheckpoint = !announcesCheckpoint && line.hasPrefix("B ")
            }
            reachedGoal = run.atBackgroundCheckpoint
        case let .kill(.afterDelay(milliseconds)):
            while let line = process.nextLine(before: spawned + .milliseconds(milliseconds)) { _ = take(line) }
        case let .whenLazyFSDies(maxAcks, timeout):
            while acks < maxAcks, let line = process.nextLine(before: spawned + timeout) { _ = take(line) }
        }
        let killed: Bool
        if case .kill = stop { killed = true } else { killed = false }
        let stalled = killed && !reachedGoal && !process.reachedEnd
        process.sigkill()
        // Lines written before the kill are acknowledgements too.
        for line in process.remainingLines() { _ = take(line) }
        run.termination = process.wait()
        run.stderr = String(((try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "").prefix(stderrLimit))
        if let unexpected {
            fail("unexpected child output line '\(unexpected)' (after acknowledging \(run.acked)); stderr: \(run.stderr)")
            return nil
        }
        if killed && run.termination != .signaled(SIGKILL) {
            fail("the child ended by itself (\(run.termination)) after acknowledging \(run.acked); stderr: \(run.stderr)")
            return nil
        }
        if stalled {
            fail("the child reported nothing for 60 s (last acknowledged \(run.acked))")
            return nil
        }
        if durability == .full { run.checkpointed = run.acked }
        return run
    }
}

extension CrashWorkload {
    /// Checks the database a crash child left behind, open in `box`: its last transaction m must lie in
    /// `floor...acked + 1` (`outOfRange(m)` says what was expected otherwise), every table must hold exactly the
    /// model's entries after m, and `check()` must find no problem. Returns m; nil after handing `fail` a message.
    func verifyAfterCrash(_ box: ValueBox, acked: UInt64, floor: UInt64, fail: (String) -> Void,
                          outOfRange: (UInt64) -> String) throws(BoxwoodError) -> UInt64? {
        guard let m = try lastApplied(box) else {
            fail("the last key does not hold 8 bytes")
            return nil
        }
        guard floor <= m && m <= acked + 1 else {
            fail(outOfRange(m))
            return nil
        }
        if let difference = try difference(box, after: m) {
            fail(difference)
            return nil
        }
        let report = try box.check()
        guard report.isOK else {
            fail("check() after transaction \(m) found \(report.problems.count) problem(s): "
                 + report.problems.prefix(5).joined(separator: "; "))
            return nil
        }
        return m
    }
}
