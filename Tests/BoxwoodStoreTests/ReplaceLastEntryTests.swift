import Foundation
import Testing
@testable import BoxwoodStore

/// `ValueBox.updateLastEntry` (`ValueBox+ReplaceLast.swift`) against a dictionary: random transactions over two binary
/// tables and an int64 table mix plain sets and removes (so that leaves split, merge and the last entry below a bound
/// is often the last of an earlier leaf) with `updateLastEntry` calls of random bounds and prefix lengths. Each call
/// checks the entry it is lent against the model, then keeps it, replaces its value, inserts a key (right after it,
/// at the bound, or anywhere) or throws; values of every size class (empty, inline, compressible, overflow chains,
/// values written once). Transactions abort now and then; after commits the test compares every table, runs
/// `check`, checkpoints, closes and reopens, and reopens copies of the open files (an unclean stop: the WAL replays
/// the logged sets, so a logging mistake shows there). Replay a failure with BOXWOOD_SEED=<seed>.
@Suite struct ReplaceLastEntryTests {
    private typealias Model = [[UInt8]: [UInt8]]
    private static let tables = [ValueBoxTable(id: 1, keyType: .binary), ValueBoxTable(id: 2, keyType: .binary),
                                 ValueBoxTable(id: 3, keyType: .int64)]

    /// <0, 0, >0 in the table's order (int64 keys: 8 bytes big-endian, signed).
    private static func compare(_ a: [UInt8], _ b: [UInt8], int64: Bool) -> Int {
        if int64 {
            func value(_ k: [UInt8]) -> Int64 { Int64(bitPattern: k.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) }
            let (x, y) = (value(a), value(b))
            return x < y ? -1 : x == y ? 0 : 1
        }
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return a.count - b.count
    }

    /// The model's answer: the last key at most `bound` whose first `prefixLength` bytes are `bound`'s.
    private static func lastEntry(_ model: Model, bound: [UInt8], prefixLength: Int, int64: Bool) -> [UInt8]? {
        var best: [UInt8]? = nil
        for key in model.keys where compare(key, bound, int64: int64) <= 0 && key.count >= prefixLength && key.prefix(prefixLength) == bound.prefix(prefixLength) {
            if best == nil || compare(key, best!, int64: int64) > 0 { best = key }
        }
        return best
    }

    private static func randomKey(_ rng: inout SplitMix64, int64: Bool) -> [UInt8] {
        if int64 {
            // Few distinct high bytes (shared prefixes), both signs.
            var bytes = [UInt8([0x00, 0x7F, 0x80, 0xFF][rng.below(4)])]
            for _ in 1..<8 { bytes.append(UInt8(rng.below(rng.chance(0.5) ? 3 : 256))) }
            return bytes
        }
        // A small alphabet with 0x00 and 0xFF: long shared prefixes, prefixes of other keys, and bounds between lists.
        let alphabet: [UInt8] = [0x00, 0x01, 0x61, 0x62, 0xFF]
        return (0..<(1 + rng.below(7))).map { _ in alphabet[rng.below(alphabet.count)] }
    }

    private static func randomValue(_ rng: inout SplitMix64) -> [UInt8] {
        switch rng.below(10) {
        case 0: return []
        case 1, 2, 3: return rng.bytes(1 + rng.below(120))
        case 4: return rng.bytes(200 + rng.below(800))
        case 5: return [UInt8](repeating: UInt8(rng.below(256)), count: 100 + rng.below(3_000))   // compressible
        case 6: return [UInt8](String(repeating: "replace the last entry ", count: 20 + rng.below(400)).utf8)
        case 7: return rng.bytes(1_100 + rng.below(6_000))                                         // overflow chain
        default: return rng.bytes(PageLayout.overflowPayload + 1 + rng.below(40_000))             // written once (when allowed)
        }
    }

    private static func expectMatches(_ box: ValueBox, _ models: [Model], _ context: String) throws {
        for (table, model) in zip(tables, models) {
            let entries = try box.allEntries(table)
            let expected = model.sorted { compare($0.key, $1.key, int64: table.keyType == .int64) < 0 }
            #expect(entries.map(\.0) == expected.map(\.key), "\(context): table \(table.id) keys")
            #expect(entries.map(\.1) == expected.map(\.value), "\(context): table \(table.id) values")
            #expect(try box.count(table) == model.count, "\(context): table \(table.id) count")
        }
    }

    private struct Thrown: Error {}

