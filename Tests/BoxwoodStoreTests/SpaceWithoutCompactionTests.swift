import Foundation
import Testing
@testable import BoxwoodStore
import BoxwoodStoreTesting

// Space without compaction (issue 24, goal 6): leaves that overflow share with a sibling (BTree+Balance.swift), and
// close moves the pages past a line into free pages below it and cuts the file (BTree+Relocation.swift,
// `ValueBox.checkpoint(shrinking:)`).
//
//     BOXWOOD_SEED=<seed> swift test --filter SpaceWithoutCompactionTests     replays a run
@Suite struct SpaceWithoutCompactionTests {
    static func seed() -> UInt64 {
        if let s = ProcessInfo.processInfo.environment["BOXWOOD_SEED"], let v = UInt64(s) { return v }
        return UInt64.random(in: 0...UInt64.max)
    }

    func fileSize(_ path: String) throws -> UInt64 {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.uint64Value ?? 0
    }

    /// A random binary key: mostly short, some long (long separators fill branch pages sooner).
    func randomKey(_ rng: inout SplitMix64) -> [UInt8] {
        let length = rng.chance(0.1) ? 40 + rng.below(200) : 4 + rng.below(20)
        return randomBytes(length, &rng)
    }

    /// A random value: mostly ~100 bytes, some empty, some large enough for overflow pages.
    func randomValue(_ rng: inout SplitMix64) -> [UInt8] {
        if rng.chance(0.02) { return randomBytes(2_000 + rng.below(6_000), &rng) }
        if rng.chance(0.05) { return [] }
        return randomBytes(20 + rng.below(200), &rng)
    }

    /// Compares every entry of `table` with the model; the first difference, or nil.
    func difference(_ box: ValueBox, _ table: ValueBoxTable, _ model: [[UInt8]: [UInt8]]) throws -> String? {
        let entries = try box.allEntries(table)
        if entries.count != model.count { return "\(entries.count) entries, the model has \(model.count)" }
        var previous: [UInt8]? = nil
        for (key, value) in entries {
            if let previous, !previous.lexicographicallyPrecedes(key) { return "keys out of order at \(key)" }
            previous = key
            guard let expected = model[key] else { return "key \(key) is not in the model" }
            if expected != value { return "key \(key): value of \(value.count) bytes, the model has \(expected.count)" }
        }
        return nil
    }

