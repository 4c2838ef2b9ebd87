import Testing
import Foundation
@testable import BoxwoodStore

// Model-based randomized testing: every operation is applied both to the engine and to a simple in-memory
// model (per table: a sorted array of keys plus a dictionary of values), and every read is compared.
//
// Replay a failure with the printed seed:
//     BOXWOOD_SEED=<seed> swift test --filter ModelTests
// Change the length of the main run with BOXWOOD_MODEL_OPS (default 300000, about 12 s in a debug build).
// A failure message starts with the run seed and the index and name of the failing operation.

/// The model of one table.
private struct ModelTable {
    let int64: Bool
    /// Keys (public form: int64 keys are 8 bytes big-endian) in the table's order.
    var keys: [[UInt8]] = []
    var values: [[UInt8]: [UInt8]] = [:]

    init(int64: Bool) { self.int64 = int64 }

    static func int(_ k: [UInt8]) -> Int64 {
        var v: UInt64 = 0
        for b in k { v = v << 8 | UInt64(b) }
        return Int64(bitPattern: v)
    }

    static func bytes(_ v: Int64) -> [UInt8] {
        let u = UInt64(bitPattern: v)
        return (0..<8).map { UInt8(truncatingIfNeeded: u >> (56 - 8 * UInt64($0))) }
    }

    /// <0, 0, >0: binary tables memcmp then shorter first; int64 tables signed numeric order.
    func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if int64 {
            let x = ModelTable.int(a), y = ModelTable.int(b)
            return x < y ? -1 : (x == y ? 0 : 1)
        }
        let n = min(a.count, b.count)
        var i = 0
        while i < n {
            if a[i] != b[i] { return a[i] < b[i] ? -1 : 1 }
            i += 1
        }
        return a.count - b.count
    }

    /// First index whose key is >= k (or > k when `strict`).
    func bound(_ k: [UInt8], strict: Bool) -> Int {
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) / 2
            let c = compare(keys[mid], k)
            if c < 0 || (strict && c == 0) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    mutating func set(_ k: [UInt8], _ v: [UInt8]) {
        if values.updateValue(v, forKey: k) == nil { keys.insert(k, at: bound(k, strict: false)) }
    }

    @discardableResult
    mutating func remove(_ k: [UInt8]) -> Bool {
        guard values.removeValue(forKey: k) != nil else { return false }
        keys.remove(at: bound(k, strict: false))
        return true
    }

    /// Keys strictly between `s` and `e`, ascending when s < e, descending when s > e, none when equal.
    func between(_ s: [UInt8], _ e: [UInt8]) -> [[UInt8]] {
        let c = compare(s, e)
        if c == 0 { return [] }
        if c < 0 {
            let lo = bound(s, strict: true), hi = bound(e, strict: false)
            return lo < hi ? Array(keys[lo..<hi]) : []
        }
        let lo = bound(e, strict: true), hi = bound(s, strict: false)
        return lo < hi ? Array(keys[lo..<hi].reversed()) : []
    }

    /// Keys in `low...high` (inclusive; low <= high).
    func inclusive(_ low: [UInt8], _ high: [UInt8]) -> [[UInt8]] {
        let lo = bound(low, strict: false), hi = bound(high, strict: true)
        return lo < hi ? Array(keys[lo..<hi]) : []
    }
}

struct ModelFailure: Error, CustomStringConvertible {
    let description: String
}

/// Configuration of one randomized run.
struct ModelRunConfig {
    var seed: UInt64
    var operations: Int
    /// nil: pick a durability at random at every (re)open.
    var durability: Durability? = nil
    /// nil: pick a checkpoint threshold at random at every (re)open.
    var checkpointWALBytes: UInt64? = nil
    /// Encrypt the database (`EncryptionFixtures.parameters`), with a tiny decrypted-page cache at some opens.
    var encryption: ValueBoxEncryptionParameters? = nil
    var reopenProbability = 1.0 / 120   // per transaction boundary
    var crashProbability = 1.0 / 250
    var checkpointProbability = 1.0 / 40
    var checkProbability = 1.0 / 400
    var dropProbability = 1.0 / 4000
    var bigValueProbability = 0.002
}

