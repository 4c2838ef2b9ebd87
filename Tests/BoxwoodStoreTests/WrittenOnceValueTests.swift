import Foundation
import Testing
@testable import BoxwoodStore

/// Values written once (`ValueBox+WrittenOnceValues.swift`): a large value goes into the data file when it is set and
/// its WAL record names the extent. These tests hold the design to its guarantees: a model run with a second value box
/// catching up, aborts, checkpoints (inline and in the background) and unclean reopens, where every state reads back
/// and `check` accounts for every page; an extent a power cut lost after a restart cuts its record as a torn tail in
/// `normal` mode, and is refused as damage when the record was synced (`full`) or nothing restarted; a version 5 log
/// keeps getting values in its records until a checkpoint makes it version 6; a salvage reads the value from the
/// extent. Unclean shutdowns are the files copied while the value box is open (no shared header: the open sees a
/// restart).
@Suite struct WrittenOnceValueTests {
    private typealias Model = [[UInt8]: [UInt8]]
    private let table = ValueBoxTable(id: 1, keyType: .binary)

    private func options(_ durability: Durability = .normal) -> ValueBoxOptions {
        var options = ValueBoxOptions(durability: durability)
        options.lockTimeout = 5
        return options
    }

    private func expectMatches(_ box: ValueBox, _ model: Model, _ comment: Comment) throws {
        let entries = try box.allEntries(table)
        let expected = model.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        #expect(entries.map(\.0) == expected.map(\.key), "\(comment): keys")
        #expect(entries.map(\.1) == expected.map(\.value), "\(comment): values")
    }

    /// The page number of the extent head holding the value of `key` (lent from the mapping).
    private func extentHead(_ box: ValueBox, _ key: [UInt8]) throws -> UInt64? {
        try box.withValue(table, key: ValueBoxKey(key)) { bytes in box.pager.pageNumber(of: bytes.baseAddress!) } ?? nil
    }

