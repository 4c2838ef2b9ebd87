import Foundation
import Testing
import BoxwoodCrashWorkload
@testable import BoxwoodStore
import BoxwoodStoreTesting

// Power-cut simulation: the engine runs on a `SimulatedDisk`; the power goes off at a random mutating
// operation (inside a commit, a checkpoint, a WAL reset, a recovery or the creation of the database); the
// disk reboots with a random fate for every unsynced write (kept, dropped, torn at 512-byte sectors,
// reordered) and unsynced directory entry; the database is reopened and compared with the workload model.
//
//     BOXWOOD_SEED=<seed> swift test --filter PowerCutTests        replays a run
//     BOXWOOD_POWER_CUTS=100000 swift test --filter PowerCutTests  long run (cuts per durability mode)

@Suite struct PowerCutTests {
    static let path = "/db"

    /// Also on an encrypted database (`encrypted`): torn and dropped writes of sealed pages and records.
    @Test(arguments: [Durability.full, .normal], [false, true])
    func powerCutsNeverLoseAcknowledgedCommitsOrCorrupt(_ durability: Durability, _ encrypted: Bool) throws {
        let seed = crashTestSeed()
        let cuts = environmentCount("BOXWOOD_POWER_CUTS", default: 500)
        print("PowerCutTests seed: \(seed) (\(durability)\(encrypted ? ", encrypted" : ""), \(cuts) cuts; replay with BOXWOOD_SEED=\(seed))")
        var rng = SplitMix64(seed: seed)
        let workload = CrashWorkload(seed: seed)
        var options = crashTestOptions(durability)
        options.encryption = encrypted ? CrashEncryption.first : nil
        var disk = SimulatedDisk(seed: rng.next())
        var applied: UInt64 = 0        // the state verified after the last reboot
        var durableFloor: UInt64 = 0   // commits that a completed checkpoint (or a full-mode commit) made durable
        var creations = 0, inCheckpoint = 0, longestRun = 0
        var totals = SimulatedDisk.Statistics()
        let started = Date()

        for cut in 1...cuts {
            let context = "seed \(seed), \(durability), cut \(cut)"
            if rng.chance(0.04) {
                // A new device: cuts during the creation of the directory, the files and the meta pages.
                totals.add(disk.statistics)
                disk = SimulatedDisk(seed: rng.next())
                applied = 0
                durableFloor = 0
                creations += 1
            }
            disk.schedulePowerCut(afterOperations: 1 + rng.below(rng.chance(0.3) ? 12 : 70))
            var acknowledged = applied
            var checkpointing = false
            do {
                let box = try ValueBox(path: Self.path, options: options, fileSystem: disk)
                var n = applied + 1
                while true {
                    checkpointing = box.wal!.size + 8192 >= options.checkpointWALBytes
                    try workload.run(n, in: box)
                    acknowledged = n
                    if durability == .full { durableFloor = n } else { durableFloor = max(durableFloor, box.meta.lastSequence) }
                    n += 1
                }
            } catch {
                if !disk.isPoweredOff {
                    Issue.record("\(context): unexpected error before the power cut: \(error)")
                    return
                }
            }
            if checkpointing { inCheckpoint += 1 }
            longestRun = max(longestRun, Int(acknowledged - applied))
            disk = try disk.reboot()

            do {
                let box = try ValueBox(path: Self.path, options: options, fileSystem: disk)
                let m = try (workload.lastApplied(box) ?? .max)
                if m < durableFloor || m > acknowledged + 1 {
                    Issue.record("\(context): reopened at transaction \(m); acknowledged \(acknowledged), durable floor \(durableFloor) (\(durability) may lose \(durability == .full ? "nothing" : "only commits after the last checkpoint"))")
                    return
                }
                if let difference = try workload.difference(box, after: m) {
                    Issue.record("\(context): partial or wrong transaction: \(difference)")
                    return
                }
                let report = try box.check()
                if !report.problems.isEmpty {
                    Issue.record("\(context): check failed: \(report.problems.prefix(3))")
                    return
                }
                try box.close()
                applied = m
                durableFloor = m
            } catch {
                Issue.record("\(context): reopen after the cut failed: \(error)")
                return
            }
        }
        totals.add(disk.statistics)
        let s = totals
        print("PowerCutTests \(durability)\(encrypted ? ", encrypted" : ""): \(cuts) cuts, 0 failures (\(creations) during creation, \(inCheckpoint) near a checkpoint, up to \(longestRun) commits between cuts); writes kept \(s.writesKept), torn \(s.writesTorn), dropped \(s.writesDropped); directory changes dropped \(s.directoryChangesDropped); \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    /// Every possible cut point while a database is created and its first commits land (full durability),
    /// each with several fates: every acknowledged commit survives, which needs the new files' directory
    /// entries synced as well as their bytes.
    @Test(arguments: [false, true])
    func everyCutPointDuringCreation(encrypted: Bool) throws {
        let seed = crashTestSeed()
        let workload = CrashWorkload(seed: seed)
        var options = crashTestOptions(.full)
        options.encryption = encrypted ? CrashEncryption.first : nil
        var point = 1
        var scenarioFinished = false
        while !scenarioFinished {
            for fate in 0..<4 {
                let disk = SimulatedDisk(seed: seed &+ UInt64(point * 4 + fate))
                disk.schedulePowerCut(afterOperations: point)
                var acknowledged: UInt64 = 0
                do {
                    let box = try ValueBox(path: Self.path, options: options, fileSystem: disk)
                    for n: UInt64 in 1...3 {
                        try workload.run(n, in: box)
                        acknowledged = n
                    }
                    try box.close()
                } catch {
                    #expect(disk.isPoweredOff, "cut point \(point): \(error)")
                }
                if !disk.isPoweredOff { scenarioFinished = true; break } // past the end: every point was tried
                let context = "seed \(seed), cut point \(point), fate \(fate)"
                let box = try ValueBox(path: Self.path, options: options, fileSystem: disk.reboot())
                let m = try (workload.lastApplied(box) ?? .max)
                #expect(m >= acknowledged && m <= acknowledged + 1, "\(context): reopened at \(m), acknowledged \(acknowledged)")
                #expect(try workload.difference(box, after: m) == nil, "\(context)")
                #expect(try box.check().problems == [], "\(context)")
                try box.close()
            }
            point += 1
        }
        #expect(point > 10, "the scenario performs more than ten mutating operations")
    }

    /// The simulator itself: a created file whose directory was not synced can vanish at a power cut; once
    /// the directory is synced it cannot. (What makes the test above able to catch a missing directory sync.)
    @Test func unsyncedDirectoryEntriesCanVanish() throws {
        var vanished = 0
        for seed in UInt64(1)...64 {
            let disk = SimulatedDisk(seed: seed)
            try disk.createDirectory("/d")
            try disk.syncDirectory("/")
            let file = try disk.open("/d/f", create: true, readOnly: false)
            try file.write([UInt8](repeating: 7, count: 100), count: 100, offset: 0)
            try file.sync()
            let synced = try disk.open("/d/g", create: true, readOnly: false)
            try disk.syncDirectory("/d")
            _ = synced
            let second = try disk.open("/d/h", create: true, readOnly: false)
            _ = second
            let after = try disk.reboot()
            #expect(after.kind(of: "/d/f") == .regular, "synced through its directory")
            #expect(after.kind(of: "/d/g") == .regular)
            if after.kind(of: "/d/h") == nil { vanished += 1 }
            let reopened = try after.open("/d/f", create: false, readOnly: true)
            var buffer = [UInt8](repeating: 0, count: 100)
            #expect(try reopened.read(into: &buffer, count: 100, offset: 0) == 100)
            #expect(buffer == [UInt8](repeating: 7, count: 100))
        }
        #expect(vanished > 0, "a file created without a directory sync must sometimes be lost")
    }
}