    private func run(encrypted: Bool) throws {
        let seed = crashTestSeed()
        let steps = environmentCount("BOXWOOD_REPLACE_LAST_STEPS", default: 150)
        print("ReplaceLastEntryTests: seed \(seed), \(steps) transactions, encrypted \(encrypted) (replay with BOXWOOD_SEED=\(seed))")
        var rng = SplitMix64(seed: seed)
        let root = temporaryDatabasePath("replace-last")
        defer { removeItem(root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let path = root + "/db"
        var options = ValueBoxOptions(durability: [Durability.normal, .full, .off][rng.below(3)])
        options.lockTimeout = 5
        options.checkpointWALBytes = UInt64(64 << 10 + rng.below(512 << 10))
        if rng.chance(0.5) { options.compressionThreshold = 64 + rng.below(2_000) }
        if encrypted { options.encryption = EncryptionFixtures.parameters }
        var box = try ValueBox(path: path, options: options)
        var models = [Model](repeating: [:], count: Self.tables.count)
        var copies = 0
        var paths = (lent: 0, inserted: 0, replaced: 0)
        for step in 1...steps {
            let before = models
            try box.begin()
            for op in 0..<(1 + rng.below(30)) {
                let context = "seed \(seed), step \(step), op \(op)"
                let t = rng.below(Self.tables.count)
                let table = Self.tables[t]
                let int64 = table.keyType == .int64
                if rng.chance(0.35) {
                    let key = Self.randomKey(&rng, int64: int64)
                    if rng.chance(0.25) {
                        try box.remove(table, key: ValueBoxKey(key))
                        models[t][key] = nil
                    } else {
                        let value = rng.chance(0.8) ? rng.bytes(rng.below(150)) : Self.randomValue(&rng)
                        try box.set(table, key: ValueBoxKey(key), value: MemoryBuffer(value))
                        models[t][key] = value
                    }
                    continue
                }
                let bound = Self.randomKey(&rng, int64: int64)
                let prefixLength = rng.below(bound.count + 1)
                let expected = Self.lastEntry(models[t], bound: bound, prefixLength: prefixLength, int64: int64)
                let action = rng.below(10)
                let newValue = Self.randomValue(&rng)
                var newKey = Self.randomKey(&rng, int64: int64)
                if action < 6 {
                    // A key the descent can take: right after the lent entry, or the bound itself.
                    if rng.chance(0.5) || int64 { newKey = bound } else if let expected { newKey = expected + [0x00] }
                }
                var update: LastEntryUpdate = .keep
                var lent: [UInt8]? = nil
                do throws(BoxwoodError) {
                    try box.updateLastEntry(table, atOrBelow: ValueBoxKey(bound), prefixLength: prefixLength) { (key, value) throws(BoxwoodError) -> LastEntryUpdate in
                        lent = key.map { [UInt8]($0) }
                        #expect((key == nil) == (value == nil), "\(context): key and value lent together")
                        if let expected {
                            #expect(lent == expected, "\(context): lent key")
                            #expect(value.map { [UInt8]($0) } == models[t][expected], "\(context): lent value")
                        } else {
                            #expect(lent == nil, "\(context): lent \(lent ?? []) where the model has no entry")
                        }
                        switch action {
                        case 0...2: update = .insert(key: ValueBoxKey(newKey), value: newValue)
                        case 3...6: update = .replace(value: newValue)
                        case 7: update = .insert(key: ValueBoxKey(newKey), value: newValue)
                        case 8: update = .keep
                        default: throw BoxwoodError.outOfBounds(offset: step, length: op, valueLength: 0)
                        }
                        return update
                    }
                    #expect(action != 9, "\(context): the body's error was not rethrown")
                } catch {
                    #expect(action == 9 && error == BoxwoodError.outOfBounds(offset: step, length: op, valueLength: 0), "\(context): \(error)")
                }
                if lent != nil { paths.lent += 1 }
                switch update {
                case .keep: break
                case let .replace(value):
                    if let expected { models[t][expected] = value; paths.replaced += 1 }
                case let .insert(_, value):
                    models[t][newKey] = value
                    paths.inserted += 1
                }
                if action == 9 { continue }
                if rng.chance(0.02) { try Self.expectMatches(box, models, "\(context) (in the transaction)") }
            }
            if rng.chance(0.12) {
                box.abort()
                models = before
            } else {
                try box.commit()
            }
            let context = "seed \(seed), step \(step)"
            try Self.expectMatches(box, models, context)
            switch rng.below(12) {
            case 0:
                let report = try box.check()
                #expect(report.problems == [], "\(context): \(report.problems.prefix(3))")
            case 1:
                try box.checkpoint()
                let report = try box.check()
                #expect(report.problems == [], "\(context): after a checkpoint: \(report.problems.prefix(3))")
            case 2:
                // An unclean stop: the files as they are (the WAL holds the commits since the last checkpoint).
                box.waitForBackgroundCheckpoint()
                let copy = root + "/copy\(copies)"
                copies += 1
                try copyDatabaseFiles(from: path, to: copy)
                let reopened = try ValueBox(path: copy, options: options)
                try Self.expectMatches(reopened, models, "\(context) (unclean copy)")
                let report = try reopened.check()
                #expect(report.problems == [], "\(context): unclean copy: \(report.problems.prefix(3))")
                try reopened.close()
                removeItem(copy)
            case 3:
                try box.close()
                box = try ValueBox(path: path, options: options)
                try Self.expectMatches(box, models, "\(context) (reopened)")
            default: break
            }
        }
        print("ReplaceLastEntryTests: seed \(seed): \(paths.lent) entries lent, \(paths.replaced) replaced, \(paths.inserted) inserted; largest table \(models.map(\.count).max() ?? 0) entries")
        #expect(paths.lent > 0 && paths.replaced > 0 && paths.inserted > 0, "seed \(seed): the run did not exercise every kind of update")
        let report = try box.check()
        #expect(report.problems == [], "seed \(seed): at the end: \(report.problems.prefix(3))")
        try box.close()
        let reopened = try ValueBox(path: path, options: options)
        try Self.expectMatches(reopened, models, "seed \(seed): reopened at the end")
        try reopened.close()
    }

    @Test func randomizedAgainstModel() throws { try run(encrypted: false) }

    @Test func randomizedAgainstModelEncrypted() throws { try run(encrypted: true) }

    /// Outside a transaction it fails like `set`; a read-only box refuses it.
    @Test func needsAWriteTransaction() throws {
        try withTemporaryBox("replace-last-no-txn") { box, _ in
            _ = expectError("noActiveTransaction") {
                try box.updateLastEntry(Self.tables[0], atOrBelow: ValueBoxKey([1]), prefixLength: 0) { _, _ in .keep }
            }
        }
    }
}