/// One randomized run of the engine against the model.
private final class ModelRun {
    let config: ModelRunConfig
    var rng: SplitMix64
    let root: String
    var path: String
    var box: ValueBox!
    var options = ValueBoxOptions()
    var model: [Int32: ModelTable] = [:]
    var snapshot: [Int32: ModelTable] = [:]
    var version: UInt64 = 0
    var transactionDirty = false
    var operationIndex = 0
    var lastOperation = ""
    var counts: [String: Int] = [:]
    var generation = 0
    var maxEntries = 0
    var checkpoints: UInt64 = 0

    static let binaryIDs: [Int32] = [1, 2, 3, 7, 40]
    static let int64IDs: [Int32] = [10, 11, 12, 20]
    static let allIDs = binaryIDs + int64IDs

    init(config: ModelRunConfig, root: String) {
        self.config = config
        self.rng = SplitMix64(seed: config.seed)
        self.root = root
        self.path = root + "/db0"
    }

    func table(_ id: Int32) -> ValueBoxTable {
        ValueBoxTable(id: id, keyType: ModelRun.int64IDs.contains(id) ? .int64 : .binary)
    }

    func isInt64(_ id: Int32) -> Bool { ModelRun.int64IDs.contains(id) }

    func fail(_ message: String) -> ModelFailure {
        ModelFailure(description: "seed \(config.seed), operation \(operationIndex) (\(lastOperation)): \(message)")
    }

