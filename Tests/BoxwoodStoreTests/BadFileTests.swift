import Testing
import Foundation
@testable import BoxwoodStore
#if canImport(Glibc)
import Glibc
#endif

/// Opening things that are not (intact) Boxwood databases: every case must end in a typed `BoxwoodError`
/// (never a crash), must not modify the files, and the directory must be usable again once repaired.
@Suite struct BadFileTests {
    let table = ValueBoxTable(id: 5, keyType: .binary)
    let big = ValueBoxTable(id: 6, keyType: .int64)

    /// A checkpointed database (see ``makeMultiLevelDatabase(_:tree:big:seed:settle:)``) with a multi-level tree,
    /// a 100 KB overflow value and a non-empty freelist.
    private func makeDatabase() throws -> String {
        try makeMultiLevelDatabase("bad", tree: table, big: big, seed: 5) { box in
            // Settle: no free tail left for a later open and close to cut off, so the tests below can put the
            // data file back alone after damaging it.
            for _ in 0..<4 { try box.checkpoint() }
            #expect(!box.hasFreeTail)
        }
    }

    private func key(_ i: UInt32) -> ValueBoxKey { uint32Key(i) }

    private struct Layout {
        var root: UInt64 = 0
        var firstLeaf: UInt64 = 0
        var lastLeaf: UInt64 = 0
        var overflow: UInt64 = 0
        var catalog: UInt64 = 0
        var freelist: UInt64 = 0
    }

    /// Page numbers of interesting pages of a closed, checkpointed database.
    private func layout(_ path: String) throws -> Layout {
        let box = try ValueBox(path: path)
        defer { try? box.close() }
        var l = Layout()
        l.root = box.state.tables[table.id]!.root
        l.catalog = box.meta.catalogRoot
        l.freelist = box.meta.freelistHead
        let rootPage = try box.pager.diskPage(l.root)
        #expect(PageType.raw(of: rootPage) == PageType.branch.rawValue, "the test table should be more than one level deep")
        var p = rootPage, ref = l.root
        while PageType.raw(of: p) == PageType.branch.rawValue { ref = BranchPage(p).child(0); p = try box.pager.diskPage(ref) }
        l.firstLeaf = ref
        p = rootPage
        while PageType.raw(of: p) == PageType.branch.rawValue { ref = BranchPage(p).child(BranchPage(p).count); p = try box.pager.diskPage(ref) }
        l.lastLeaf = ref
        let bigRoot = try box.pager.diskPage(box.state.tables[big.id]!.root)
        for i in 0..<LeafPage(bigRoot).count {
            if let o = LeafValue.overflowReference(bigRoot, LeafPage(bigRoot).slot(i)) { l.overflow = o }
        }
        #expect(l.catalog != 0 && l.freelist != 0 && l.overflow != 0 && l.firstLeaf != l.lastLeaf)
        return l
    }

