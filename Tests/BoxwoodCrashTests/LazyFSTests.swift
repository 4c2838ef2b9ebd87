import BoxwoodCrashWorkload
import BoxwoodStore
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Power-loss tests on a real file system that forgets: LazyFS (github.com/dsrhaslab/lazyfs, a FUSE file system
// with its own page cache, driven by scripts/lazyfs.sh) under the kill-and-reopen crash workload. The database
// lives inside a LazyFS mount; boxwood-crash-child commits to it and is stopped, then
//   - powerCut: SIGKILL at a random moment, then `lazyfs::clear-cache` drops every write not fsynced — the power
//     cut — and the database is reopened in-process (read-only or read-write) through the same mount;
//   - tornWrite: LazyFS's own torn-op / torn-seq faults on `wal` or `data` persist only some parts of one write
//     (or some writes of one unsynced run) and kill LazyFS, which loses everything else unsynced; the database is
//     reopened on a fresh mount;
//   - tornUnacknowledgedWALRecord: one WAL record written in a single write, torn into thirds with the middle
//     third lost (the record was never acknowledged; no valid record follows it).
// After each: the database opens, `full` kept every acknowledged commit, `normal` kept at least every commit
// of its last completed checkpoint, at most the in-flight transaction is there besides, the tables hold
// exactly the model's state after the last transaction present (so the survivors are a prefix of the commits,
// each whole), and `check()` passes. The next child continues the same database.
//
// Needs Linux, /dev/fuse and root; otherwise the suite is skipped with the script's reason printed. Run
// `swift build` first (the tests run the built boxwood-crash-child). BOXWOOD_LAZYFS_ROUNDS=N sets the rounds
// per test case (`make lazyfs` runs a long run); BOXWOOD_SEED=<seed> replays a printed seed.

@Suite(.serialized, .enabled(if: LazyFS.runs, "LazyFS cannot run here: the reason is printed (scripts/lazyfs.sh check)"))
struct LazyFSTests {
    /// SIGKILL + clear-cache rounds on one mount.
    /// Also on an encrypted database that the child keeps rekeying between two keys (`.rekeying`, `normal`): a power
    /// loss during a rekey leaves the database complete under exactly one of the keys.
    @Test(arguments: [(Durability.full, CrashEncryption.plain), (.normal, .plain), (.normal, .rekeying)])
    func powerCut(durability: Durability, encryption: CrashEncryption) throws {
        guard LazyFS.ready(), let child = Self.crashChild() else { return }
        let rounds = Self.rounds(default: 8)
        let name = "power cut, \(durability)" + (encryption == .plain ? "" : ", \(encryption)")
        let harness = try LazyFSHarness(name: name, child: child, durability: durability, seed: Self.seed, encryption: encryption)
        defer { harness.finish() }
        print("LazyFSTests [\(harness.name)]: seed \(harness.seed) (BOXWOOD_SEED replays it), \(rounds) rounds")
        guard harness.lazyfsStep("mount", { () throws(LazyFSError) in try harness.lazyfs.mount() }) else { return }
        for round in 1...rounds {
            let plan = KillPlan.random(using: &harness.generator)
            let readOnlyDraw = Bool.random(using: &harness.generator)
            let readOnly = harness.committed > 0 && readOnlyDraw
            let context = "round \(round)/\(rounds): SIGKILL \(plan), clear-cache, \(readOnly ? "read-only" : "read-write") reopen"
            // runChild records a child that ended by itself (it was to be killed) as a failure.
            guard let run = harness.runChild(.kill(plan), context: context) else { return }
            if run.atCheckpoint { harness.stats.checkpointKills += 1 }
            guard harness.lazyfsStep(context, { () throws(LazyFSError) in try harness.lazyfs.clearCache() }),
                  harness.verify(readOnly: readOnly, acked: run.acked, floor: run.checkpointed, context: context) != nil
            else { return }
            harness.stats.rounds += 1
        }
        harness.commitInProcess(context: "final in-process commit, clear-cache, reopen")
        print(harness.summary())
    }

    /// Which LazyFS fault a tornWrite case injects, on which file, in which mode.
    struct TornCase: Sendable, CustomTestStringConvertible {
        enum Kind: String, Sendable { case tornOp = "torn-op", tornSeq = "torn-seq" }
        let kind: Kind
        let file: String
        let durability: Durability
        var testDescription: String { "\(kind.rawValue) on \(file), \(durability)" }

        static let all: [TornCase] = [Kind.tornOp, .tornSeq].flatMap { kind in
            ["wal", "data"].flatMap { file in [Durability.full, .normal].map { TornCase(kind: kind, file: file, durability: $0) } }
        }

        /// A random fault of this case. Occurrences are drawn from the range of writes (torn-op) or unsynced
        /// write runs (torn-seq) that a child makes in its first few dozen transactions (about two writes per
        /// transaction to each file, counted by LazyFS since the mount); a fault that does not fire before the
        /// child acknowledged 300 transactions is replaced by a plain power cut.
        func fault(using generator: inout SplitMix64) -> LazyFSFault {
            switch kind {
            case .tornOp:
                let parts = Int.random(in: 2...6, using: &generator)
                var persist = (1...parts).filter { _ in Bool.random(using: &generator) }
                if persist.isEmpty { persist = [Int.random(in: 1...parts, using: &generator)] }
                if persist.count == parts { persist.remove(at: Int.random(in: 0..<parts, using: &generator)) }
                let occurrence = Int.random(in: 1...(file == "wal" ? 120 : 200), using: &generator)
                return .tornOp(file: file, occurrence: occurrence, parts: parts, persist: persist)
            case .tornSeq:
                // The last persisted write ends the run (LazyFS dies after it); at least one write before it is lost.
                // In `full` the WAL's runs are the two or three writes of one record that crosses a page boundary.
                let last = Int.random(in: 2...(file == "wal" ? 3 : 4), using: &generator)
                var persist = (1..<last).filter { _ in Bool.random(using: &generator) }
                if persist.count == last - 1 { persist.remove(at: Int.random(in: 0..<persist.count, using: &generator)) }
                let occurrence = Int.random(in: 1...(file == "wal" ? 12 : 8), using: &generator)
                return .tornSeq(file: file, occurrence: occurrence, persist: persist + [last])
            }
        }
    }

    /// torn-op / torn-seq rounds, each on a fresh mount configured with one fault; LazyFS dies when it fires.
    @Test(arguments: TornCase.all)
    func tornWrite(_ torn: TornCase) throws {
        guard LazyFS.ready(), let child = Self.crashChild() else { return }
        let rounds = Self.rounds(default: 3)
        let harness = try LazyFSHarness(name: torn.testDescription, child: child, durability: torn.durability, seed: Self.seed)
        defer { harness.finish() }
        print("LazyFSTests [\(harness.name)]: seed \(harness.seed) (BOXWOOD_SEED replays it), \(rounds) rounds")
        let lazyfs = harness.lazyfs
        for round in 1...rounds {
            let fault = torn.fault(using: &harness.generator)
            let readOnlyDraw = Bool.random(using: &harness.generator)
            let readOnly = harness.committed > 0 && readOnlyDraw
            var context = "round \(round)/\(rounds): \(fault) (after transaction \(harness.committed))"
            guard harness.lazyfsStep(context, { () throws(LazyFSError) in try lazyfs.mount(faults: fault.toml) }),
                  let run = harness.runChild(.whenLazyFSDies(maxAcks: 300, timeout: .seconds(30)), context: context)
            else { return }
            if !lazyfs.faultFired {
                // The fault did not fire (e.g. the run of writes was shorter than it needs): a plain power cut.
                harness.stats.faultsNotFired += 1
                guard run.termination == .signaled(SIGKILL) else {
                    harness.fail(context, "the child ended by itself (\(run.termination)) while LazyFS ran, after acknowledging \(run.acked); stderr: \(run.stderr)")
                    return
                }
                context += ", did not fire: SIGKILL + clear-cache"
                guard harness.lazyfsStep(context, { () throws(LazyFSError) in try lazyfs.clearCache() }) else { return }
            } else {
                harness.stats.faultsFired += 1
                context += ", persisted: " + lazyfs.persistedParts.joined(separator: "; ")
                // LazyFS is gone, so the child's next file operation failed: it reports the error and exits 3, or
                // dies of SIGBUS touching a mapped page, or was still running and got our SIGKILL.
                let ending: String
                switch run.termination {
                case .exited(3) where run.stderr.hasPrefix("E "): ending = "exit 3"
                case .signaled(SIGBUS): ending = "SIGBUS"
                case .signaled(SIGKILL): ending = "SIGKILL"
                default:
                    harness.fail(context, "after LazyFS died the child ended with \(run.termination); stderr: \(run.stderr)")
                    return
                }
                harness.stats.childSelfExits[ending, default: 0] += 1
            }
            context += ", acknowledged \(run.acked), \(readOnly ? "read-only" : "read-write") reopen on a fresh mount"
            guard harness.lazyfsStep(context, { () throws(LazyFSError) in
                      try lazyfs.unmount()
                      try lazyfs.mount()
                  }),
                  harness.verify(readOnly: readOnly, acked: run.acked, floor: run.checkpointed, context: context) != nil,
                  harness.lazyfsStep(context, { () throws(LazyFSError) in try lazyfs.unmount() })
            else { return }
            harness.stats.rounds += 1
        }
        guard harness.lazyfsStep("final mount", { () throws(LazyFSError) in try lazyfs.mount() }) else { return }
        harness.commitInProcess(context: "final in-process commit, clear-cache, reopen")
        print(harness.summary())
    }

    /// A WAL record written by one write is torn in thirds: the first and last third reach the disk, the middle
    /// one does not (it reads as zeros, but covers no whole 512-byte sector, so no all-zero sector marks the tear),
    /// and LazyFS dies before the fsync, so the record was never acknowledged and no record follows it. The
    /// database must open with every acknowledged commit; the damaged record is a torn tail. A dry run with every
    /// operation logged finds such a write; the same seed makes the same writes again.
    @Test func tornUnacknowledgedWALRecord() throws {
        guard LazyFS.ready(), let child = Self.crashChild() else { return }
        let harness = try LazyFSHarness(name: "torn unacknowledged WAL record, full", child: child, durability: .full, seed: Self.seed)
        defer { harness.finish() }
        let lazyfs = harness.lazyfs
        let transactions: UInt64 = 40
        print("LazyFSTests [\(harness.name)]: seed \(harness.seed) (BOXWOOD_SEED replays it)")

        // Dry run: transactions 1...40, every operation logged.
        var context = "dry run of transactions 1...\(transactions)"
        guard harness.lazyfsStep(context, { () throws(LazyFSError) in try lazyfs.mount(logAllOperations: true) }),
              let dry = harness.runChild(.whenLazyFSDies(maxAcks: Int.max, timeout: .seconds(60)), transactions: transactions, context: context)
        else { return }
        guard dry.termination == .exited(0), dry.acked == transactions else {
            harness.fail(context, "the child ended with \(dry.termination) after acknowledging \(dry.acked); stderr: \(dry.stderr)")
            return
        }
        let writes = WALWrite.parse(lazyfs.log, wal: lazyfs.root + "/db/wal")
        guard harness.lazyfsStep(context, { () throws(LazyFSError) in try lazyfs.unmount() }) else { return }
        do { try FileManager.default.removeItem(atPath: lazyfs.root + "/db") } catch {
            harness.fail(context, "removing the dry run's database: \(error)")
            return
        }
        // A record written whole by one write (alone between two fsyncs; not the header at offset 0) whose middle
        // third holds no whole 512-byte sector.
        let candidates = writes.filter { $0.offset > 0 && $0.aloneBetweenSyncs && $0.size >= 3 && !$0.middleThirdHoldsSector }
        guard !candidates.isEmpty else {
            harness.fail(context, "no WAL write of a whole record with a middle third shorter than a sector among \(writes.count) writes")
            return
        }
        let target = candidates[Int.random(in: 0..<candidates.count, using: &harness.generator)]
        let fault = LazyFSFault.tornOp(file: "wal", occurrence: target.index, parts: 3, persist: [1, 3])

        context = "\(fault): the write of \(target.size) bytes at offset \(target.offset)"
        guard harness.lazyfsStep(context, { () throws(LazyFSError) in try lazyfs.mount(faults: fault.toml) }),
              let run = harness.runChild(.whenLazyFSDies(maxAcks: Int.max, timeout: .seconds(60)), transactions: transactions, context: context)
        else { return }
        guard lazyfs.faultFired else {
            harness.fail(context, "the fault did not fire (the child ended with \(run.termination) after acknowledging \(run.acked))")
            return
        }
        let persisted = lazyfs.persistedParts
        context += ", persisted: " + persisted.joined(separator: "; ") + ", acknowledged \(run.acked)"
        guard persisted.contains(where: { $0.contains("from offset \(target.offset)") }) else {
            harness.fail(context, "the torn write is not the dry run's write at offset \(target.offset): the writes differed")
            return
        }
        guard harness.lazyfsStep(context, { () throws(LazyFSError) in
            try lazyfs.unmount()
            try lazyfs.mount()
        }) else { return }
        // The damaged record is the last one and was never acknowledged: a torn tail to cut, not damage to refuse.
        context += " (a damaged WAL record with no valid record after it is a torn tail)"
        guard harness.verify(readOnly: true, acked: run.acked, floor: run.acked, context: context + ", read-only open") != nil,
              harness.verify(readOnly: false, acked: run.acked, floor: run.acked, context: context + ", read-write open") != nil
        else { return }
        harness.stats.rounds += 1
        harness.commitInProcess(context: "in-process commit after the torn record, clear-cache, reopen")
        print(harness.summary("torn: \(target.size)-byte record at offset \(target.offset) (write #\(target.index))"))
    }
}

/// One write to the WAL in a LazyFS log with every operation logged.
struct WALWrite {
    /// 1-based, as LazyFS counts writes for torn-op's `occurrence`.
    let index: Int
    let offset: Int
    let size: Int
    /// Preceded and followed by an fsync of the WAL (or the start of the log), with no other write between.
    var aloneBetweenSyncs: Bool

    /// True when LazyFS's middle third of this write (parts=3: each part size/3 bytes, the last one takes the rest)
    /// covers a whole 512-byte-aligned sector.
    var middleThirdHoldsSector: Bool {
        let start = offset + size / 3
        let end = offset + 2 * (size / 3)
        let firstSector = (start + 511) / 512 * 512
        return firstSector + 512 <= end
    }

    static func parse(_ log: String, wal: String) -> [WALWrite] {
        var writes: [WALWrite] = []
        var sinceSync = 0
        for line in log.split(separator: "\n") {
            if line.contains("lfs_fsync(path=\(wal),") {
                sinceSync = 0
                continue
            }
            guard let range = line.range(of: "lfs_write(path=\(wal),size=") else { continue }
            let fields = line[range.upperBound...].split(whereSeparator: { $0 == "," || $0 == ")" || $0 == "=" })
            // fields: size, "off", offset
            guard fields.count >= 3, let size = Int(fields[0]), let offset = Int(fields[2]) else { continue }
            if sinceSync > 0, let last = writes.indices.last { writes[last].aloneBetweenSyncs = false }
            writes.append(WALWrite(index: writes.count + 1, offset: offset, size: size, aloneBetweenSyncs: sinceSync == 0))
            sinceSync += 1
        }
        // A write not followed by an fsync is not alone.
        if sinceSync > 0, let last = writes.indices.last { writes[last].aloneBetweenSyncs = false }
        return writes
    }
}