    func ensure(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw fail(message()) }
    }

    func note(_ name: String, _ detail: @autoclosure () -> String = "") {
        counts[name, default: 0] += 1
        lastOperation = name
    }

    // MARK: Random data

    func randomID() -> Int32 { ModelRun.allIDs[rng.below(ModelRun.allIDs.count)] }

    func randomBinaryKey() -> [UInt8] {
        let r = rng.below(1000)
        let length: Int
        if r < 8 { length = 0 }
        else if r < 350 { length = 1 + rng.below(3) }
        else if r < 985 { length = 4 + rng.below(13) }
        else if r < 995 { length = 100 + rng.below(1181) }
        else { length = ValueBox.maxKeySize }
        let alphabet: [UInt8] = [0x00, 0x01, 0x41, 0x7F, 0x80, 0xFE, 0xFF]
        var key = [UInt8](repeating: 0, count: length)
        let narrow = rng.chance(0.7)
        for i in 0..<length {
            key[i] = narrow || i < 2 ? alphabet[rng.below(alphabet.count)] : UInt8(truncatingIfNeeded: rng.next())
        }
        return key
    }

    func randomInt64() -> Int64 {
        let r = rng.below(100)
        if r < 50 { return Int64(rng.below(601)) - 300 }
        if r < 60 {
            let edges: [Int64] = [.min, .min + 1, -256, -1, 0, 1, 255, 256, .max - 1, .max]
            return edges[rng.below(edges.count)]
        }
        if r < 80 { return Int64(rng.below(200_001)) - 100_000 }
        return Int64(bitPattern: rng.next())
    }

    func randomKey(_ id: Int32) -> [UInt8] {
        isInt64(id) ? ModelTable.bytes(randomInt64()) : randomBinaryKey()
    }

    /// An existing key with probability `p` (when the table has keys), otherwise a random one.
    func pickKey(_ id: Int32, existing p: Double = 0.6) -> [UInt8] {
        if let t = model[id], !t.keys.isEmpty, rng.chance(p) { return t.keys[rng.below(t.keys.count)] }
        return randomKey(id)
    }

    /// A range bound: table edges, existing keys (sometimes nudged) or random keys.
    func randomBound(_ id: Int32) -> [UInt8] {
        let r = rng.below(100)
        if isInt64(id) {
            if r < 10 { return ModelTable.bytes(.min) }
            if r < 20 { return ModelTable.bytes(.max) }
            if r < 60, let t = model[id], !t.keys.isEmpty {
                let v = ModelTable.int(t.keys[rng.below(t.keys.count)])
                return ModelTable.bytes(v &+ (Int64(rng.below(3)) - 1))
            }
            return ModelTable.bytes(randomInt64())
        }
        if r < 10 { return [] }
        if r < 20 { return [UInt8](repeating: 0xFF, count: 1 + rng.below(3)) }
        if r < 60, let t = model[id], !t.keys.isEmpty {
            var k = t.keys[rng.below(t.keys.count)]
            switch rng.below(4) {
            case 0: if !k.isEmpty { k.removeLast() }
            case 1: if k.count < ValueBox.maxKeySize { k.append(UInt8(truncatingIfNeeded: rng.next())) }
            default: break
            }
            return k
        }
        return randomBinaryKey()
    }

    func compressible(_ n: Int) -> [UInt8] {
        let pattern = rng.bytes(1 + rng.below(16))
        var v = [UInt8](repeating: 0, count: n)
        for i in 0..<n { v[i] = pattern[i % pattern.count] }
        for _ in 0..<(n / 64) { v[rng.below(n)] = UInt8(truncatingIfNeeded: rng.next()) }
        return v
    }

    func randomValue() -> [UInt8] {
        if rng.chance(config.bigValueProbability) {
            let n = 190_000 + rng.below(20_000)
            return rng.chance(0.5) ? compressible(n) : rng.bytes(n)
        }
        let r = rng.below(1000)
        if r < 100 { return [] }
        if r < 500 { return rng.bytes(1 + rng.below(40)) }
        if r < 750 { return compressible(250 + rng.below(100)) }
        if r < 830 { return rng.bytes(256 + rng.below(150)) }
        if r < 850 { return rng.bytes(900 + rng.below(200)) }
        let n = 4000 + rng.below(2000)
        return rng.chance(0.5) ? compressible(n) : rng.bytes(n)
    }

    // MARK: Opening

    func randomOptions(readOnly: Bool = false) -> ValueBoxOptions {
        var o = ValueBoxOptions(durability: config.durability ?? Durability.allCases[rng.below(3)], readOnly: readOnly)
        if let bytes = config.checkpointWALBytes {
            o.checkpointWALBytes = bytes
        } else {
            let choices: [UInt64] = [4096, 64 << 10, 1 << 20, 8 << 20]
            o.checkpointWALBytes = choices[rng.below(choices.count)]
        }
        if rng.chance(0.1) { o.checkpointMemoryBytes = 1 << 20 }
        if let encryption = config.encryption {
            o.encryption = encryption
            if rng.chance(0.3) { o.decryptedPageCacheBytes = rng.chance(0.5) ? 0 : 64 << 10 }
        }
        if rng.chance(0.1) { o.compressionThreshold = rng.chance(0.5) ? 64 : Int.max }
        // Some opens compress every value from the threshold on (the policy before `compressionLimit`), so one file
        // holds raw and LZ4 values of every size, written by either policy.
        if rng.chance(0.3) { o.compressionLimit = Int.max }
        return o
    }

    func open(readOnly: Bool = false) throws {
        options = randomOptions(readOnly: readOnly)
        box = try ValueBox(path: path, options: options)
        try ensure(box.transactionStateVersion == version, "version after open: \(box.transactionStateVersion), expected \(version)")
    }

    /// Compares every table with the model and runs the integrity check.
    func verifyAll(_ context: String) throws {
        let report = try box.check()
        try ensure(report.problems.isEmpty, "check() \(context): \(report.problems.prefix(5))")
        let engineTables = try box.allTables().map(\.id)
        try ensure(engineTables == model.keys.sorted(), "tables \(context): \(engineTables) vs model \(model.keys.sorted())")
        for id in ModelRun.allIDs {
            let t = table(id)
            let entries = try box.allEntries(t)
            let m = model[id]
            try ensure(entries.count == (m?.keys.count ?? 0), "table \(id) \(context): \(entries.count) entries, model \(m?.keys.count ?? 0)")
            try ensure(try box.count(t) == entries.count, "count(table \(id)) \(context)")
            if let m {
                for (i, (k, v)) in entries.enumerated() {
                    try ensure(k == m.keys[i], "table \(id) \(context): key \(i) is \(k), model \(m.keys[i])")
                    try ensure(v == m.values[k], "table \(id) \(context): value of \(k) differs (\(v.count) bytes, model \(m.values[k]?.count ?? -1))")
                }
            }
            if isInt64(id), let m {
                var ints: [Int64] = []
                try box.scanInt64(t, keys: { ints.append($0); return true })
                try ensure(ints == m.keys.map(ModelTable.int), "scanInt64 table \(id) \(context)")
            }
        }
        let stats = try box.statistics()
        try ensure(stats.transactionStateVersion == version, "statistics version \(context)")
        for s in stats.tables {
            try ensure(s.entries == model[s.id]?.keys.count, "statistics entries of table \(s.id) \(context)")
            let bytes = model[s.id].map { m in m.keys.reduce(0) { $0 + $1.count + m.values[$1]!.count } }
            try ensure(s.bytes == bytes, "statistics bytes of table \(s.id) \(context): \(s.bytes) vs \(bytes ?? -1)")
        }
    }

    // MARK: Operations inside a transaction

    func opSet() throws {
        let id = randomID()
        let k = pickKey(id, existing: 0.3), v = randomValue()
        note("set")
        try box.set(table(id), key: ValueBoxKey(k), value: MemoryBuffer(v))
        model[id, default: ModelTable(int64: isInt64(id))].set(k, v)
        transactionDirty = true
    }

    func opRemove() throws {
        let id = randomID()
        let k = pickKey(id)
        note("remove")
        try box.remove(table(id), key: ValueBoxKey(k), secure: rng.chance(0.2))
        if model[id]?.remove(k) == true { transactionDirty = true }
    }

    func opRemoveRange() throws {
        let id = randomID()
        let a = randomBound(id), b = randomBound(id)
        note("removeRange")
        try box.removeRange(table(id), start: ValueBoxKey(a), end: ValueBoxKey(b))
        guard var m = model[id] else { return }
        let (low, high) = m.compare(a, b) <= 0 ? (a, b) : (b, a)
        let doomed = m.inclusive(low, high)
        for k in doomed { m.remove(k) }
        model[id] = m
        if !doomed.isEmpty { transactionDirty = true }
    }

    func opMove() throws {
        let id = randomID()
        let from = pickKey(id, existing: 0.7), to = pickKey(id, existing: 0.3)
        note("move")
        try box.move(table(id), from: ValueBoxKey(from), to: ValueBoxKey(to))
        guard var m = model[id], from != to, let v = m.values[from] else { return }
        m.set(to, v)
        m.remove(from)
        model[id] = m
        transactionDirty = true
    }

    func opCopy() throws {
        let fromID = randomID(), toID = randomID()
        let fromKey = pickKey(fromID, existing: 0.7), toKey = pickKey(toID, existing: 0.3)
        note("copy")
        try box.copy(fromTable: table(fromID), fromKey: ValueBoxKey(fromKey), toTable: table(toID), toKey: ValueBoxKey(toKey))
        if model[toID]?.values[toKey] != nil { return }
        guard let v = model[fromID]?.values[fromKey] else { return }
        model[toID, default: ModelTable(int64: isInt64(toID))].set(toKey, v)
        transactionDirty = true
    }

    func opRemoveAll() throws {
        let id = randomID()
        note("removeAllFromTable")
        try box.removeAllFromTable(table(id))
        if model[id] != nil {
            model[id] = ModelTable(int64: isInt64(id))
            transactionDirty = true
        }
    }

    func opRemoveTable() throws {
        let id = randomID()
        note("removeTable")
        try box.removeTable(table(id))
        if model.removeValue(forKey: id) != nil { transactionDirty = true }
    }

    func opRename() throws {
        let ids = rng.chance(0.5) ? ModelRun.binaryIDs : ModelRun.int64IDs
        let from = ids[rng.below(ids.count)], to = ids[rng.below(ids.count)]
        note("renameTable")
        try box.renameTable(table(from), to: table(to))
        guard from != to, let m = model[from] else { return }
        model[to] = m
        model[from] = nil
        transactionDirty = true
    }

    func opReadWrite() throws {
        let id = randomID()
        let k = pickKey(id, existing: 0.8)
        let present = model[id]?.values[k]
        let outOfBounds = rng.chance(0.05)
        note(outOfBounds ? "readWrite(out of bounds)" : "readWrite")
        var newValue = present ?? []
        var seenLength = -1
        var readBack: [UInt8]? = nil
        var expectedRead: [UInt8] = []
        let rOff = present.map { $0.isEmpty ? 0 : rng.below($0.count) } ?? 0
        let rLen = present.map { rng.below($0.count - rOff + 1) } ?? 0
        if let present { expectedRead = Array(present[rOff..<(rOff + rLen)]) }
        let wOff = present.map { $0.isEmpty ? 0 : rng.below($0.count) } ?? 0
        let wLen = present.map { rng.below(min($0.count - wOff, 3000) + 1) } ?? 0
        let patch = rng.bytes(wLen)
        var thrown: BoxwoodError? = nil
        do {
            try box.readWrite(table(id), key: ValueBoxKey(k)) { length, read, write in
                seenLength = length
                var buffer = [UInt8](repeating: 0, count: max(rLen, 1))
                buffer.withUnsafeMutableBytes { read($0.baseAddress!, rOff, rLen) }
                readBack = Array(buffer.prefix(rLen))
                if outOfBounds {
                    patch.withUnsafeBytes { write($0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, length, 1) }
                } else {
                    patch.withUnsafeBytes { write($0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, wOff, wLen) }
                }
            }
        } catch { thrown = error }
        guard present != nil else {
            try ensure(thrown == nil && seenLength == -1, "readWrite of an absent key called back or threw \(String(describing: thrown))")
            return
        }
        try ensure(seenLength == newValue.count, "readWrite length \(seenLength), model \(newValue.count)")
        try ensure(readBack == expectedRead, "readWrite read \(rOff)+\(rLen) differs")
        if outOfBounds {
            guard case .outOfBounds = thrown else { throw fail("readWrite out of bounds did not throw .outOfBounds: \(String(describing: thrown))") }
            return
        }
        if let thrown { throw thrown }
        newValue.replaceSubrange(wOff..<(wOff + wLen), with: patch)
        model[id]!.set(k, newValue)
        transactionDirty = true
    }

    // MARK: Reads (inside or outside a transaction)

    func opGet() throws {
        let id = randomID()
        let k = pickKey(id)
        note("get")
        let expected = model[id]?.values[k]
        let got = try box.get(table(id), key: ValueBoxKey(k))?.makeArray()
        try ensure(got == expected, "get \(k): \(got?.count ?? -1) bytes, model \(expected?.count ?? -1)")
        try ensure(try box.exists(table(id), key: ValueBoxKey(k)) == (expected != nil), "exists \(k)")
        var viaWithValue: [UInt8]? = nil
        _ = try box.withValue(table(id), key: ValueBoxKey(k)) { viaWithValue = Array($0) }
        try ensure(viaWithValue == expected, "withValue \(k)")
    }

    func opPartialRead() throws {
        let id = randomID()
        let k = pickKey(id, existing: 0.8)
        note("read")
        let expected = model[id]?.values[k]
        var length = -1
        var part: [UInt8] = []
        var wanted: [UInt8] = []
        let salt = rng.next()
        try box.read(table(id), key: ValueBoxKey(k)) { n, read in
            length = n
            let off = n == 0 ? 0 : Int(salt % UInt64(n))
            let count = Int((salt >> 32) % UInt64(n - off + 1))
            part = [UInt8](repeating: 0, count: count)
            part.withUnsafeMutableBytes { if count > 0 { read($0.baseAddress!, off, count) } }
            if let expected { wanted = Array(expected[off..<(off + count)]) }
        }
        try ensure(length == (expected?.count ?? -1), "read length \(length), model \(expected?.count ?? -1)")
        try ensure(part == wanted, "read bytes differ")
    }

    func opRange() throws {
        let id = randomID()
        let s = randomBound(id), e = randomBound(id)
        let limits = [0, -1, 1, 2, 3, 5, 10, 50]
        let limit = limits[rng.below(limits.count)]
        let stopAfter: Int? = rng.chance(0.25) ? 1 + rng.below(10) : nil
        let withValues = rng.chance(0.5)
        note(withValues ? "range(values)" : "range(keys)")
        var visited: [([UInt8], [UInt8]?)] = []
        if withValues {
            try box.range(table(id), start: ValueBoxKey(s), end: ValueBoxKey(e), values: { k, v in
                visited.append((k.byteArray, v.makeArray()))
                return stopAfter.map { visited.count < $0 } ?? true
            }, limit: limit)
        } else {
            try box.range(table(id), start: ValueBoxKey(s), end: ValueBoxKey(e), keys: { k in
                visited.append((k.byteArray, nil))
                return stopAfter.map { visited.count < $0 } ?? true
            }, limit: limit)
        }
        var expected = model[id]?.between(s, e) ?? []
        var cap = Int.max
        if limit > 0 { cap = limit }
        if let stopAfter { cap = min(cap, stopAfter) }
        if expected.count > cap { expected = Array(expected.prefix(cap)) }
        try ensure(visited.map(\.0) == expected, "range \(s) -> \(e) limit \(limit) stop \(String(describing: stopAfter)): \(visited.count) keys, model \(expected.count)")
        if withValues {
            for (k, v) in visited { try ensure(v == model[id]?.values[k], "range value of \(k)") }
        }
    }

    func opFilteredRange() throws {
        let id = randomID()
        let s = randomBound(id), e = randomBound(id)
        let limit = [0, 1, 3, 10][rng.below(4)]
        let salt = rng.next()
        let withValues = rng.chance(0.5)
        note(withValues ? "filteredRange(values)" : "filteredRange(keys)")
        func decide(_ k: [UInt8]) -> ValueBoxFilterResult {
            // Deterministic (Hasher is seeded per process): FNV-1a over the key, seeded with the salt.
            var x: UInt64 = 1469598103934665603 ^ salt
            for b in k { x = (x ^ UInt64(b)) &* 1099511628211 }
            let r = x % 100
            return r < 55 ? .accept : (r < 96 ? .skip : .stop)
        }
        var visited: [[UInt8]] = []
        if withValues {
            try box.filteredRange(table(id), start: ValueBoxKey(s), end: ValueBoxKey(e), values: { k, v in
                let kb = k.byteArray
                visited.append(kb)
                if v.makeArray() != self.model[id]?.values[kb] { visited.append([0xDE, 0xAD]) }
                return decide(kb)
            }, limit: limit)
        } else {
            try box.filteredRange(table(id), start: ValueBoxKey(s), end: ValueBoxKey(e), keys: { k in
                let kb = k.byteArray
                visited.append(kb)
                return decide(kb)
            }, limit: limit)
        }
        var expected: [[UInt8]] = []
        var accepted = 0
        for k in model[id]?.between(s, e) ?? [] {
            expected.append(k)
            let d = decide(k)
            if d == .stop { break }
            if d == .accept {
                accepted += 1
                if limit > 0 && accepted >= limit { break }
            }
        }
        try ensure(visited == expected, "filteredRange \(s) -> \(e) limit \(limit): \(visited.count) visits, model \(expected.count)")
    }

    func opCount() throws {
        let id = randomID()
        let s = randomBound(id), e = randomBound(id)
        note("count(range)")
        let got = try box.count(table(id), start: ValueBoxKey(s), end: ValueBoxKey(e))
        var expected = 0
        if let m = model[id], m.compare(s, e) < 0 { expected = m.between(s, e).count }
        try ensure(got == expected, "count \(s) -> \(e): \(got), model \(expected)")
        try ensure(try box.count(table(id)) == (model[id]?.keys.count ?? 0), "count(table \(id))")
    }

    func readOperation() throws {
        switch rng.below(100) {
        case 0..<35: try opGet()
        case 35..<45: try opPartialRead()
        case 45..<75: try opRange()
        case 75..<88: try opFilteredRange()
        default: try opCount()
        }
    }

    /// Many small entries into one table (deep trees, many splits), interleaved with a few range checks.
    func bulkLoad() throws {
        let id = randomID()
        let n = 200 + rng.below(1500)
        let base = rng.next()
        let sequential = rng.chance(0.5)
        for i in 0..<n {
            let k: [UInt8]
            if isInt64(id) {
                k = ModelTable.bytes(sequential ? Int64(bitPattern: base >> 2) &+ Int64(i) : Int64(rng.below(40_000)) - 20_000)
            } else {
                var b = [UInt8(truncatingIfNeeded: base), UInt8(truncatingIfNeeded: base >> 8)]
                let x = sequential ? UInt32(i) : UInt32(truncatingIfNeeded: rng.next() % 50_000)
                b += [UInt8(x >> 24), UInt8(truncatingIfNeeded: x >> 16), UInt8(truncatingIfNeeded: x >> 8), UInt8(truncatingIfNeeded: x)]
                if rng.chance(0.1) { b += rng.bytes(rng.below(20)) }
                k = b
            }
            let v = rng.bytes(rng.below(24))
            note("set(bulk)")
            try box.set(table(id), key: ValueBoxKey(k), value: MemoryBuffer(v))
            model[id, default: ModelTable(int64: isInt64(id))].set(k, v)
            transactionDirty = true
            operationIndex += 1
            if rng.chance(0.01) { try readOperation(); operationIndex += 1 }
        }
    }

    func transactionOperation() throws {
        let r = rng.below(1000)
        switch r {
        case 0..<330: try opSet()
        case 330..<430: try opRemove()
        case 430..<630: try readOperation()
        case 630..<660: try opRemoveRange()
        case 660..<710: try opMove()
        case 710..<760: try opCopy()
        case 760..<810: try opReadWrite()
        case 810..<812: try opRemoveAll()
        case 812..<813: try opRemoveTable()
        case 813..<825: try opRename()
        case 825..<830:
            note("begin twice")
            do { try box.begin(); throw fail("begin inside a transaction did not throw") } catch let e as BoxwoodError {
                try ensure(e == .transactionAlreadyActive, "begin twice threw \(e)")
            }
        default: try opSet()
        }
    }

    // MARK: Between transactions

    func reopen() throws {
        note("close+reopen")
        try box.close()
        box = nil
        try open()
        try verifyAll("after reopen")
    }

    /// Simulates a crash: copies the files while the box is open (nothing checkpointed since the last commits),
    /// abandons the original and recovers from the copy (sometimes read-only first). A background checkpoint is
    /// waited for first: a copy made while its thread writes is no moment's state of the files (the copy can take
    /// the file's size before the checkpoint extends it and the new meta after); `KillReopenTests` kills real
    /// processes while one is written.
    func crashAndRecover() throws {
        note("crash+recover")
        generation += 1
        let newPath = root + "/db\(generation)"
        box.waitForBackgroundCheckpoint()
        try copyDatabaseFiles(from: path, to: newPath)
        try box.close()
        box = nil
        removeItem(path)
        path = newPath
        if rng.chance(0.4) {
            try open(readOnly: true)
            try verifyAll("read-only after crash")
            do { try box.begin(); try box.set(table(1), key: ValueBoxKey([1]), value: MemoryBuffer([1])); throw fail("write on a read-only box succeeded") }
            catch let e as BoxwoodError {
                guard case .readOnly = e else { throw fail("read-only write threw \(e)") }
            }
            box.abort()
            try box.close()
            box = nil
        }
        try open()
        try verifyAll("after crash recovery")
    }

    func boundaryOperation() throws {
        if rng.chance(config.crashProbability) { try crashAndRecover() }
        else if rng.chance(config.reopenProbability) { try reopen() }
        if rng.chance(config.checkpointProbability) { note("checkpoint"); try box.checkpoint() }
        if rng.chance(config.checkProbability) {
            note("check")
            let report = try box.check()
            try ensure(report.problems.isEmpty, "check(): \(report.problems.prefix(5))")
        }
        if rng.chance(config.dropProbability) {
            note("drop")
            if !(try box.allTables().isEmpty) { version += 1 }
            try box.drop()
            model = [:]
            try ensure(box.transactionStateVersion == version, "version after drop")
            try verifyAll("after drop")
        }
        if rng.chance(0.02) {
            note("write outside a transaction")
            do { try box.set(table(1), key: ValueBoxKey([9]), value: MemoryBuffer([9])); throw fail("set outside a transaction succeeded") }
            catch let e as BoxwoodError { try ensure(e == .noActiveTransaction, "set outside a transaction threw \(e)") }
        }
    }

    func run() throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try open()
        while operationIndex < config.operations {
            try boundaryOperation()
            // A few reads outside any transaction.
            for _ in 0..<rng.below(3) { try readOperation(); operationIndex += 1 }
            let size = rng.chance(0.05) ? 100 + rng.below(300) : 1 + rng.below(30)
            let abort = rng.chance(0.12)
            try box.begin()
            snapshot = model
            transactionDirty = false
            if rng.chance(0.03) {
                try bulkLoad()
            } else {
                for _ in 0..<size {
                    try transactionOperation()
                    operationIndex += 1
                }
            }
            maxEntries = max(maxEntries, model.values.map(\.keys.count).max() ?? 0)
            if abort {
                note("abort")
                box.abort()
                model = snapshot
            } else {
                note("commit")
                try box.commit()
                if transactionDirty { version += 1 }
            }
            try ensure(box.transactionStateVersion == version, "version \(box.transactionStateVersion), expected \(version)")
            if abort && rng.chance(0.2) {
                // Spot-check that the rollback restored everything.
                try verifyAll("after abort")
            }
        }
        try verifyAll("at the end")
        checkpoints = try box.statistics().checkpointGeneration
        try box.close()
        box = nil
        try open()
        try verifyAll("after the final reopen")
        try box.close()
        box = nil
    }
}

