import Foundation
import Testing
@testable import BoxwoodStore

/// The borrowing read (`ValueBox.withValue`) against a dictionary, over values of 0 to 1 MiB, compressible and
/// random, plain and encrypted, across checkpoints, reopens, overwrites, removes, compactions and checks; what it
/// lends in place (a plain file's extents: in the mapping); that a later commit of
/// another value box never changes bytes being lent; and that values stored LZ4-compressed (what the earlier
/// compression policy wrote for every value of 256 bytes or more that LZ4 shrank by 1/16) still read.
@Suite struct ValueBorrowingTests {
    let table = ValueBoxTable(id: 7, keyType: .binary)

    /// A value of `length` bytes: text-like (LZ4 shrinks it to about a third) or SplitMix64 bytes (incompressible).
    static func value(_ rng: inout SplitMix64, length: Int, compressible: Bool) -> [UInt8] {
        guard compressible else { return rng.bytes(length) }
        let words: [[UInt8]] = ["the ", "message ", "photo ", "tonight ", "okay ", "sticker ", "call ", "later. "].map { Array($0.utf8) }
        var out: [UInt8] = []
        out.reserveCapacity(length + 8)
        while out.count < length { out += words[rng.below(words.count)] }
        return Array(out.prefix(length))
    }

    /// A length from 0 to 1 MiB, weighted towards the places where the storage changes: inline (≤ ~1000 bytes),
    /// one overflow page (≤ 4064 stored bytes), an extent (a chain in an encrypted file) of a few pages — around
    /// the page boundaries of an extent, whose head holds 4064 bytes and every other page 4096 —, a long one.
    static func length(_ rng: inout SplitMix64) -> Int {
        switch rng.below(8) {
        case 0: return rng.below(25)
        case 1: return 25 + rng.below(1000)
        case 2: return 1000 + rng.below(3200)
        case 3: return 4000 + rng.below(200)                  // around one page's payload (4064)
        case 4: return 4200 + rng.below(20_000)
        case 5: return 4064 + 4096 * (1 + rng.below(8)) - 2 + rng.below(5)   // around an extent's page boundary
        case 6: return rng.chance(0.2) ? rng.below(1 << 20 + 1) : rng.below(200 << 10 + 1)
        default: return rng.below(200 << 10 + 1)
        }
    }

    static func options(encrypted: Bool, threshold: Int = 256, limit: Int? = nil) -> ValueBoxOptions {
        var o = encrypted ? EncryptionFixtures.options() : ValueBoxOptions()
        o.compressionThreshold = threshold
        if let limit { o.compressionLimit = limit }
        o.checkpointWALBytes = 256 << 10
        o.checkpointMemoryBytes = 1 << 20
        return o
    }

    /// The value of `key` through `withValue`, and through `get` (which must agree).
    func borrowed(_ box: ValueBox, _ key: ValueBoxKey) throws -> [UInt8]? {
        let lent = try box.withValue(table, key: key) { Array($0) }
        let copied = try box.get(table, key: key)?.makeArray()
        #expect(lent == copied, "withValue and get disagree")
        return lent
    }

    @Test(arguments: [false, true])
    func againstModel(encrypted: Bool) throws {
        let seeds = (0..<3).map { _ in crashTestSeed() }
        for seed in seeds {
            print("ValueBorrowingTests.againstModel encrypted=\(encrypted) seed \(seed) (BOXWOOD_SEED=\(seed) replays it)")
            try run(seed: seed, encrypted: encrypted)
        }
    }