    /// Random inserts, removes and overwrites (same size, larger, smaller) in random transactions, some aborted,
    /// some checkpoints and reopens; after every transaction the contents equal a dictionary's, after every phase
    /// `check()` passes. The page-fill statistics are checked after the insert-only first phase: a random-order
    /// load leaves leaves well above the ln 2 ≈ 69 % that plain splits give.
    @Test(arguments: 0..<3)
    func randomOperationsKeepContentsAndFill(_ run: Int) throws {
        let seed = Self.seed() &+ UInt64(run)
        print("SpaceWithoutCompactionTests seed: \(seed) (replay with BOXWOOD_SEED=\(seed) and run 0)")
        var rng = SplitMix64(seed: seed)
        let db = temporaryDatabasePath("space-model")
        defer { removeItem(db) }
        let table = ValueBoxTable(id: 7, keyType: .binary)
        var model: [[UInt8]: [UInt8]] = [:]
        var keys: [[UInt8]] = []
        var box = try ValueBox(path: db)

        // Phase 1: inserts only, in random order, in transactions of random size.
        while model.count < 6_000 {
            try box.begin()
            for _ in 0..<(1 + rng.below(300)) {
                let key = randomKey(&rng)
                let value = randomBytes(60 + rng.below(80), &rng)
                if model.updateValue(value, forKey: key) == nil { keys.append(key) }
                try box.set(table, key: bkey(key), value: mbuf(value))
            }
            try box.commit()
        }
        if let problem = try difference(box, table, model) { Issue.record("seed \(seed), after the load: \(problem)"); return }
        let loaded = try box.spaceUsage()
        print("after a random load of \(model.count) keys: " + loaded.lines.joined(separator: "; "))
        #expect(loaded.leafFill > 0.78, "seed \(seed): leaf fill \(loaded.leafFill) after a random-order load")
        #expect(try box.check().problems == [])

        // Phase 2: everything mixed.
        for step in 0..<150 {
            let abort = rng.chance(0.1)
            var staged = model
            var stagedKeys = keys
            try box.begin()
            for _ in 0..<(1 + rng.below(200)) {
                let roll = rng.below(100)
                if roll < 35 || stagedKeys.isEmpty {
                    let key = randomKey(&rng)
                    let value = randomValue(&rng)
                    if staged.updateValue(value, forKey: key) == nil { stagedKeys.append(key) }
                    try box.set(table, key: bkey(key), value: mbuf(value))
                } else if roll < 70 {
                    let i = rng.below(stagedKeys.count)
                    let key = stagedKeys.remove(at: i)
                    staged[key] = nil
                    try box.remove(table, key: bkey(key))
                } else {
                    // Overwrite: the same size, larger or smaller.
                    let key = stagedKeys[rng.below(stagedKeys.count)]
                    let old = staged[key]!.count
                    let value = randomBytes(rng.chance(0.34) ? old : (rng.chance(0.5) ? old + 1 + rng.below(300) : rng.below(old + 1)), &rng)
                    staged[key] = value
                    try box.set(table, key: bkey(key), value: mbuf(value))
                }
            }
            if abort {
                box.abort()
            } else {
                try box.commit()
                model = staged
                keys = stagedKeys
            }
            if let problem = try difference(box, table, model) { Issue.record("seed \(seed), step \(step): \(problem)"); return }
            if rng.chance(0.05) { try box.checkpoint() }
            if rng.chance(0.03) {
                try box.close()
                box = try ValueBox(path: db)
                if let problem = try difference(box, table, model) { Issue.record("seed \(seed), step \(step), reopened: \(problem)"); return }
            }
        }
        // Phase 3: remove most keys in random order (merges and emptied leaves).
        try box.begin()
        keys.shuffle(using: &rng)
        for key in keys.prefix(keys.count * 9 / 10) {
            model[key] = nil
            try box.remove(table, key: bkey(key))
        }
        try box.commit()
        if let problem = try difference(box, table, model) { Issue.record("seed \(seed), after the removes: \(problem)"); return }
        let report = try box.check()
        #expect(report.problems == [], "seed \(seed)")
        try box.close()
        box = try ValueBox(path: db)
        if let problem = try difference(box, table, model) { Issue.record("seed \(seed), reopened at the end: \(problem)") }
        #expect(try box.check().problems == [])
        try box.close()
    }

    /// The redistribution's promise, page by page: in a tree built by inserts in random order, two adjacent leaves
    /// under one parent fit in one page only where an append past a leaf's last cell split the old way (a page of
    /// one cell beside a full one): at most one leaf in twenty.
    @Test func aRandomLoadLeavesFewMergeableNeighbours() throws {
        let seed = Self.seed()
        print("SpaceWithoutCompactionTests seed: \(seed) (aRandomLoadLeavesFewMergeableNeighbours)")
        var rng = SplitMix64(seed: seed)
        let db = temporaryDatabasePath("space-neighbours")
        defer { removeItem(db) }
        let table = ValueBoxTable(id: 1, keyType: .binary)
        let box = try ValueBox(path: db)
        // Fixed-size cells and keys drawn from a fixed set in random order.
        var keys = (0..<20_000).map { i -> [UInt8] in [UInt8(i >> 8 & 0xFF), UInt8(i & 0xFF), 0, 0] }
        keys.shuffle(using: &rng)
        try box.begin()
        for key in keys { try box.set(table, key: bkey(key), value: mbuf(randomBytes(100, &rng))) }
        try box.commit()
        let usage = try box.spaceUsage()
        print("fixed cells, random order: " + usage.lines.joined(separator: "; "))
        #expect(usage.leafFill > 0.78, "seed \(seed)")
        // An append split leaves a page of one cell beside a full one; in a random order it is rare.
        #expect(usage.mergeableLeafPairs * 20 <= usage.leafPages, "seed \(seed): \(usage.mergeableLeafPairs) mergeable pairs of \(usage.leafPages) leaves")
        #expect(try box.check().problems == [])
        try box.close()
    }

