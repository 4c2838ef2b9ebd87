import Testing
import Foundation
@testable import BoxwoodStore

/// Keys and a value mix for the encryption tests (also used by `ModelTests.encryptedAgainstModel`).
enum EncryptionFixtures {
    // Computed, not stored: a global holding `Data` would be reported as a leak by LeakSanitizer.
    static var key: ValueBoxEncryptionParameters.Key { ValueBoxEncryptionParameters.Key(bytes: (0..<32).map { UInt8($0 &* 7 &+ 1) })! }
    static var salt: ValueBoxEncryptionParameters.Salt { ValueBoxEncryptionParameters.Salt(bytes: (0..<16).map { UInt8($0 &* 13 &+ 5) })! }
    static var parameters: ValueBoxEncryptionParameters { ValueBoxEncryptionParameters(forceEncryptionIfNoSet: false, key: key, salt: salt) }
    static var otherKey: ValueBoxEncryptionParameters {
        ValueBoxEncryptionParameters(forceEncryptionIfNoSet: false,
                                     key: ValueBoxEncryptionParameters.Key(bytes: (0..<32).map { UInt8($0 &* 7 &+ 2) })!, salt: salt)
    }
    static var otherSalt: ValueBoxEncryptionParameters {
        ValueBoxEncryptionParameters(forceEncryptionIfNoSet: false, key: key,
                                     salt: ValueBoxEncryptionParameters.Salt(bytes: (0..<16).map { UInt8($0) })!)
    }

    static func options(_ parameters: ValueBoxEncryptionParameters? = EncryptionFixtures.parameters,
                        checkpointWALBytes: UInt64 = 8 << 20) -> ValueBoxOptions {
        var o = ValueBoxOptions()
        o.encryption = parameters
        o.checkpointWALBytes = checkpointWALBytes
        return o
    }

    /// The value stored under key `i`: small, compressible, incompressible and overflow values.
    static func value(_ i: Int, marker: [UInt8] = []) -> [UInt8] {
        var rng = SplitMix64(seed: UInt64(i) &+ 0xC0FFEE)
        switch i % 5 {
        case 0: return marker + rng.bytes(12)
        case 1: return marker + Array(repeating: marker.first ?? 7, count: 400)            // compresses well
        case 2: return marker + rng.bytes(600)
        case 3: return marker + rng.bytes(5000)                                            // overflow pages
        default: return Array((0..<30).map { _ in marker }.joined()) + rng.bytes(9000)     // overflow, compresses a little
        }
    }

    static func key(_ i: Int) -> ValueBoxKey { ValueBoxKey(Array("key-\(i)".utf8)) }
}

@Suite struct EncryptionTests {
    let table = ValueBoxTable(id: 1, keyType: .binary)

    func fill(_ box: ValueBox, _ range: Range<Int>, marker: [UInt8] = []) throws {
        try box.begin()
        for i in range { try box.set(table, key: EncryptionFixtures.key(i), value: MemoryBuffer(EncryptionFixtures.value(i, marker: marker))) }
        try box.commit()
    }

    func verify(_ box: ValueBox, _ range: Range<Int>, marker: [UInt8] = [], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for i in range {
            let stored = try box.bytes(table, EncryptionFixtures.key(i))
            #expect(stored == EncryptionFixtures.value(i, marker: marker), "key \(i)", sourceLocation: sourceLocation)
        }
        #expect(try box.count(table) == range.count, sourceLocation: sourceLocation)
    }