    func run(seed: UInt64, encrypted: Bool) throws {
        var rng = SplitMix64(seed: seed)
        let path = temporaryDatabasePath("borrow")
        defer { removeItem(path) }
        // Some runs compress every value LZ4 shrinks (the earlier policy), so both codecs meet every layout.
        let limit: Int? = rng.chance(0.3) ? Int.max : nil
        var box = try ValueBox(path: path, options: Self.options(encrypted: encrypted, limit: limit))
        var model: [[UInt8]: [UInt8]] = [:]
        let keyCount = 24
        func key(_ i: Int) -> ValueBoxKey { ValueBoxKey(Array("k\(i)".utf8)) }
        for step in 0..<300 {
            let context = "seed \(seed) step \(step)"
            switch rng.below(10) {
            case 0...4:
                try box.begin()
                for _ in 0..<(1 + rng.below(3)) {
                    let i = rng.below(keyCount)
                    let v = Self.value(&rng, length: Self.length(&rng), compressible: rng.chance(0.5))
                    try box.set(table, key: key(i), value: MemoryBuffer(v))
                    model[key(i).byteArray] = v
                }
                // Reads inside the transaction see its uncheckpointed pages and blobs.
                let i = rng.below(keyCount)
                #expect(try borrowed(box, key(i)) == model[key(i).byteArray], "\(context): in transaction, key \(i)")
                if rng.chance(0.1) {
                    box.abort()
                    box = try reopen(box, path, encrypted: encrypted, limit: limit)
                    model = try Self.contents(box, table)
                } else {
                    try box.commit()
                }
            case 5:
                let i = rng.below(keyCount)
                try box.begin()
                try box.remove(table, key: key(i))
                try box.commit()
                model[key(i).byteArray] = nil
            case 6:
                try box.checkpoint()
                if rng.chance(0.2) {
                    let report = try box.check()
                    #expect(report.problems.isEmpty, "\(context): check: \(report.problems.prefix(3))")
                }
            case 7:
                if rng.chance(0.15) {
                    _ = try box.compact()
                } else {
                    box = try reopen(box, path, encrypted: encrypted, limit: limit)
                }
            default:
                let i = rng.below(keyCount)
                #expect(try borrowed(box, key(i)) == model[key(i).byteArray], "\(context): key \(i)")
            }
        }
        try box.checkpoint()
        for i in 0..<keyCount {
            #expect(try borrowed(box, key(i)) == model[key(i).byteArray], "seed \(seed) at the end: key \(i)")
            // Under the default policy a value above 1000 bytes is stored raw: a plain file lends it from the mapping
            // whatever its size (inline, one overflow page, an extent).
            if !encrypted, limit == nil, let v = model[key(i).byteArray], v.count > 1000 {
                let inMapping = try box.withValue(table, key: key(i)) { Self.isInMapping(box, $0) }
                #expect(inMapping == true, "seed \(seed) at the end: key \(i) (\(v.count) bytes) lent from the mapping")
            }
        }
        let report = try box.check()
        #expect(report.problems.isEmpty, "seed \(seed) at the end: check: \(report.problems.prefix(3))")
        // An error `body` throws comes out of `withValue` unchanged.
        if let present = model.keys.first {
            var thrown: BoxwoodError? = nil
            do {
                _ = try box.withValue(table, key: ValueBoxKey(present)) { (_) throws(BoxwoodError) -> Int in throw .outOfBounds(offset: 1, length: 2, valueLength: 3) }
            } catch { thrown = error }
            #expect(thrown?.kind == "outOfBounds", "seed \(seed): body's error")
        }
        try box.close()
    }

    func reopen(_ box: ValueBox, _ path: String, encrypted: Bool, limit: Int?) throws -> ValueBox {
        try box.close()
        return try ValueBox(path: path, options: Self.options(encrypted: encrypted, limit: limit))
    }

    /// Every entry of `table` (after an abort, the model is what the box holds: the state the abort restored).
    static func contents(_ box: ValueBox, _ table: ValueBoxTable) throws -> [[UInt8]: [UInt8]] {
        var out: [[UInt8]: [UInt8]] = [:]
        for (k, v) in try box.allEntries(table) { out[k] = v }
        return out
    }

    /// Whether `bytes` lie inside the read-only mapping of `box`'s data file.
    static func isInMapping(_ box: ValueBox, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let map = box.pager.map, let start = bytes.baseAddress else { return false }
        return start >= map && start + bytes.count <= map + box.pager.mapLength
    }

