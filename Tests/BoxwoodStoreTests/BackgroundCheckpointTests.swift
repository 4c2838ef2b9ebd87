import Testing
import Foundation
@testable import BoxwoodStore
import BoxwoodCrashWorkload

/// Background checkpoints against a model: commits of random sizes (inline, compressible and overflow values,
/// removes, range removes) into three tables with tiny checkpoint thresholds, so that a checkpoint is written in the
/// background every few commits while the next commits and reads go on; reads on the writer and on a second value
/// box (another process's view), and read snapshots of the second box held across commits and checkpoints, which
/// must keep reading what they pinned. Now and then: an explicit checkpoint, `check()`, a close and reopen of either
/// box. At the end the writer is reopened and compared with the model. Plain and encrypted.
@Suite struct BackgroundCheckpointTests {
    @Test(arguments: [false, true])
    func randomizedAgainstModel(encrypted: Bool) throws {
        let seed = crashTestSeed()
        let steps = environmentCount("BOXWOOD_BACKGROUND_STEPS", default: 1_500)
        print("BackgroundCheckpointTests\(encrypted ? " (encrypted)" : ""): seed \(seed), \(steps) steps (replay with BOXWOOD_SEED=\(seed))")
        var rng = SplitMix64(seed: seed)
        let dir = NSTemporaryDirectory() + "bw-bgckpt-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }

        var options = ValueBoxOptions(durability: [Durability.normal, .full, .off][rng.below(3)])
        options.checkpointWALBytes = UInt64(16 << 10 + rng.below(48 << 10))
        options.checkpointMemoryBytes = 128 << 10 + rng.below(512 << 10)
        options.encryption = encrypted ? CrashEncryption.first : nil
        let tables = (1...3).map { ValueBoxTable(id: Int32($0), keyType: .binary) }
        var model: [[UInt32: [UInt8]]] = [[:], [:], [:]]

        func key(_ k: UInt32) -> ValueBoxKey {
            var key = ValueBoxKey(length: 4)
            key.setUInt32(0, value: k)
            return key
        }
        func value(_ rng: inout SplitMix64, _ k: UInt32) -> [UInt8] {
            switch rng.below(10) {
            case 0: return rng.bytes(2_000 + rng.below(20_000))  // overflow pages
            case 1...3: return Array(String(repeating: "compressible \(k) ", count: 1 + rng.below(60)).utf8)
            default: return rng.bytes(rng.below(300))
            }
        }
        func compare(_ box: ValueBox, _ model: [[UInt32: [UInt8]]], _ what: String, _ rng: inout SplitMix64) throws {
            for (t, table) in tables.enumerated() {
                for _ in 0..<8 {
                    let k = UInt32(rng.below(400))
                    let got = try box.get(table, key: key(k))?.makeArray()
                    #expect(got == model[t][k], "seed \(seed): \(what): table \(t + 1) key \(k)")
                }
            }
            if rng.chance(0.1) {
                for (t, table) in tables.enumerated() {
                    var seen: [UInt32: [UInt8]] = [:]
                    try box.range(table, start: ValueBoxKey(length: 0), end: ValueBoxKey([0xff, 0xff, 0xff, 0xff, 0xff]), values: { k, v in
                        seen[k.getUInt32(0)] = v.makeArray()
                        return true
                    }, limit: 0)
                    #expect(seen == model[t], "seed \(seed): \(what): table \(t + 1) scanned differs (\(seen.count) vs \(model[t].count) entries)")
                }
            }
        }

        var writer = try ValueBox(path: dir, options: options)
        var reader = try ValueBox(path: dir, options: options)
        var pinned: (model: [[UInt32: [UInt8]]], commitsLeft: Int)? = nil
        var backgroundSeen = 0, generations: Set<UInt64> = []
        for step in 1...steps {
            let what = "step \(step)"
            // A transaction.
            let before = model
            try writer.begin()
            for _ in 0..<(1 + rng.below(rng.chance(0.1) ? 400 : 20)) {
                let t = rng.below(3)
                let k = UInt32(rng.below(400))
                switch rng.below(10) {
                case 0..<7:
                    let v = value(&rng, k)
                    try writer.set(tables[t], key: key(k), value: MemoryBuffer(v))
                    model[t][k] = v
                case 7, 8:
                    try writer.remove(tables[t], key: key(k))
                    model[t][k] = nil
                default:
                    let high = k + UInt32(rng.below(20))
                    try writer.removeRange(tables[t], start: key(k), end: key(high))
                    for r in k...high { model[t][r] = nil }
                }
            }
            if rng.chance(0.05) {
                writer.abort()
                model = before
            } else {
                try writer.commit()
            }
            if writer.isCheckpointingInBackground { backgroundSeen += 1 }
            if let error = writer.lastCheckpointError { Issue.record("seed \(seed): \(what): checkpoint failed: \(error)") }
            generations.insert(try writer.statistics().checkpointGeneration)

            // Reads.
            try compare(writer, model, what + " (writer)", &rng)
            if let snapshot = pinned {
                try compare(reader, snapshot.model, what + " (pinned snapshot)", &rng)
                if snapshot.commitsLeft == 0 { reader.endRead(); pinned = nil } else { pinned!.commitsLeft -= 1 }
            } else {
                try compare(reader, model, what + " (reader)", &rng)
                if rng.chance(0.05) {
                    try reader.beginRead()
                    pinned = (model, 5 + rng.below(40))
                }
            }

            // Maintenance.
            switch rng.below(200) {
            case 0..<3: try writer.checkpoint()
            case 3..<5:
                let report = try writer.check()
                #expect(report.problems == [], "seed \(seed): \(what): check found \(report.problems.prefix(3))")
            case 5:
                try writer.close()
                writer = try ValueBox(path: dir, options: options)
            case 6 where pinned == nil:
                try reader.close()
                reader = try ValueBox(path: dir, options: options)
            default: break
            }
        }
        #expect(backgroundSeen > 0, "seed \(seed): no commit left a background checkpoint running")
        reader.endRead()
        try reader.close()
        try writer.close()
        let reopened = try ValueBox(path: dir, options: options)
        #expect(try snapshotOf(reopened, tables) == model, "seed \(seed): reopened database differs from the model")
        let report = try reopened.check()
        #expect(report.problems == [], "seed \(seed): final check found \(report.problems.prefix(3))")
        try reopened.close()
        print("BackgroundCheckpointTests\(encrypted ? " (encrypted)" : ""): seed \(seed): \(steps) transactions, \(backgroundSeen) left a background checkpoint running, \(generations.count) checkpoint generations, durability \(options.durability)")
    }

    private func snapshotOf(_ box: ValueBox, _ tables: [ValueBoxTable]) throws -> [[UInt32: [UInt8]]] {
        var result: [[UInt32: [UInt8]]] = []
        for table in tables {
            var seen: [UInt32: [UInt8]] = [:]
            try box.range(table, start: ValueBoxKey(length: 0), end: ValueBoxKey([0xff, 0xff, 0xff, 0xff, 0xff]), values: { k, v in
                seen[k.getUInt32(0)] = v.makeArray()
                return true
            }, limit: 0)
            result.append(seen)
        }
        return result
    }
}