    /// Random transactions against a dictionary: values from a few bytes to 200 KB (most large ones written once),
    /// overwrites, removes and aborts; a second value box reads after every commit (it catches up by replaying the
    /// records, so it adopts the extents); now and then `check` (no page unaccounted for), an explicit checkpoint, and
    /// an unclean reopen of a copy. Small checkpoint thresholds make background checkpoints run under the commits, so
    /// values go past their fence too.
    @Test func randomizedAgainstModel() throws {
        let seed = crashTestSeed()
        let steps = environmentCount("BOXWOOD_WRITTEN_ONCE_STEPS", default: 300)
        print("WrittenOnceValueTests: seed \(seed), \(steps) steps (replay with BOXWOOD_SEED=\(seed))")
        var rng = SplitMix64(seed: seed)
        let root = temporaryDatabasePath("written-once-model")
        defer { removeItem(root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let path = root + "/db"
        var options = options([Durability.normal, .full, .off][rng.below(3)])
        options.checkpointWALBytes = UInt64(32 << 10 + rng.below(256 << 10))
        options.checkpointMemoryBytes = 256 << 10 + rng.below(1 << 20)
        var box = try ValueBox(path: path, options: options)
        let reader = try ValueBox(path: path, options: options)
        var model: Model = [:]
        var copies = 0, pastFence = 0
        for step in 1...steps {
            let context = "seed \(seed), step \(step)"
            let before = model
            if box.isCheckpointingInBackground { pastFence += 1 }
            try box.begin()
            for _ in 0..<(1 + rng.below(8)) {
                let key = [UInt8(rng.below(40))]
                if rng.chance(0.2) {
                    try box.remove(table, key: ValueBoxKey(key))
                    model[key] = nil
                } else {
                    let length = rng.chance(0.7) ? PageLayout.overflowPayload + 1 + rng.below(rng.chance(0.2) ? 200_000 : 20_000) : rng.below(3_000)
                    let value = rng.bytes(length)
                    try box.set(table, key: ValueBoxKey(key), value: MemoryBuffer(value))
                    model[key] = value
                }
            }
            if rng.chance(0.1) {
                box.abort()
                model = before
            } else {
                try box.commit()
            }
            if let error = box.lastCheckpointError { Issue.record("\(context): checkpoint failed: \(error)") }
            try expectMatches(reader, model, "\(context) (reader)")
            switch rng.below(40) {
            case 0:
                let report = try box.check()
                #expect(report.problems == [], "\(context): \(report.problems.prefix(3))")
            case 1:
                try box.checkpoint()
            case 2:
                // An unclean stop: the files as they are now (a background checkpoint finished first, so that the
                // copy does not race its writes), opened after a "restart".
                box.waitForBackgroundCheckpoint()
                let copy = root + "/copy\(copies)"
                copies += 1
                try copyDatabaseFiles(from: path, to: copy)
                let reopened = try ValueBox(path: copy, options: options)
                try expectMatches(reopened, model, "\(context) (reopened copy)")
                let report = try reopened.check()
                #expect(report.problems == [], "\(context): reopened copy: \(report.problems.prefix(3))")
                try reopened.close()
                removeItem(copy)
            case 3:
                try box.close()
                box = try ValueBox(path: path, options: options)
            default: break
            }
        }
        print("WrittenOnceValueTests: seed \(seed): \(pastFence) transactions began while a background checkpoint ran")
        #expect(pastFence > 0, "seed \(seed): no transaction wrote past a running checkpoint's fence")
        try expectMatches(box, model, "seed \(seed): at the end")
        let report = try box.check()
        #expect(report.problems == [], "seed \(seed): at the end: \(report.problems.prefix(3))")
        try reader.close()
        try box.close()
    }

    /// Three commits — a small value, a value written once, a small value — and the files copied (an unclean stop);
    /// in the copy the extent's pages are zeros, as when a power cut lost the unsynced data-file writes but kept
    /// the log. Returns the copy's path and the model before the second commit.
    private func lostExtent(_ root: String, durability: Durability) throws -> (copy: String, prefix: Model) {
        let path = root + "/db"
        let box = try ValueBox(path: path, options: options(durability))
        var model: Model = [:]
        func commit(_ key: [UInt8], _ value: [UInt8]) throws {
            try box.begin()
            try box.set(table, key: ValueBoxKey(key), value: MemoryBuffer(value))
            try box.commit()
            model[key] = value
        }
        var rng = SplitMix64(seed: 7)
        try commit([1], rng.bytes(100))
        let prefix = model
        try commit([2], rng.bytes(3 * PageLayout.pageSize))
        try commit([3], rng.bytes(100))
        let head = try #require(try extentHead(box, [2]))
        let copy = root + "/copy"
        try copyDatabaseFiles(from: path, to: copy)
        try box.close()
        var data = try readFile(copy + "/data")
        let start = Int(head) * PageLayout.pageSize
        for i in start..<(start + 4 * PageLayout.pageSize) { data[i] = 0 }
        try Data(data).write(to: URL(fileURLWithPath: copy + "/data"))
        return (copy, prefix)
    }

    @Test func aLostExtentCutsItsRecordAfterARestartInNormalMode() throws {
        let root = temporaryDatabasePath("written-once-lost")
        defer { removeItem(root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let (copy, prefix) = try lostExtent(root, durability: .normal)
        let box = try ValueBox(path: copy, options: options())
        #expect(box.transactionStateVersion == 1, "the commit naming the lost extent and the one after it are cut")
        #expect(box.lastRecovery?.tornTailWasCut == true)
        try expectMatches(box, prefix, "after the cut")
        // Usable: a new value written once, then a clean reopen.
        try box.begin()
        try box.set(table, key: ValueBoxKey([4]), value: MemoryBuffer([UInt8](repeating: 4, count: 10_000)))
        try box.commit()
        try box.close()
        let reopened = try ValueBox(path: copy, options: options())
        var expected = prefix
        expected[[4]] = [UInt8](repeating: 4, count: 10_000)
        try expectMatches(reopened, expected, "reopened")
        #expect(try reopened.check().problems == [])
        try reopened.close()
    }

    @Test func aLostExtentOfASyncedCommitIsDamage() throws {
        let root = temporaryDatabasePath("written-once-lost-full")
        defer { removeItem(root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let (copy, _) = try lostExtent(root, durability: .full)
        let error = expectError("corrupted") { _ = try ValueBox(path: copy, options: options(.full)) }
        if case let .corrupted(file, _, _)? = error { #expect(file.hasSuffix("/data")) }
    }

    @Test func aMissingExtentWithinTheBootIsDamage() throws {
        let path = temporaryDatabasePath("written-once-same-boot")
        defer { removeItem(path) }
        let box = try ValueBox(path: path, options: options())
        try box.begin()
        try box.set(table, key: ValueBoxKey([2]), value: MemoryBuffer([UInt8](repeating: 9, count: 20_000)))
        try box.commit()
        let head = try #require(try extentHead(box, [2]))
        // Stray bytes over the extent while the database is open (the shared header proves no restart).
        let handle = try #require(FileHandle(forWritingAtPath: path + "/data"))
        try handle.seek(toOffset: head * UInt64(PageLayout.pageSize) + 100)
        try handle.write(contentsOf: Data(repeating: 0xAB, count: 64))
        try handle.close()
        _ = expectError("corrupted") { _ = try ValueBox(path: path, options: options()) }
        try box.close()
    }

    /// A log of version 5 (written by the build before values written once) gets values in its records; the next
    /// checkpoint's reset makes it version 6, and values are written once from then on.
    @Test func aVersion5LogGetsTheBytesUntilItsReset() throws {
        let path = temporaryDatabasePath("written-once-v5")
        defer { removeItem(path) }
        var box = try ValueBox(path: path, options: options())
        try box.close()
        var wal = try readFile(path + "/wal")
        wal.withUnsafeMutableBytes { p in
            store32(p.baseAddress!, 8, 5)
            store64(p.baseAddress!, 24, XXH64.hash(p.baseAddress!, 24))
        }
        try Data(wal).write(to: URL(fileURLWithPath: path + "/wal"))
        box = try ValueBox(path: path, options: options())
        let value = [UInt8](repeating: 5, count: 30_000)
        let walBefore = try box.statistics().walBytes
        try box.begin()
        try box.set(table, key: ValueBoxKey([1]), value: MemoryBuffer(value))
        try box.commit()
        #expect(try box.statistics().walBytes - walBefore > 30_000, "a version 5 log carries the value")
        #expect(try extentHead(box, [1]) == nil, "lent from memory until the checkpoint")
        try box.checkpoint()
        #expect(try readFile(path + "/wal").withUnsafeBytes { load32($0.baseAddress!, 8) } == WriteAheadLog.version)
        let walAfterReset = try box.statistics().walBytes
        try box.begin()
        try box.set(table, key: ValueBoxKey([2]), value: MemoryBuffer(value))
        try box.commit()
        #expect(try box.statistics().walBytes - walAfterReset < 1_000, "a version 6 log names the extent")
        #expect(try extentHead(box, [2]) != nil, "lent from the mapping at once")
        try expectMatches(box, [[1]: value, [2]: value], "both values")
        try box.close()
    }

    /// A salvage replays the log of a damaged database into a new one: a value written once comes from its extent.
    @Test func salvageReadsValuesWrittenOnce() throws {
        let root = temporaryDatabasePath("written-once-salvage")
        defer { removeItem(root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let path = root + "/db"
        let box = try ValueBox(path: path, options: options())
        var rng = SplitMix64(seed: 3)
        let value = rng.bytes(50_000)
        try box.begin()
        try box.set(table, key: ValueBoxKey([1]), value: MemoryBuffer(value))
        try box.commit()
        let copy = root + "/copy"
        try copyDatabaseFiles(from: path, to: copy)
        try box.close()
        let report = try ValueBox.salvage(from: copy, to: root + "/salvaged")
        #expect(report.wal.commitsReplayed == 1 && !report.wal.commitsLost)
        let salvaged = try ValueBox(path: root + "/salvaged", options: options())
        try expectMatches(salvaged, [[1]: value], "salvaged")
        try salvaged.close()
    }
}