    /// After a checkpoint of a plain file, uncompressed values are lent from the mapping itself at any size: inline,
    /// in one overflow page, or in an extent (`ExtentPage`: consecutive pages); a compressed one comes in a buffer of
    /// its own. Under the default policy a compressible value longer than `compressionLimit` is stored raw, so it is
    /// lent too; with no limit (the earlier policy) it is compressed and decompressed on every read.
    @Test(arguments: [nil, Int.max])
    func lendsFromTheMapping(limit: Int?) throws {
        try withTemporaryBox("borrow-map", options: Self.options(encrypted: false, limit: limit)) { box, _ in
            var rng = SplitMix64(seed: 11)
            let cases: [(String, [UInt8], Bool)] = [
                ("inline random", rng.bytes(300), true),
                ("one overflow page, random", rng.bytes(4064), true),
                ("one overflow page, text", Self.value(&rng, length: 3000, compressible: true), limit == nil),
                ("two-page extent, random", rng.bytes(4065), true),
                ("long extent, random", rng.bytes(100_000), true),
                ("long extent, text", Self.value(&rng, length: 100_000, compressible: true), limit == nil),
            ]
            try box.begin()
            for (i, c) in cases.enumerated() { try box.set(table, key: ikey(Int64(i)), value: MemoryBuffer(c.1)) }
            try box.commit()
            // Before the checkpoint, a value written once (an extent the compression settings leave raw: the default
            // policy) is lent from the mapping already; every other raw value from memory of its commit.
            for (i, c) in cases.enumerated() {
                let seen = try box.withValue(table, key: ikey(Int64(i))) { bytes in (Array(bytes), Self.isInMapping(box, bytes)) }
                let writtenOnce = limit == nil && c.1.count > PageLayout.overflowPayload
                #expect(seen?.0 == c.1 && seen?.1 == writtenOnce, "\(c.0), limit \(String(describing: limit)): before the checkpoint")
            }
            try box.checkpoint()
            for (i, c) in cases.enumerated() {
                let seen = try box.withValue(table, key: ikey(Int64(i))) { bytes in (Array(bytes), Self.isInMapping(box, bytes)) }
                #expect(seen?.0 == c.1, "\(c.0), limit \(String(describing: limit)): value")
                #expect(seen?.1 == c.2, "\(c.0), limit \(String(describing: limit)): lent from the mapping")
            }
        }
    }

    /// A later transaction of another value box overwrites and removes the key being lent, checkpoints again and
    /// again (so freed pages are written over) — the bytes `body` holds do not change: its read pins the snapshot.
    @Test(arguments: [false, true])
    func laterCommitsDoNotChangeLentBytes(encrypted: Bool) throws {
        let path = temporaryDatabasePath("borrow-snapshot")
        defer { removeItem(path) }
        var rng = SplitMix64(seed: 5)
        let options = Self.options(encrypted: encrypted, threshold: Int.max)
        let reader = try ValueBox(path: path, options: options)
        let writer = try ValueBox(path: path, options: options)
        let lengths = [200, 3000, 4064, 30_000]
        var original: [[UInt8]] = []
        try writer.begin()
        for (i, n) in lengths.enumerated() {
            original.append(rng.bytes(n))
            try writer.set(table, key: ikey(Int64(i)), value: MemoryBuffer(original[i]))
        }
        try writer.commit()
        try writer.checkpoint()
        for (i, n) in lengths.enumerated() {
            let outcome = try reader.withValue(table, key: ikey(Int64(i))) { bytes -> (Bool, Bool) in
                let before = Array(bytes) == original[i]
                do {
                    for round in 0..<6 {
                        try writer.begin()
                        if round == 2 || round == 4 {
                            try writer.remove(table, key: ikey(Int64(i)))
                        } else {
                            try writer.set(table, key: ikey(Int64(i)), value: MemoryBuffer([UInt8](repeating: UInt8(round + 1), count: n)))
                        }
                        // Other keys change too, so the checkpoints free and reuse pages all over the file.
                        for j in 100..<140 { try writer.set(table, key: ikey(Int64(j)), value: MemoryBuffer(rng.bytes(50 + rng.below(6000)))) }
                        try writer.commit()
                        try writer.checkpoint()
                    }
                } catch {
                    Issue.record("writer: \(error)")
                }
                return (before, Array(bytes) == original[i])
            }
            #expect(outcome?.0 == true, "length \(n): the lent value before the writes")
            #expect(outcome?.1 == true, "length \(n): the lent value after six later commits and checkpoints")
            // Once `body` returned, a new read sees the writer's last state (round 5 set the value to 6s).
            let now = try reader.withValue(table, key: ikey(Int64(i))) { Array($0) }
            #expect(now == [UInt8](repeating: 6, count: n), "length \(n): a new read sees the last commit")
        }
        try writer.close()
        try reader.close()
    }

