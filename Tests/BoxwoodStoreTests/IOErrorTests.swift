import Foundation
import Testing
import BoxwoodCrashWorkload
@testable import BoxwoodStore
import BoxwoodStoreTesting

// Injected ENOSPC / EIO on writes, truncations and fsyncs at random points of commits, checkpoints, WAL
// resets and recoveries. A commit that throws must leave nothing behind; the box must keep working without
// being reopened by hand; after a restart — and, in `full` mode, after a power cut following the failures
// (where a failed fsync's writes met a random fate on the platter) — the database holds exactly the commits
// that succeeded.
//
//     BOXWOOD_SEED=<seed> swift test --filter IOErrorTests            replays a run
//     BOXWOOD_IO_ERROR_TRIALS=5000 swift test --filter IOErrorTests   long run (trials per durability mode)

@Suite struct IOErrorTests {
    static let path = "/db"

    @Test(arguments: [Durability.full, .normal])
    func failedWritesAndSyncsLeaveExactlyTheSuccessfulCommits(_ durability: Durability) throws {
        let seed = crashTestSeed()
        let trials = environmentCount("BOXWOOD_IO_ERROR_TRIALS", default: 100)
        print("IOErrorTests seed: \(seed) (\(durability), \(trials) trials; replay with BOXWOOD_SEED=\(seed))")
        var rng = SplitMix64(seed: seed)
        let workload = CrashWorkload(seed: seed)
        let options = crashTestOptions(durability)
        var failedCommits = 0, checkpointErrors = 0, injected = 0

        for trial in 1...trials {
            let context = "seed \(seed), \(durability), trial \(trial)"
            var disk = SimulatedDisk(seed: rng.next())
            let box = try ValueBox(path: Self.path, options: options, fileSystem: disk)
            var acknowledged: UInt64 = 0
            let warmUp = UInt64(rng.below(30))
            let target = warmUp + 25
            var n: UInt64 = 1
            var faultsLeft = 1 + rng.below(3)
            var attempts = 0
            var checkpointFailing = false
            while n <= target {
                attempts += 1
                if attempts > 10 * Int(target) {
                    Issue.record("\(context): no progress after \(attempts) attempts")
                    return
                }
                if n > warmUp && faultsLeft > 0 && rng.chance(0.3) {
                    faultsLeft -= 1
                    disk.scheduleFailure(afterOperations: 1 + rng.below(12), errno: rng.chance(0.5) ? ENOSPC : EIO)
                }
                do {
                    try workload.run(n, in: box)
                    acknowledged = n
                    n += 1
                    if box.lastCheckpointError != nil && !checkpointFailing { checkpointErrors += 1 }
                    checkpointFailing = box.lastCheckpointError != nil
                } catch {
                    guard case .io = error else {
                        Issue.record("\(context): transaction \(n) failed with \(error), expected only injected I/O errors")
                        return
                    }
                    // The transaction did not happen; the same transaction is retried.
                    if box.isInTransaction { Issue.record("\(context): a failed call left a transaction open"); return }
                    failedCommits += 1
                }
                // After every call, successful or not, the box shows exactly the acknowledged commits
                // (a failed one cannot leak in, a recovery cannot lose one).
                do {
                    let m = try (workload.lastApplied(box) ?? .max)
                    if m != acknowledged {
                        Issue.record("\(context): the box shows transaction \(m), acknowledged \(acknowledged)")
                        return
                    }
                } catch {
                    // The read itself may hit the recovery of an earlier failure and fail on an injected error.
                    guard case .io = error else { Issue.record("\(context): read failed: \(error)"); return }
                }
            }
            #expect(try workload.difference(box, after: acknowledged) == nil, "\(context): the live box")

            if durability == .full {
                // Power cut right now: every acknowledged commit was synced and no failed one may reappear,
                // whatever the failed fsyncs did on the platter.
                disk = try disk.reboot()
            } else {
                // A failure still scheduled may hit the closing checkpoint: the commits are in the WAL then.
                do { try box.close() } catch {
                    guard case .io = error else { Issue.record("\(context): close failed with \(error)"); return }
                }
                disk = try disk.afterProcessKill()
            }
            injected += disk.statistics.failuresInjected
            let reopened = try ValueBox(path: Self.path, options: options, fileSystem: disk)
            #expect(try (workload.lastApplied(reopened) ?? .max) == acknowledged, "\(context): after reopening")
            #expect(try workload.difference(reopened, after: acknowledged) == nil, "\(context): after reopening")
            #expect(try reopened.check().problems == [], "\(context)")
            try reopened.close()
        }
        print("IOErrorTests \(durability): \(trials) trials, \(injected) injected errors, \(failedCommits) failed calls retried, \(checkpointErrors) background checkpoint errors, 0 failures")
    }
}