    private func snapshot(_ path: String) throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            out[name] = try readFile(path + "/" + name)
        }
        return out
    }

    private func flip(_ path: String, page: UInt64, offset: Int = 2000) throws {
        var data = try readFile(path + "/data")
        data[Int(page) * PageLayout.pageSize + offset] ^= 0x40
        try writeFile(path + "/data", data)
    }

    /// Opens the database at `path`, writable and, when `readOnlyToo`, read-only, expecting each open to fail
    /// with a `BoxwoodError` of one of `kinds` and to change no file (`comment` goes with that expectation).
    /// Returns the writable open's error.
    @discardableResult
    private func expectOpenRefused(_ path: String, _ kinds: [String], readOnlyToo: Bool, _ comment: Comment? = nil,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws -> BoxwoodError? {
        let before = try snapshot(path)
        let error = expectError(anyOf: kinds, sourceLocation: sourceLocation) { _ = try ValueBox(path: path) }
        if readOnlyToo {
            expectError(anyOf: kinds, sourceLocation: sourceLocation) {
                _ = try ValueBox(path: path, options: ValueBoxOptions(readOnly: true))
            }
        }
        #expect(try snapshot(path) == before, comment, sourceLocation: sourceLocation)
        return error
    }

    /// Opens the damaged database at `path` (writable), runs `body` on it, closes it and puts `original` back
    /// as its data file.
    private func withDamagedBox(_ path: String, restoring original: [UInt8], _ body: (ValueBox) throws -> Void) throws {
        let box = try ValueBox(path: path)
        try body(box)
        try box.close()
        try writeFile(path + "/data", original)
    }

    private func expectIntact(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let box = try ValueBox(path: path)
        #expect(try box.count(table) == 2000, sourceLocation: sourceLocation)
        #expect(try box.get(big, key: ikey(-1))?.length == 100_000, sourceLocation: sourceLocation)
        #expect(try box.check().problems == [], sourceLocation: sourceLocation)
        try box.close()
    }

    // MARK: Not a database

    @Test func regularFileInsteadOfADirectory() throws {
        let path = temporaryDatabasePath("regular")
        defer { removeItem(path) }
        try writeFile(path, Array("hello".utf8))
        expectError("notABoxwoodDatabase") { _ = try ValueBox(path: path) }
        expectError("notABoxwoodDatabase") { _ = try ValueBox(path: path, options: ValueBoxOptions(readOnly: true)) }
        #expect(try readFile(path) == Array("hello".utf8), "the file is untouched")
    }

    @Test func emptyDataFileIsTreatedAsANewDatabase() throws {
        // Documented behaviour: a zero-length `data` (e.g. a crash right after creating it) is initialized as
        // a new, empty database. A stale WAL beside it has the wrong salt and is reset, not replayed.
        let path = temporaryDatabasePath("emptydata")
        defer { removeItem(path) }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try writeFile(path + "/data", [])
        do {
            let box = try ValueBox(path: path)
            #expect(try box.allTables().isEmpty)
            #expect(box.transactionStateVersion == 0)
            #expect(try box.check().problems == [])
            try box.begin()
            try box.set(table, key: bkey([1]), value: mbuf([1]))
            try box.commit()
            try box.close()
        }
        let box = try ValueBox(path: path)
        #expect(try box.bytes(table, bkey([1])) == [1])
        try box.close()
        #expect(try readFile(path + "/data").count >= 2 * PageLayout.pageSize)
    }

    @Test func emptyDataFileOpenedReadOnly() throws {
        let path = temporaryDatabasePath("emptydata-ro")
        defer { removeItem(path) }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try writeFile(path + "/data", [])
        // A read-only open must not write: it cannot initialize the file, so it is not a database (yet).
        expectError("notABoxwoodDatabase") { _ = try ValueBox(path: path, options: ValueBoxOptions(readOnly: true)) }
        #expect(try readFile(path + "/data").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: path + "/wal"))
        // A writable open then initializes it.
        let box = try ValueBox(path: path)
        #expect(try box.check().problems == [])
        try box.close()
    }

    @Test func randomBytesAsData() throws {
        var rng = SplitMix64(seed: 0xBAD)
        for size in [1, 100, 4096, 8191, 8192, 50_000] {
            let path = temporaryDatabasePath("random")
            defer { removeItem(path) }
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try writeFile(path + "/data", rng.bytes(size))
            try expectOpenRefused(path, ["notABoxwoodDatabase"], readOnlyToo: true, "a failed open changes nothing (size \(size))")
        }
    }

    @Test func foreignFilesAsData() throws {
        var rng = SplitMix64(seed: 0xF0F0)
        // An SQLite database header (100 bytes) followed by pages, a PNG, text, and a zero-filled file.
        var sqlite = Array("SQLite format 3\0".utf8)
        sqlite += [0x10, 0x00, 0x01, 0x01, 0x00, 0x40, 0x20, 0x20] + [UInt8](repeating: 0, count: 100 - 24)
        sqlite += rng.bytes(4096 * 3 - sqlite.count)
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + rng.bytes(10_000)
        let text = Array(String(repeating: "The quick brown fox jumps over the lazy dog.\n", count: 300).utf8)
        let zeros = [UInt8](repeating: 0, count: 3 * 4096)
        // A Boxwood WAL file used as data.
        let walPath = try makeDatabase()
        defer { removeItem(walPath) }
        let wal = try readFile(walPath + "/wal") + [UInt8](repeating: 0, count: 8192)
        for (name, bytes) in [("sqlite", sqlite), ("png", png), ("text", text), ("zeros", zeros), ("wal", wal)] {
            let path = temporaryDatabasePath("foreign-\(name)")
            defer { removeItem(path) }
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try writeFile(path + "/data", bytes)
            let e = try expectOpenRefused(path, ["notABoxwoodDatabase"], readOnlyToo: false, "\(name): a failed open changes nothing")
            if case let .notABoxwoodDatabase(p, _) = e { #expect(p == path) }
        }
    }

    @Test func dataOrWALThatIsADirectory() throws {
        for name in ["data", "wal"] {
            let path = try makeDatabase()
            defer { removeItem(path) }
            let saved = try readFile(path + "/" + name)
            removeItem(path + "/" + name)
            try FileManager.default.createDirectory(atPath: path + "/" + name, withIntermediateDirectories: true)
            expectError("io", "notABoxwoodDatabase", "corrupted") { _ = try ValueBox(path: path) }
            removeItem(path + "/" + name)
            try writeFile(path + "/" + name, saved)
            try expectIntact(path)
        }
    }

    @Test func missingParentDirectory() throws {
        let path = temporaryDatabasePath("noparent") + "/a/b"
        expectError("io") { _ = try ValueBox(path: path) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func readOnlyDirectory() throws {
        // Tests usually run as root in CI containers, where permission bits are not enforced: skip then.
        if getuid() == 0 { return }
        let path = temporaryDatabasePath("ro-dir")
        defer { chmod(path, 0o755); removeItem(path) }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, 0o555)
        expectError("io") { _ = try ValueBox(path: path) }
        chmod(path, 0o755)
        let box = try ValueBox(path: path)
        #expect(try box.check().problems == [])
        try box.close()
    }

    // MARK: Damaged data files

    @Test func truncatedDataFile() throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        let original = try readFile(path + "/data")
        let wal = try readFile(path + "/wal")
        let size = original.count
        #expect(size % PageLayout.pageSize == 0 && size > 20 * PageLayout.pageSize)
        for cut in [10, 100, 4096, 4096 + 100, 8192, 8192 + 1, 3 * 4096, size / 2, size - 4096, size - 100, size - 1] {
            try writeFile(path + "/data", Array(original.prefix(cut)))
            // A data file shorter than its meta pages beside an initialized WAL is a damaged database, not
            // an interrupted creation.
            let kinds = ["corrupted", "checksumMismatch"]
            let e = try expectOpenRefused(path, ["corrupted", "checksumMismatch", "notABoxwoodDatabase"], readOnlyToo: false,
                                          "cut at \(cut): a failed open changes nothing")
            if let e { #expect(kinds.contains(e.kind), "cut at \(cut): \(e)") }
            // Put the file back: the database opens again with all its data.
            try writeFile(path + "/data", original)
            try writeFile(path + "/wal", wal)
            try expectIntact(path)
            try writeFile(path + "/data", original)
            try writeFile(path + "/wal", wal)
        }
    }

    @Test func flippedByteInALeafPage() throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        let l = try layout(path)
        let original = try readFile(path + "/data")
        try flip(path, page: l.firstLeaf)
        try withDamagedBox(path, restoring: original) { box throws in   // table pages are verified lazily: the open succeeds
            let e = expectError("checksumMismatch") { _ = try box.get(table, key: key(0)) }
            if case let .checksumMismatch(_, page, offset) = e {
                #expect(page == l.firstLeaf && offset == l.firstLeaf * UInt64(PageLayout.pageSize))
            }
            expectError("checksumMismatch") { _ = try box.exists(table, key: key(0)) }
            expectError("checksumMismatch") { _ = try box.rangeKeys(table, bkey([]), bkey([0xFF])) }
            expectError("checksumMismatch") { _ = try box.count(table, start: bkey([]), end: bkey([0xFF])) }
            // Keys in other pages are still readable.
            #expect(try box.get(table, key: key(2999))?.length == 20 + 2999 % 50)
            #expect(try box.rangeKeys(table, bkey([0xFF]), key(2990)).count == 9)
            // A write that needs the page fails, and the transaction can be aborted.
            try box.begin()
            expectError("checksumMismatch") { try box.set(table, key: key(1), value: mbuf([1])) }
            box.abort()
            let report = try box.check()
            #expect(report.problems.contains { $0.contains("checksum") }, "\(report.problems)")
        }
        try expectIntact(path)
    }

    @Test func flippedByteInOtherPages() throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        let l = try layout(path)
        let original = try readFile(path + "/data")

        // Branch root: every lookup in the table fails; the other table works.
        try flip(path, page: l.root, offset: 9)
        try withDamagedBox(path, restoring: original) { box throws in
            expectError("checksumMismatch") { _ = try box.get(table, key: key(2999)) }
            #expect(try box.get(big, key: ikey(1))?.makeArray() == [1])
            #expect(try box.check().problems.isEmpty == false)
        }

        // Overflow page of the big value: that value fails, the rest works.
        try flip(path, page: l.overflow, offset: 4000)
        try withDamagedBox(path, restoring: original) { box throws in
            expectError("checksumMismatch") { _ = try box.get(big, key: ikey(-1)) }
            expectError("checksumMismatch") { try box.read(big, key: ikey(-1)) { _, _ in } }
            #expect(try box.get(big, key: ikey(1))?.makeArray() == [1])
            #expect(try box.count(table) == 2000)
            #expect(try box.check().problems.contains { $0.contains("checksum") })
        }

        // The checksum field itself.
        try flip(path, page: l.lastLeaf, offset: 3)
        try withDamagedBox(path, restoring: original) { box throws in
            expectError("checksumMismatch") { _ = try box.get(table, key: key(2999)) }
        }

        // Catalog and freelist pages are read at open: the open fails and changes nothing.
        for page in [l.catalog, l.freelist] {
            try flip(path, page: page)
            try expectOpenRefused(path, ["checksumMismatch"], readOnlyToo: true)
            try writeFile(path + "/data", original)
        }
        try expectIntact(path)
    }

    @Test func structurallyBadPagesWithValidChecksums() throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        let l = try layout(path)
        let original = try readFile(path + "/data")

        // A leaf claiming 65535 cells.
        try rewritePage(path, page: l.firstLeaf) { store16($0, PageLayout.countOffset, 0xFFFF) }
        try withDamagedBox(path, restoring: original) { box throws in
            expectError("corrupted") { _ = try box.get(table, key: key(0)) }
            #expect(try box.check().problems.isEmpty == false)
        }

        // A leaf whose first slot points outside the page.
        try rewritePage(path, page: l.firstLeaf) { store16($0, PageLayout.headerSize, 4090) }
        try withDamagedBox(path, restoring: original) { box throws in
            expectError("corrupted") { _ = try box.get(table, key: key(0)) }
        }

        // A branch whose leftmost child is itself (a cycle).
        try rewritePage(path, page: l.root) { store64($0, PageLayout.linkOffset, l.root) }
        try withDamagedBox(path, restoring: original) { box throws in
            expectError("corrupted") { _ = try box.get(table, key: key(0)) }
            expectError("corrupted") { _ = try box.rangeKeys(table, bkey([]), bkey([0xFF])) }
            #expect(try box.check().problems.isEmpty == false)
        }

        // A branch pointing at a page beyond the end of the file.
        try rewritePage(path, page: l.root) { store64($0, PageLayout.linkOffset, 1 << 40) }
        try withDamagedBox(path, restoring: original) { box throws in
            expectError("corrupted") { _ = try box.get(table, key: key(0)) }
            #expect(try box.check().problems.isEmpty == false)
        }

        // An unknown page type where the leaf should be.
        try rewritePage(path, page: l.firstLeaf) { $0.storeBytes(of: 0x77, toByteOffset: PageLayout.typeOffset, as: UInt8.self) }
        try withDamagedBox(path, restoring: original) { box throws in
            expectError("corrupted") { _ = try box.get(table, key: key(0)) }
        }

        // The big value is an extent (consecutive pages, one checksum over all of them): a byte flipped in its
        // middle or in its zero tail fails that checksum.
        #expect(try isExtentHead(path, page: l.overflow))
        for offset in [12 * PageLayout.pageSize + 77, 24 * PageLayout.pageSize + 4000] {
            try flip(path, page: l.overflow, offset: offset)
            try withDamagedBox(path, restoring: original) { box throws in
                expectError("checksumMismatch") { _ = try box.get(big, key: ikey(-1)) }
                expectError("checksumMismatch") { _ = try box.withValue(big, key: ikey(-1)) { _ in } }
                #expect(try box.get(big, key: ikey(1))?.makeArray() == [1])
                #expect(try box.check().problems.contains { $0.contains("checksum") })
            }
        }

        // An extent whose length disagrees with its cell's (checksum valid).
        try rewriteExtent(path, head: l.overflow) { store64($0, PageLayout.auxOffset, 99_999) }
        try withDamagedBox(path, restoring: original) { box throws in
            expectError("corrupted") { _ = try box.get(big, key: ikey(-1)) }
            #expect(try box.check().problems.contains { $0.contains("extent") })
        }

        // An extent that claims to run past the end of the file.
        try rewriteExtent(path, head: l.overflow) { store64($0, PageLayout.auxOffset, 1 << 31) }
        try withDamagedBox(path, restoring: original) { box throws in
            expectError("corrupted") { _ = try box.get(big, key: ikey(-1)) }
            #expect(try box.check().problems.isEmpty == false)
        }

        // The same value as an overflow chain (a file written before extents), cut short.
        try rewriteExtentsAsChains(path, heads: [l.overflow])
        try rewritePage(path, page: l.overflow) { store64($0, PageLayout.linkOffset, 0) }
        try withDamagedBox(path, restoring: original) { box throws in
            expectError("corrupted") { _ = try box.get(big, key: ikey(-1)) }
            #expect(try box.check().problems.isEmpty == false)
        }
        try expectIntact(path)
    }

    @Test func newerFormatVersion() throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        let original = try readFile(path + "/data")
        for slot in [UInt64(0), 1] { try rewritePage(path, page: slot) { store32($0, 40, MetaPage.formatVersion + 1) } }
        let e = try expectOpenRefused(path, ["unsupportedFormatVersion"], readOnlyToo: true)
        if case let .unsupportedFormatVersion(_, found, supported) = e {
            #expect(found == MetaPage.formatVersion + 1 && supported == MetaPage.formatVersion)
        }
        try writeFile(path + "/data", original)
        try expectIntact(path)
    }

    @Test func bothMetaPagesDamaged() throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        let original = try readFile(path + "/data")
        try flip(path, page: 0, offset: 100)
        try flip(path, page: 1, offset: 100)
        try expectOpenRefused(path, ["checksumMismatch", "corrupted"], readOnlyToo: false)
        try writeFile(path + "/data", original)
        try expectIntact(path)
    }

    @Test func garbageWALIsRefusedButATornHeaderIsNot() throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        var rng = SplitMix64(seed: 0x3A1)
        // A log header is synced before any record follows it: bytes after an invalid header are damage.
        try writeFile(path + "/wal", rng.bytes(20_000))
        let error = try expectOpenRefused(path, ["checksumMismatch"], readOnlyToo: false)
        #expect(error == .checksumMismatch(file: path + "/wal", page: nil, offset: 0))
        // An intact header of another WAL version, with records after it: a version error, not damage.
        var header = [UInt8](repeating: 0, count: 32)
        header.replaceSubrange(0..<8, with: Array("BXWDWAL\0".utf8))
        header[8] = 1
        header[13] = 0x10 // page size 4096, little-endian
        let checksum = header.withUnsafeBytes { XXH64.hash($0.baseAddress!, 24) }
        for i in 0..<8 { header[24 + i] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt64(i))) }
        try writeFile(path + "/wal", header + rng.bytes(100))
        let old = expectError("unsupportedFormatVersion") { _ = try ValueBox(path: path) }
        #expect(old == .unsupportedFormatVersion(path: path + "/wal", found: 1, supported: WriteAheadLog.version))
        // A header torn while being written (nothing after it) is a log that was being reset.
        try writeFile(path + "/wal", rng.bytes(20))
        try expectIntact(path)
        // A WAL that holds only a valid header of another database (a different salt) is ignored too.
        let other = try makeDatabase()
        defer { removeItem(other) }
        let otherBox = try ValueBox(path: other)
        try otherBox.begin()
        try otherBox.set(table, key: key(1_000_000), value: mbuf([1]))
        try otherBox.commit()
        try copyDatabaseFiles(from: other, to: other + "-copy")
        defer { removeItem(other + "-copy") }
        try otherBox.close()
        // A WAL with a valid header of another database (a salt matching neither meta page) cannot be told
        // from the WAL of a checkpoint whose meta page was damaged: refused, naming the meta page.
        let walBefore = try readFile(path + "/wal")
        try writeFile(path + "/wal", try readFile(other + "-copy/wal"))
        let foreign = expectError("corrupted") { _ = try ValueBox(path: path) }
        if case let .corrupted(file, page, _)? = foreign {
            #expect(file == path + "/data" && page != nil)
        }
        try writeFile(path + "/wal", walBefore)
        try expectIntact(path)
    }
}