@Suite struct ModelTests {
    static func baseSeed() -> UInt64 {
        if let s = ProcessInfo.processInfo.environment["BOXWOOD_SEED"], let v = UInt64(s) { return v }
        return UInt64.random(in: 0...UInt64.max)
    }

    /// `baseSeed` is what BOXWOOD_SEED replays; `config.seed` may be derived from it.
    static func runModel(_ config: ModelRunConfig, baseSeed: UInt64, name: String) throws {
        print("ModelTests seed: \(baseSeed) (\(name), run seed \(config.seed), \(config.operations) operations; replay with BOXWOOD_SEED=\(baseSeed))")
        let root = temporaryDatabasePath("model")
        defer { removeItem(root) }
        let run = ModelRun(config: config, root: root)
        let started = Date()
        do {
            try run.run()
        } catch let failure as ModelFailure {
            throw failure
        } catch {
            throw run.fail("unexpected error: \(error)")
        }
        let summary = run.counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        print("ModelTests \(name): seed \(config.seed), \(run.operationIndex) operations in \(String(format: "%.1f", Date().timeIntervalSince(started))) s, version \(run.version), checkpoint generation \(run.checkpoints), largest table \(run.maxEntries) entries; \(summary)")
    }

    /// The main run: every operation, random durability and checkpoint thresholds per (re)open.
    @Test func randomizedAgainstModel() throws {
        let ops = ProcessInfo.processInfo.environment["BOXWOOD_MODEL_OPS"].flatMap { Int($0) } ?? 300_000
        let seed = ModelTests.baseSeed()
        try ModelTests.runModel(ModelRunConfig(seed: seed, operations: ops), baseSeed: seed, name: "main")
    }