    /// Reads inside `body` (allowed: they do not modify the box) never free or reuse the decrypted page whose bytes
    /// `body` holds, also in a value box without a shared header (a read-only file system), where a read pins
    /// nothing and would otherwise trim the decrypted-page cache between operations.
    @Test func nestedReadsKeepTheLentPage() throws {
        let path = temporaryDatabasePath("borrow-nested")
        defer { removeItem(path) }
        var options = Self.options(encrypted: true, limit: 0)
        options.decryptedPageCacheBytes = 2 * PageLayout.pageSize
        var rng = SplitMix64(seed: 9)
        let values = (0..<40).map { _ in rng.bytes(3000) }    // one overflow page each, raw
        do {
            let box = try ValueBox(path: path, options: options)
            try box.begin()
            for (i, v) in values.enumerated() { try box.set(table, key: ikey(Int64(i)), value: MemoryBuffer(v)) }
            try box.commit()
            try box.close()
        }
        let box = try ValueBox(path: path, options: options)
        box.detachHeader()
        for i in 0..<4 {
            let intact = try box.withValue(table, key: ikey(Int64(i))) { (bytes) throws(BoxwoodError) -> Bool in
                for j in 10..<40 {
                    let other = try box.withValue(table, key: ikey(Int64(j))) { Array($0) }
                    #expect(other == values[j], "nested read of \(j)")
                }
                return Array(bytes) == values[i]
            }
            #expect(intact == true, "value \(i) after 30 nested reads")
        }
        try box.close()
    }

    /// A database whose large values were stored LZ4-compressed (every value of 256 bytes or more that LZ4 shrinks:
    /// the policy before `compressionLimit`) reads under the current default, before and after reopening, and
    /// values overwritten under the current policy are stored raw next to the compressed ones.
    @Test(arguments: [false, true])
    func compressedValuesOfTheEarlierPolicyStillRead(encrypted: Bool) throws {
        let path = temporaryDatabasePath("borrow-old")
        defer { removeItem(path) }
        var rng = SplitMix64(seed: 77)
        let lengths = [300, 900, 3000, 4096, 20_000, 64 << 10, 150_000]
        let values = lengths.map { Self.value(&rng, length: $0, compressible: true) }
        do {
            let old = try ValueBox(path: path, options: Self.options(encrypted: encrypted, limit: Int.max))
            try old.begin()
            for (i, v) in values.enumerated() { try old.set(table, key: ikey(Int64(i)), value: MemoryBuffer(v)) }
            try old.commit()
            try old.close()
        }
        let box = try ValueBox(path: path, options: Self.options(encrypted: encrypted))
        for (i, v) in values.enumerated() {
            #expect(try borrowed(box, ikey(Int64(i))) == v, "length \(lengths[i]) as written")
            let stored = try codec(box, ikey(Int64(i)))
            #expect(stored?.0 == ValueCodec.lz4.rawValue, "length \(lengths[i]): stored LZ4-compressed by the earlier policy")
            if lengths[i] >= 20_000 { #expect(stored?.1 == true, "length \(lengths[i]): in overflow pages") }
        }
        try box.begin()
        for (i, v) in values.enumerated() where i % 2 == 0 { try box.set(table, key: ikey(Int64(i)), value: MemoryBuffer(v.reversed())) }
        try box.commit()
        try box.close()
        let reopened = try ValueBox(path: path, options: Self.options(encrypted: encrypted))
        for (i, v) in values.enumerated() {
            #expect(try borrowed(reopened, ikey(Int64(i))) == (i % 2 == 0 ? v.reversed() : v), "length \(lengths[i]) after reopening")
            let expectedCodec = i % 2 == 0 && lengths[i] > ValueBoxOptions().compressionLimit ? ValueCodec.raw : ValueCodec.lz4
            #expect(try codec(reopened, ikey(Int64(i)))?.0 == expectedCodec.rawValue, "length \(lengths[i]): codec after the overwrite")
        }
        try reopened.close()
    }

    /// The codec field of `key`'s leaf cell and whether the value is in overflow pages.
    func codec(_ box: ValueBox, _ key: ValueBoxKey) throws -> (UInt8, Bool)? {
        let pinned = try box.enterRead()
        defer { box.exitRead(pinned) }
        guard let root = box.state.tables[table.id]?.root, root != 0 else { return nil }
        return try box.withInternalKey(table.keyType, key) { (k, n) throws(BoxwoodError) -> (UInt8, Bool)? in
            guard let (page, off) = try BTree.find(box.pager, root: root, k, n) else { return nil }
            return (LeafValue.codec(page, off), LeafValue.isOverflow(page, off))
        }
    }
}