    /// A random load, then random overwrites over several checkpoints, leaves free pages all over the file; close
    /// moves the pages past a line into free pages below it and cuts the file: far fewer free pages, contents and
    /// integrity intact after reopening. Also on an encrypted database (pages moved are sealed again in their new
    /// slots).
    @Test(arguments: [false, true])
    func closeGivesTheFreePagesBack(_ encrypted: Bool) throws {
        let seed = Self.seed()
        print("SpaceWithoutCompactionTests seed: \(seed) (closeGivesTheFreePagesBack, encrypted: \(encrypted))")
        var rng = SplitMix64(seed: seed)
        let db = temporaryDatabasePath("space-close")
        defer { removeItem(db) }
        let table = ValueBoxTable(id: 1, keyType: .binary)
        var options = encrypted ? EncryptionFixtures.options() : ValueBoxOptions()
        options.checkpointMemoryBytes = 2 << 20
        var model: [[UInt8]: [UInt8]] = [:]
        var box = try ValueBox(path: db, options: options)
        for _ in 0..<20 {
            try box.begin()
            for _ in 0..<1_000 {
                let key = randomBytes(16, &rng)
                let value = randomBytes(100, &rng)
                model[key] = value
                try box.set(table, key: bkey(key), value: mbuf(value))
            }
            try box.commit()
        }
        let keys = Array(model.keys)
        for _ in 0..<10 {
            try box.begin()
            for _ in 0..<1_000 {
                let key = keys[rng.below(keys.count)]
                let value = randomBytes(100, &rng)
                model[key] = value
                try box.set(table, key: bkey(key), value: mbuf(value))
            }
            try box.commit()
        }
        // No checkpoint here: a close with nothing to write shrinks nothing.
        let before = try box.spaceUsage()
        let sizeBefore = try fileSize(db + "/data")
        print("before close: \(sizeBefore) bytes; " + before.lines.joined(separator: "; "))
        #expect(before.freePages + before.releasedPages > Int(before.pagesTotal) / 8, "the workload should leave free pages")
        try box.close()
        #expect(box.pagesMovedByLastShrink > 0)
        let sizeAfter = try fileSize(db + "/data")
        box = try ValueBox(path: db, options: options)
        let after = try box.spaceUsage()
        print("after close: \(sizeAfter) bytes; " + after.lines.joined(separator: "; "))
        #expect(encrypted || sizeAfter == after.pagesTotal * UInt64(PageLayout.pageSize))
        #expect(sizeAfter < sizeBefore * 2 / 3)
        #expect(after.freePages + after.releasedPages < (before.freePages + before.releasedPages) / 4)
        #expect(after.pagesUnaccounted == 0)
        if let problem = try difference(box, table, model) { Issue.record("seed \(seed): \(problem)") }
        #expect(try box.check().problems == [])
        try box.close()
    }

    /// A reader of an older snapshot (another value box) pins its pages: close neither moves nor cuts anything it
    /// may read, and its reads stay what they were; once it is gone, the next close shrinks the file.
    @Test func aReaderOfAnOlderSnapshotIsNeverAffected() throws {
        let seed = Self.seed()
        print("SpaceWithoutCompactionTests seed: \(seed) (aReaderOfAnOlderSnapshotIsNeverAffected)")
        var rng = SplitMix64(seed: seed)
        let db = temporaryDatabasePath("space-reader")
        defer { removeItem(db) }
        let table = ValueBoxTable(id: 1, keyType: .binary)
        var options = ValueBoxOptions()
        options.checkpointMemoryBytes = 1 << 20
        var model: [[UInt8]: [UInt8]] = [:]
        let writer = try ValueBox(path: db, options: options)
        try writer.begin()
        for _ in 0..<15_000 {
            let key = randomBytes(16, &rng)
            model[key] = randomBytes(100, &rng)
            try writer.set(table, key: bkey(key), value: mbuf(model[key]!))
        }
        try writer.commit()
        try writer.checkpoint()
        let reader = try ValueBox(path: db)
        try reader.beginRead()
        let snapshot = try reader.allEntries(table)
        // Overwrite most of the keys: their old pages are what the reader reads.
        let keys = Array(model.keys)
        try writer.begin()
        for key in keys where rng.chance(0.7) {
            model[key] = randomBytes(100, &rng)
            try writer.set(table, key: bkey(key), value: mbuf(model[key]!))
        }
        try writer.commit()
        try writer.close()   // shrinking close, with the reader's pin in place
        #expect(try reader.allEntries(table).map { $0.0 + $0.1 } == snapshot.map { $0.0 + $0.1 })
        reader.endRead()
        if let problem = try difference(reader, table, model) { Issue.record("seed \(seed): \(problem)") }
        #expect(try reader.check().problems == [])
        let sizeWithReader = try fileSize(db + "/data")
        try reader.close()
        // Alone now: the next close that has something to write shrinks.
        let box = try ValueBox(path: db)
        try box.begin()
        let key = keys[0]
        model[key] = randomBytes(100, &rng)
        try box.set(table, key: bkey(key), value: mbuf(model[key]!))
        try box.commit()
        try box.close()
        // The reader's close (it caught up with the writer's checkpoint) or this one moved pages.
        #expect(reader.pagesMovedByLastShrink + box.pagesMovedByLastShrink > 0)
        let sizeAlone = try fileSize(db + "/data")
        print("with an older reader: \(sizeWithReader) bytes, after: \(sizeAlone)")
        #expect(sizeAlone < sizeWithReader)
        let reopened = try ValueBox(path: db)
        if let problem = try difference(reopened, table, model) { Issue.record("seed \(seed), reopened: \(problem)") }
        #expect(try reopened.check().problems == [])
        try reopened.close()
    }