    /// Short runs per durability mode with a tiny checkpoint threshold (a checkpoint after almost every
    /// commit) and frequent crashes.
    @Test(arguments: Durability.allCases)
    func frequentCheckpoints(durability: Durability) throws {
        let index = UInt64(Durability.allCases.firstIndex(of: durability)!)
        let seed = ModelTests.baseSeed()
        var config = ModelRunConfig(seed: seed &+ 0x1000 &+ index, operations: 15_000)
        config.durability = durability
        config.checkpointWALBytes = 4096
        config.crashProbability = 1.0 / 30
        config.reopenProbability = 1.0 / 30
        config.bigValueProbability = 0.0005
        try ModelTests.runModel(config, baseSeed: seed, name: "frequent checkpoints, \(durability)")
    }

    /// An encrypted database: every operation, crash copies and reopens, frequent checkpoints (so that most
    /// reads decrypt pages), a decrypted-page cache trimmed to nothing at some opens.
    @Test func encryptedAgainstModel() throws {
        let seed = ModelTests.baseSeed()
        var config = ModelRunConfig(seed: seed &+ 0x2000, operations: 100_000)
        config.encryption = EncryptionFixtures.parameters
        config.reopenProbability = 1.0 / 40
        try ModelTests.runModel(config, baseSeed: seed, name: "encrypted")
    }
}