    func files(_ path: String) throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: path) { result[name] = try readFile(path + "/" + name) }
        return result
    }

    @Test func keyAndSaltMustHaveTheirExactLengths() {
        #expect(ValueBoxEncryptionParameters.Key(bytes: Array(repeating: 1, count: 31)) == nil)
        #expect(ValueBoxEncryptionParameters.Key(bytes: Array(repeating: 1, count: 33)) == nil)
        #expect(ValueBoxEncryptionParameters.Key(data: Data()) == nil)
        #expect(ValueBoxEncryptionParameters.Key(bytes: Array(repeating: 1, count: 32)) != nil)
        #expect(ValueBoxEncryptionParameters.Salt(bytes: Array(repeating: 1, count: 15)) == nil)
        #expect(ValueBoxEncryptionParameters.Salt(bytes: Array(repeating: 1, count: 17)) == nil)
        #expect(ValueBoxEncryptionParameters.Salt(bytes: Array(repeating: 1, count: 16)) != nil)
    }

    /// Every kind of value, through the WAL, checkpoints, a reopen and a compaction, reads back; `check` is clean.
    @Test func roundTripThroughCheckpointsReopenAndCompaction() throws {
        let path = temporaryDatabasePath("enc-roundtrip")
        defer { removeItem(path) }
        var box = try ValueBox(path: path, options: EncryptionFixtures.options(checkpointWALBytes: 64 << 10))
        for batch in 0..<10 { try fill(box, (batch * 200)..<((batch + 1) * 200)) }
        try box.begin()
        for i in stride(from: 0, to: 2000, by: 3) { try box.remove(table, key: EncryptionFixtures.key(i)) }
        for i in stride(from: 0, to: 2000, by: 3) { try box.set(table, key: EncryptionFixtures.key(i), value: MemoryBuffer(EncryptionFixtures.value(i))) }
        try box.commit()
        #expect(try box.statistics().checkpointGeneration > 2)
        try verify(box, 0..<2000)
        #expect(try box.check().problems.isEmpty)
        try box.close()

        box = try ValueBox(path: path, options: EncryptionFixtures.options())
        try verify(box, 0..<2000)
        let headerBefore = Array(try readFile(path + "/data").prefix(EncryptionHeader.size))
        try box.compact()
        let headerAfter = Array(try readFile(path + "/data").prefix(EncryptionHeader.size))
        #expect(EncryptionHeader.looksLikeHeader(headerAfter, count: headerAfter.count))
        #expect(headerBefore != headerAfter, "a compacted file gets a new file id")
        try verify(box, 0..<2000)
        #expect(try box.check().problems.isEmpty)
        try box.close()

        box = try ValueBox(path: path, options: EncryptionFixtures.options())
        try verify(box, 0..<2000)
        try box.close()
    }

    /// A marker in keys and values never appears in any file: in the WAL before a checkpoint, in the pages after
    /// one, and after a secure remove.
    @Test func noPlaintextInAnyFile() throws {
        let marker = Array("BOXWOOD-SECRET-MARKER-7f3a".utf8)
        let path = temporaryDatabasePath("enc-marker")
        defer { removeItem(path) }
        let box = try ValueBox(path: path, options: EncryptionFixtures.options())
        try fill(box, 0..<300, marker: marker)
        try box.begin()
        try box.set(table, key: ValueBoxKey(marker + [1]), value: MemoryBuffer(marker))
        try box.commit()
        func expectNoMarker(_ when: String) throws {
            for (name, bytes) in try files(path) {
                #expect(!contains(bytes, marker), "\(when): the marker is in \(name) in the clear")
                #expect(!contains(bytes, Array(marker.prefix(12))), "\(when): a part of the marker is in \(name)")
            }
        }
        try expectNoMarker("in the WAL")
        try box.checkpoint()
        try expectNoMarker("after a checkpoint")
        try box.begin()
        for i in 0..<300 { try box.remove(table, key: EncryptionFixtures.key(i), secure: true) }
        try box.commit()
        try box.checkpoint()
        try expectNoMarker("after a secure remove")
        try box.close()
        try expectNoMarker("after close")
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count, let first = needle.first else { return false }
        var i = 0
        while i + needle.count <= haystack.count {
            if haystack[i] == first && Array(haystack[i..<(i + needle.count)]) == needle { return true }
            i += 1
        }
        return false
    }

    /// A wrong key, a wrong salt, no key: typed errors, and the files are not touched.
    @Test func wrongKeyOrSaltOrNoKeyIsATypedErrorAndChangesNothing() throws {
        let path = temporaryDatabasePath("enc-wrongkey")
        defer { removeItem(path) }
        var box = try ValueBox(path: path, options: EncryptionFixtures.options(checkpointWALBytes: 16 << 10))
        try fill(box, 0..<200)
        try box.close()
        let before = try files(path)
        expectError("wrongKey") { _ = try ValueBox(path: path, options: EncryptionFixtures.options(EncryptionFixtures.otherKey)) }
        expectError("wrongKey") { _ = try ValueBox(path: path, options: EncryptionFixtures.options(EncryptionFixtures.otherSalt)) }
        expectError("encryptionKeyRequired") { _ = try ValueBox(path: path, options: EncryptionFixtures.options(nil)) }
        var readOnly = EncryptionFixtures.options(EncryptionFixtures.otherKey)
        readOnly.readOnly = true
        expectError("wrongKey") { _ = try ValueBox(path: path, options: readOnly) }
        #expect(try files(path)["data"] == before["data"])
        #expect(try files(path)["wal"] == before["wal"])
        box = try ValueBox(path: path, options: EncryptionFixtures.options())
        try verify(box, 0..<200)
        try box.close()
    }

    /// A second value box with the wrong key fails cleanly; the first keeps writing, and a right-key one sees it.
    @Test func aSecondValueBoxWithTheWrongKeyDoesNotDisturbTheFirst() throws {
        let path = temporaryDatabasePath("enc-second")
        defer { removeItem(path) }
        let first = try ValueBox(path: path, options: EncryptionFixtures.options(checkpointWALBytes: 32 << 10))
        try fill(first, 0..<100)
        expectError("wrongKey") { _ = try ValueBox(path: path, options: EncryptionFixtures.options(EncryptionFixtures.otherKey)) }
        expectError("encryptionKeyRequired") { _ = try ValueBox(path: path, options: EncryptionFixtures.options(nil)) }
        try fill(first, 100..<300)
        let second = try ValueBox(path: path, options: EncryptionFixtures.options())
        try verify(second, 0..<300)
        try fill(second, 300..<400)
        try verify(first, 0..<400)
        try second.close()
        try first.close()
    }

    /// Without `forceEncryptionIfNoSet` a plain database opened with a key stays plain (Postbox's behaviour).
    @Test func aPlainDatabaseStaysPlainWithoutForce() throws {
        let path = temporaryDatabasePath("enc-plain")
        defer { removeItem(path) }
        var box = try ValueBox(path: path)
        try fill(box, 0..<50)
        try box.close()
        box = try ValueBox(path: path, options: EncryptionFixtures.options())
        try verify(box, 0..<50)
        try fill(box, 50..<80)
        try box.checkpoint()
        try box.close()
        let data = try readFile(path + "/data")
        #expect(!EncryptionHeader.looksLikeHeader(data, count: data.count))
        box = try ValueBox(path: path)
        try verify(box, 0..<80)
        try box.close()
    }

    /// A byte flipped anywhere in an encrypted data file is detected: opening or reading throws a typed error, or
    /// (for a byte no read depends on) every value still reads right. Never a wrong value.
    @Test func aFlippedByteInTheDataFileIsNeverAWrongAnswer() throws {
        let seed = crashTestSeed()
        print("EncryptionTests flip seed: \(seed) (replay with BOXWOOD_SEED=\(seed))")
        var rng = SplitMix64(seed: seed)
        let path = temporaryDatabasePath("enc-flip")
        defer { removeItem(path) }
        let box = try ValueBox(path: path, options: EncryptionFixtures.options())
        try fill(box, 0..<400)
        try box.close()
        let original = try readFile(path + "/data")
        let wal = try readFile(path + "/wal")
        var detected = 0
        for trial in 0..<40 {
            let copy = temporaryDatabasePath("enc-flip-\(trial)")
            defer { removeItem(copy) }
            try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
            var damaged = original
            let position = EncryptionHeader.size + rng.below(original.count - EncryptionHeader.size)
            damaged[position] ^= UInt8(1 + rng.below(255))
            try writeFile(copy + "/data", damaged)
            try writeFile(copy + "/wal", wal)
            do {
                let reopened = try ValueBox(path: copy, options: EncryptionFixtures.options())
                for i in 0..<400 {
                    let stored = try reopened.bytes(table, EncryptionFixtures.key(i))
                    #expect(stored == EncryptionFixtures.value(i), "trial \(trial): flip at \(position) changed key \(i)")
                }
                try reopened.close()
            } catch let error as BoxwoodError {
                #expect(["checksumMismatch", "corrupted"].contains(error.kind), "trial \(trial): flip at \(position): \(error)")
                detected += 1
            }
        }
        #expect(detected > 30, "only \(detected) of 40 flips were detected")
    }

    /// A damaged WAL record before intact ones is mid-log damage (refused), as in a plain log; a damaged last one
    /// is a torn tail (cut).
    @Test func aFlippedByteInTheWALIsDamageNotAnAnswer() throws {
        let path = temporaryDatabasePath("enc-walflip")
        defer { removeItem(path) }
        // `full`: each record proves the ones before it were durable (copied without the header, the files
        // carry no same-boot evidence).
        var options = EncryptionFixtures.options()
        options.durability = .full
        let box = try ValueBox(path: path, options: options)
        for batch in 0..<3 { try fill(box, (batch * 10)..<((batch + 1) * 10)) }
        let walEnd = Int(try box.statistics().walBytes)
        let walCopy = try readFile(path + "/wal")
        let dataCopy = try readFile(path + "/data")
        try box.close()
        // The first record's payload starts after the 32-byte log header and the 32-byte record header.
        let middle = temporaryDatabasePath("enc-walflip-mid")
        defer { removeItem(middle) }
        try FileManager.default.createDirectory(atPath: middle, withIntermediateDirectories: true)
        var damaged = walCopy
        damaged[32 + 32 + 5] ^= 0x40
        try writeFile(middle + "/data", dataCopy)
        try writeFile(middle + "/wal", damaged)
        expectError("corrupted") { _ = try ValueBox(path: middle, options: EncryptionFixtures.options()) }
        // The last record's tag is the last 16 bytes before its end marker.
        let tail = temporaryDatabasePath("enc-walflip-tail")
        defer { removeItem(tail) }
        try FileManager.default.createDirectory(atPath: tail, withIntermediateDirectories: true)
        damaged = walCopy
        damaged[walEnd - 3] ^= 0x01
        try writeFile(tail + "/data", dataCopy)
        try writeFile(tail + "/wal", damaged)
        let reopened = try ValueBox(path: tail, options: EncryptionFixtures.options())
        try verify(reopened, 0..<20)
        #expect(reopened.transactionStateVersion == 2)
        try reopened.close()
    }

    /// One damaged copy of the encryption header is survived (the other copy is read); both damaged is named as
    /// such, not taken for a wrong key or garbage.
    @Test func aDamagedHeaderIsSurvivedOrNamed() throws {
        let path = temporaryDatabasePath("enc-header")
        defer { removeItem(path) }
        let box = try ValueBox(path: path, options: EncryptionFixtures.options())
        try fill(box, 0..<50)
        try box.checkpoint()
        try box.close()
        var data = try readFile(path + "/data")
        for i in 0..<512 { data[i] = UInt8(truncatingIfNeeded: i &* 37) }   // the first sector, with the first copy
        try writeFile(path + "/data", data)
        let reopened = try ValueBox(path: path, options: EncryptionFixtures.options())
        try verify(reopened, 0..<50)
        try reopened.close()
        data = try readFile(path + "/data")
        data[2048 + 90] ^= 0x10   // inside the second copy's key check value
        try writeFile(path + "/data", data)
        let error = expectError("corrupted") { _ = try ValueBox(path: path, options: EncryptionFixtures.options()) }
        #expect(error?.description.contains("encryption header") == true)
    }

    /// With no room for decrypted pages, every read still sees the right bytes (pages are freed between
    /// operations only), including reads nested in a range scan.
    @Test func aTinyDecryptedPageCacheStillReadsRight() throws {
        let path = temporaryDatabasePath("enc-cache")
        defer { removeItem(path) }
        var options = EncryptionFixtures.options(checkpointWALBytes: 32 << 10)
        options.decryptedPageCacheBytes = 0
        let box = try ValueBox(path: path, options: options)
        for batch in 0..<5 { try fill(box, (batch * 100)..<((batch + 1) * 100)) }
        try box.checkpoint()
        var seen = 0
        try box.range(table, start: ValueBoxKey([0]), end: ValueBoxKey([0xFF]), values: { key, value in
            let i = Int(String(decoding: key.byteArray.dropFirst(4), as: UTF8.self))!
            #expect(value.makeArray() == EncryptionFixtures.value(i))
            #expect((try? box.bytes(self.table, EncryptionFixtures.key((i + 7) % 500))) == EncryptionFixtures.value((i + 7) % 500))
            seen += 1
            return true
        }, limit: 0)
        #expect(seen == 500)
        try verify(box, 0..<500)
        try box.close()
    }

    /// A creation cut short (only part of the header and metas written, no WAL yet) is redone on the next open.
    @Test func anInterruptedEncryptedCreationIsRedone() throws {
        let path = temporaryDatabasePath("enc-create")
        defer { removeItem(path) }
        try ValueBox(path: path, options: EncryptionFixtures.options()).close()
        removeItem(path + "/wal")
        removeItem(path + "/header")
        let data = try readFile(path + "/data")
        try writeFile(path + "/data", Array(data.prefix(EncryptionHeader.size + 100)))
        let box = try ValueBox(path: path, options: EncryptionFixtures.options())
        try fill(box, 0..<10)
        try box.close()
        let reopened = try ValueBox(path: path, options: EncryptionFixtures.options())
        try verify(reopened, 0..<10)
        try reopened.close()
    }

    /// `forceEncryptionIfNoSet` encrypts a plain database in place on open: afterwards it needs the key, and no
    /// plaintext is left in its files.
    @Test func forceEncryptionEncryptsAPlainDatabaseInPlace() throws {
        let marker = Array("PLAIN-BEFORE-ENCRYPTION-51c9".utf8)
        let path = temporaryDatabasePath("enc-force")
        defer { removeItem(path) }
        var box = try ValueBox(path: path)
        try fill(box, 0..<200, marker: marker)
        try box.close()
        var parameters = EncryptionFixtures.parameters
        parameters.forceEncryptionIfNoSet = true
        box = try ValueBox(path: path, options: EncryptionFixtures.options(parameters))
        #expect(box.isEncrypted)
        try verify(box, 0..<200, marker: marker)
        try fill(box, 200..<250, marker: marker)
        try box.close()
        for (name, bytes) in try files(path) { #expect(!contains(bytes, marker), "the marker is still in \(name)") }
        expectError("encryptionKeyRequired") { _ = try ValueBox(path: path) }
        box = try ValueBox(path: path, options: EncryptionFixtures.options(parameters))
        try verify(box, 0..<250, marker: marker)
        try box.close()
    }

    /// `rekey` moves the database to another key (the old one no longer opens it) and, with nil, back to plain.
    @Test func rekeyChangesTheKeyAndCanDecrypt() throws {
        let path = temporaryDatabasePath("enc-rekey")
        defer { removeItem(path) }
        var box = try ValueBox(path: path, options: EncryptionFixtures.options())
        try fill(box, 0..<300)
        try box.rekey(to: EncryptionFixtures.otherKey)
        #expect(box.encryption == EncryptionFixtures.otherKey)
        try fill(box, 300..<350)
        try verify(box, 0..<350)
        try box.close()
        expectError("wrongKey") { _ = try ValueBox(path: path, options: EncryptionFixtures.options()) }
        box = try ValueBox(path: path, options: EncryptionFixtures.options(EncryptionFixtures.otherKey))
        try verify(box, 0..<350)
        try box.rekey(to: nil)
        #expect(!box.isEncrypted)
        try box.close()
        box = try ValueBox(path: path)
        try verify(box, 0..<350)
        try box.close()
    }

    /// A second value box still on the old key after another one rekeyed: its next read is a typed error.
    @Test func aValueBoxOnTheOldKeyGetsWrongKeyAfterARekey() throws {
        let path = temporaryDatabasePath("enc-rekey-other")
        defer { removeItem(path) }
        let first = try ValueBox(path: path, options: EncryptionFixtures.options())
        try fill(first, 0..<100)
        let second = try ValueBox(path: path, options: EncryptionFixtures.options())
        try verify(second, 0..<100)
        try first.rekey(to: EncryptionFixtures.otherKey)
        try fill(first, 100..<120)
        expectError("wrongKey") { _ = try second.bytes(table, EncryptionFixtures.key(110)) }
        try? second.close()
        try verify(first, 0..<120)
        try first.close()
    }

    /// A backup keeps the database's key; `exportEncrypted` writes a copy under the key it is given, or a plain one.
    @Test func backupKeepsTheKeyAndExportChoosesIt() throws {
        let root = temporaryDatabasePath("enc-export")
        defer { removeItem(root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let box = try ValueBox(path: root + "/db", options: EncryptionFixtures.options())
        try fill(box, 0..<150)
        try box.backup(to: root + "/backup")
        try box.exportEncrypted(to: root + "/other", encryptionParameters: EncryptionFixtures.otherKey)
        try box.exportEncrypted(to: root + "/plain", encryptionParameters: nil)
        try box.close()
        expectError("encryptionKeyRequired") { _ = try ValueBox(path: root + "/backup") }
        expectError("wrongKey") { _ = try ValueBox(path: root + "/other", options: EncryptionFixtures.options()) }
        for (path, parameters) in [(root + "/backup", EncryptionFixtures.parameters), (root + "/other", EncryptionFixtures.otherKey)] {
            let copy = try ValueBox(path: path, options: EncryptionFixtures.options(parameters))
            #expect(copy.isEncrypted)
            try verify(copy, 0..<150)
            try copy.close()
        }
        let plain = try ValueBox(path: root + "/plain")
        #expect(!plain.isEncrypted)
        try verify(plain, 0..<150)
        try plain.close()
    }

    /// `check` names a tampered page of an encrypted file by its file and page number.
    @Test func checkNamesATamperedPage() throws {
        let path = temporaryDatabasePath("enc-check")
        defer { removeItem(path) }
        let box = try ValueBox(path: path, options: EncryptionFixtures.options())
        try fill(box, 0..<400)
        try box.checkpoint()
        try box.close()
        let original = try readFile(path + "/data")
        let pages = (original.count - EncryptionHeader.size) / PageCipher.slotSize
        var named = 0
        for page in stride(from: pages - 1, through: 2, by: -7) {
            var damaged = original
            damaged[EncryptionHeader.size + page * PageCipher.slotSize + 1000] ^= 0x20
            try writeFile(path + "/data", damaged)
            guard let reopened = try? ValueBox(path: path, options: EncryptionFixtures.options()) else { continue }
            let report = try reopened.check()
            try reopened.close()
            #expect(report.problems.contains { $0.contains(path + "/data") && $0.contains("page \(page)") },
                    "page \(page): \(report.problems.prefix(3))")
            named += 1
        }
        try writeFile(path + "/data", original)
        #expect(named > 3)
    }

    /// The decrypted-page cache's CLOCK trim keeps the pages read since the last sweep and frees the others down to
    /// its target; a page it holds is the page it was given.
    @Test func decryptedPageCacheTrimKeepsTheReferencedPages() {
        let cache = DecryptedPageCache()
        let pageSize = DecryptedPageCache.pageSize
        for page in UInt64(0)..<100 {
            let memory = cache.buffer()
            memory.storeBytes(of: page, as: UInt64.self)
            cache.insert(memory, as: page)
        }
        #expect(cache.count == 100)
        #expect(!cache.trim(budget: 200 * pageSize), "nothing to trim under a large budget")
        // The first sweep clears the marks the inserts set; the second frees pages 0..<26, leaving 75% of 99.
        #expect(cache.trim(budget: 99 * pageSize))
        #expect(cache.count == 74)
        #expect((UInt64(0)..<100).filter { cache.holds($0) } == Array(26..<100))
        // Read 50..<74 (marks them); a trim to 30 pages frees the unread pages after the hand first.
        for page in UInt64(50)..<74 { #expect(cache.page(page)?.load(as: UInt64.self) == page) }
        #expect(cache.trim(budget: 40 * pageSize))
        #expect(cache.count == 30)
        for page in UInt64(50)..<74 { #expect(cache.holds(page), "page \(page), read since the last sweep, was freed") }
        for page in UInt64(0)..<100 where cache.holds(page) { #expect(cache.page(page)?.load(as: UInt64.self) == page) }
        #expect(!cache.trim(budget: 1_000 * pageSize), "nothing to trim under a large budget")
        cache.removeAll()
        #expect(cache.count == 0)
    }
}