    /// A power cut at every mutating operation of a shrinking close (full durability): the reopened database holds
    /// every commit and passes `check()`, whatever the unsynced writes' fates.
    @Test func powerCutsDuringAShrinkingClose() throws {
        let seed = Self.seed()
        print("SpaceWithoutCompactionTests seed: \(seed) (powerCutsDuringAShrinkingClose)")
        var options = ValueBoxOptions(durability: .full)
        options.checkpointMemoryBytes = 1 << 20
        let table = ValueBoxTable(id: 1, keyType: .binary)
        var cut = 1
        var completed = false
        var cutsInside = 0
        while !completed && cut < 2_000 {
            var rng = SplitMix64(seed: seed)
            let disk = SimulatedDisk(seed: seed &+ UInt64(cut))
            var model: [[UInt8]: [UInt8]] = [:]
            let box = try ValueBox(path: "/db", options: options, fileSystem: disk)
            try box.begin()
            for _ in 0..<8_000 {
                let key = randomBytes(12, &rng)
                model[key] = randomBytes(100, &rng)
                try box.set(table, key: bkey(key), value: mbuf(model[key]!))
            }
            try box.commit()
            try box.checkpoint()
            // The checkpoint wrote the leaves in key order: removing the lower half of the keys frees the lower pages,
            // and the pages still used sit above them.
            let sorted = model.keys.sorted { $0.lexicographicallyPrecedes($1) }
            try box.begin()
            for key in sorted.prefix(sorted.count / 2) {
                model[key] = nil
                try box.remove(table, key: bkey(key))
            }
            try box.commit()
            try box.checkpoint()
            let keys = Array(model.keys)
            // A few overwrites: some leaves move to the lower free pages, the others stay in the upper half, and
            // the close has them to checkpoint (its shrink then has pages to move, not only a tail to cut).
            try box.begin()
            for key in keys where rng.chance(0.02) {
                model[key] = randomBytes(100, &rng)
                try box.set(table, key: bkey(key), value: mbuf(model[key]!))
            }
            try box.commit()
            let before = try box.spaceUsage()
            disk.schedulePowerCut(afterOperations: cut)
            do {
                try box.close()
                completed = !disk.isPoweredOff
                if completed { #expect(box.pagesMovedByLastShrink > 0, "seed \(seed): the close should have moved pages") }
            } catch {
                #expect(disk.isPoweredOff, "seed \(seed), cut \(cut): \(error)")
                cutsInside += 1
            }
            let rebooted = try disk.reboot()
            let reopened = try ValueBox(path: "/db", options: options, fileSystem: rebooted)
            if let problem = try difference(reopened, table, model) { Issue.record("seed \(seed), cut \(cut): \(problem)"); return }
            let report = try reopened.check()
            if !report.problems.isEmpty { Issue.record("seed \(seed), cut \(cut): \(report.problems.prefix(3))"); return }
            if completed {
                // The close that ran to its end moved pages and cut the file.
                let after = try reopened.spaceUsage()
                print("a shrinking close: \(before.pagesTotal) pages (\(before.freePages + before.releasedPages) free or released) -> \(after.pagesTotal) (\(after.freePages) free)")
                #expect(after.pagesTotal < before.pagesTotal)
                #expect(after.freePages * 4 < before.freePages + before.releasedPages)
            }
            try reopened.close()
            cut += 1
        }
        print("power cuts inside a shrinking close: \(cutsInside)")
        #expect(completed)
        #expect(cutsInside > 6)
    }
}
