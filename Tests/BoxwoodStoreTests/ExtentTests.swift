import Foundation
import Testing
import BoxwoodCrashWorkload
@testable import BoxwoodStore

/// Extents (`ExtentPage`): values of more than one overflow page in consecutive pages of a plain file. What they are
/// made of, that the allocator finds runs, that freed extents give back every page, that encrypted files keep
/// chains, that files written before extents (chains, format version 1) still read and upgrade, and that a
/// reference into the middle of an extent is caught. (Damaged extents: `BadFileTests.flippedByteInOtherPages`,
/// `SalvageTests.damagedOverflowChainLosesOnlyItsEntry`; the randomized model: `ValueBorrowingTests`; power cuts
/// while a checkpoint writes extents: `PowerCutTests`, whose workload writes 20 KB random values.)
@Suite struct ExtentTests {
    let table = ValueBoxTable(id: 3, keyType: .binary)

    /// The first page of every overflow value of `table` (keys 0..<64), whose tree must be a single leaf (a few
    /// entries), by key.
    func overflowHeads(_ box: ValueBox) throws -> [Int64: UInt64] {
        let root = try #require(box.state.tables[table.id]?.root)
        let p = try box.pager.page(root)
        #expect(PageType.raw(of: p) == PageType.leaf.rawValue, "the test table should be one leaf")
        var heads: [Int64: UInt64] = [:]
        for i in 0..<LeafPage(p).count {
            let off = LeafPage(p).slot(i)
            let (k, n) = LeafPage(p).key(i)
            if let ref = LeafValue.overflowReference(p, off) {
                let bytes = Array(UnsafeRawBufferPointer(start: k, count: n))
                if let key = (0..<Int64(64)).first(where: { ikey($0).byteArray == bytes }) { heads[key] = ref }
            }
        }
        return heads
    }

    /// The format version of the newest meta page of the closed database at `path`.
    func metaVersion(_ path: String) throws -> UInt32 {
        let data = try readFile(path + "/data")
        func field(_ slot: Int, _ offset: Int, _ size: Int) -> UInt64 {
            (0..<size).reduce(UInt64(0)) { $0 | UInt64(data[slot * PageLayout.pageSize + offset + $1]) << (8 * UInt64($1)) }
        }
        let newest = field(0, 48, 8) > field(1, 48, 8) ? 0 : 1
        return UInt32(field(newest, 40, 4))
    }

    @Test func allocatorFindsTheLowestRunOfFreePages() {
        let allocator = PageAllocator(reusable: [30, 20, 19, 18, 10, 9, 7, 5], firstNewPage: 40)
        #expect(allocator.allocateRun(3) == 18)
        #expect(allocator.remainingReusable == [30, 10, 9, 7, 5])
        #expect(allocator.allocateRun(2) == 9)
        #expect(allocator.allocateRun(2) == 40, "no run of two left: new pages")
        #expect(allocator.nextPage == 42)
        #expect(allocator.allocateRun(1) == 5)
        #expect(allocator.remainingReusable == [30, 7])
    }

    @Test func extentLayout() {
        #expect(ExtentPage.pageCount(forStored: 4065) == 2)
        #expect(ExtentPage.pageCount(forStored: 4064 + 4096) == 2)
        #expect(ExtentPage.pageCount(forStored: 4064 + 4097) == 3)
        #expect(ExtentPage.holds(4064, layout: DataFileLayout()) == false)
        #expect(ExtentPage.holds(4065, layout: DataFileLayout()) == true)
        var rng = SplitMix64(seed: 3)
        let value = rng.bytes(10_000)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 3 * PageLayout.pageSize, alignment: 16)
        defer { buffer.deallocate() }
        value.withUnsafeBytes { ExtentPage.build(buffer, head: 77, value: $0.baseAddress!, count: 10_000) }
        #expect(PageType.raw(of: buffer) == PageType.extent.rawValue && ExtentPage.storedLength(buffer) == 10_000)
        #expect(Array(UnsafeRawBufferPointer(start: ExtentPage.bytes(buffer), count: 10_000)) == value)
        #expect(UnsafeRawBufferPointer(start: buffer + 32 + 10_000, count: 3 * 4096 - 10_032).allSatisfy { $0 == 0 })
        #expect(load64(buffer, 0) == ExtentPage.checksum(buffer, pages: 3, head: 77))
        #expect(load64(buffer, 0) != ExtentPage.checksum(buffer, pages: 3, head: 78), "the head's page number seeds the checksum")
        #expect(ExtentPage.problem(buffer, pageCount: 100) == nil)
        #expect(ExtentPage.claimedPages(buffer, head: 77, pageCount: 80) == 3)
        #expect(ExtentPage.claimedPages(buffer, head: 77, pageCount: 79) == nil, "an extent past the end of the file")
    }

    /// Removing and overwriting extents gives every page back: the next values' extents go into the freed runs (the
    /// file does not grow), and `check` accounts for every page.
    @Test func freedExtentsAreReused() throws {
        try withTemporaryBox("extent-reuse") { box, _ in
            var rng = SplitMix64(seed: 21)
            try box.begin()
            for i in 0..<10 { try box.set(table, key: ikey(Int64(i)), value: mbuf(rng.bytes(65_536))) }
            try box.commit()
            try box.checkpoint()
            let pagesAfterFirst = box.meta.pageCount
            for head in try overflowHeads(box).values {
                #expect(PageType.raw(of: try box.pager.diskPage(head)) == PageType.extent.rawValue)
            }
            var expected: [Int64: [UInt8]] = [:]
            for round in 0..<4 {
                try box.begin()
                for i in 0..<10 {
                    if rng.chance(0.3) {
                        try box.remove(table, key: ikey(Int64(i)))
                        expected[Int64(i)] = nil
                    } else {
                        let v = rng.bytes(30_000 + rng.below(35_000))
                        try box.set(table, key: ikey(Int64(i)), value: mbuf(v))
                        expected[Int64(i)] = v
                    }
                }
                try box.commit()
                try box.checkpoint()
                let report = try box.check()
                #expect(report.problems.isEmpty, "round \(round): \(report.problems.prefix(3))")
                #expect(try box.spaceUsage().pagesUnaccounted == 0, "round \(round)")
            }
            // Two checkpoints' worth of values can be live at once (the old copies stay until the next meta is durable).
            #expect(box.meta.pageCount <= 2 * pagesAfterFirst + 8, "the file grew from \(pagesAfterFirst) to \(box.meta.pageCount) pages")
            for (k, v) in expected { #expect(try box.get(table, key: ikey(k))?.makeArray() == v) }
        }
    }

    /// An encrypted file seals every page alone: a large value stays a chain of overflow pages.
    @Test func encryptedFilesKeepChains() throws {
        try withTemporaryBox("extent-encrypted", options: EncryptionFixtures.options()) { box, _ in
            var rng = SplitMix64(seed: 5)
            let value = rng.bytes(50_000)
            try box.begin()
            try box.set(table, key: ikey(1), value: mbuf(value))
            try box.commit()
            try box.checkpoint()
            let head = try #require(try overflowHeads(box)[1])
            #expect(PageType.raw(of: try box.pager.diskPage(head)) == PageType.overflow.rawValue)
            #expect(try box.get(table, key: ikey(1))?.makeArray() == value)
            #expect(try box.check().problems.isEmpty)
        }
    }

    /// A file written before extents (every large value a chain, format version 1) reads, checks, frees its chains
    /// on overwrite and remove, writes extents for new values with format version 2, and compacts into extents.
    @Test func chainsOfTheEarlierFormatStillRead() throws {
        let path = temporaryDatabasePath("extent-old")
        defer { removeItem(path) }
        var rng = SplitMix64(seed: 8)
        // Sizes whose chain takes as many pages as their extent, so the test can rewrite one as the other in place.
        var expected: [Int64: [UInt8]] = [1: rng.bytes(8_000), 2: rng.bytes(50_000), 3: rng.bytes(100_000), 4: rng.bytes(40), 5: rng.bytes(3_000)]
        do {
            let box = try ValueBox(path: path)
            try box.begin()
            for (k, v) in expected { try box.set(table, key: ikey(k), value: mbuf(v)) }
            try box.commit()
            try box.checkpoint()
            let heads = try overflowHeads(box)
            try box.close()
            try rewriteExtentsAsChains(path, heads: [heads[1]!, heads[2]!, heads[3]!])
        }
        #expect(try metaVersion(path) == 1)
        var box = try ValueBox(path: path)
        for (k, v) in expected {
            #expect(try box.get(table, key: ikey(k))?.makeArray() == v, "key \(k)")
            #expect(try box.withValue(table, key: ikey(k)) { Array($0) } == v, "key \(k)")
        }
        for k: Int64 in [1, 2, 3] {
            let head = try #require(try overflowHeads(box)[k])
            #expect(PageType.raw(of: try box.pager.diskPage(head)) == PageType.overflow.rawValue, "key \(k) is a chain")
            let inMapping = try box.withValue(table, key: ikey(k)) { ValueBorrowingTests.isInMapping(box, $0) }
            #expect(inMapping == false, "a chain's bytes are joined in a buffer")
        }
        var report = try box.check()
        #expect(report.problems.isEmpty, "\(report.problems.prefix(3))")

        // Overwrite one chain, remove another, add a value: the chains' pages are freed, the new values are extents.
        try box.begin()
        expected[1] = rng.bytes(9_000)
        try box.set(table, key: ikey(1), value: mbuf(expected[1]!))
        try box.remove(table, key: ikey(2))
        expected[2] = nil
        expected[6] = rng.bytes(70_000)
        try box.set(table, key: ikey(6), value: mbuf(expected[6]!))
        try box.commit()
        try box.checkpoint()
        report = try box.check()
        #expect(report.problems.isEmpty, "\(report.problems.prefix(3))")
        for k: Int64 in [1, 6] {
            let head = try #require(try overflowHeads(box)[k])
            #expect(PageType.raw(of: try box.pager.diskPage(head)) == PageType.extent.rawValue, "key \(k) is an extent")
        }
        try box.close()
        #expect(try metaVersion(path) == MetaPage.formatVersion)

        // Compaction copies the remaining chain (key 3) into an extent.
        box = try ValueBox(path: path)
        _ = try box.compact()
        try box.close()
        box = try ValueBox(path: path)
        let head = try #require(try overflowHeads(box)[3])
        #expect(PageType.raw(of: try box.pager.diskPage(head)) == PageType.extent.rawValue)
        for (k, v) in expected { #expect(try box.get(table, key: ikey(k))?.makeArray() == v, "after compaction: key \(k)") }
        #expect(try box.get(table, key: ikey(2)) == nil)
        report = try box.check()
        #expect(report.problems.isEmpty, "\(report.problems.prefix(3))")
        try box.close()
    }

    /// The crash tests' workload (`PowerCutTests`, `KillReopenTests`, `LazyFSTests`) writes extents in a plain file,
    /// so their cuts and kills land in checkpoints that write extents too.
    @Test func theCrashWorkloadWritesExtents() throws {
        try withTemporaryBox("extent-workload") { box, path in
            let workload = CrashWorkload(seed: 99)
            for n in UInt64(1)...80 { try workload.run(n, in: box) }
            try box.checkpoint()
            var heads = 0
            for page in UInt64(2)..<box.meta.pageCount {
                guard let p = try? box.pager.diskPage(page), PageType.raw(of: p) == PageType.extent.rawValue else { continue }
                heads += 1
            }
            #expect(heads > 0, "80 transactions of the crash workload wrote no extent")
            #expect(try box.check().problems.isEmpty)
        }
    }

    /// A leaf whose overflow reference names a page in the middle of an extent (checksum valid: a forged or
    /// mis-written leaf): that page is no page (no header, no checksum of its own), and the read reports it.
    @Test func aReferenceIntoAnExtentIsCaught() throws {
        let path = temporaryDatabasePath("extent-middle")
        defer { removeItem(path) }
        var rng = SplitMix64(seed: 13)
        let value = rng.bytes(40_000)
        let leaf: UInt64
        let head: UInt64
        do {
            let box = try ValueBox(path: path)
            try box.begin()
            try box.set(table, key: ikey(1), value: mbuf(value))
            try box.set(table, key: ikey(2), value: mbuf([2]))
            try box.commit()
            try box.checkpoint()
            leaf = try #require(box.state.tables[table.id]?.root)
            head = try #require(try overflowHeads(box)[1])
            try box.close()
        }
        try rewritePage(path, page: leaf) { p in
            for i in 0..<LeafPage(p).count where LeafValue.isOverflow(p, LeafPage(p).slot(i)) {
                store64(p, LeafValue.valueOffset(p, LeafPage(p).slot(i)), head + 3)
            }
        }
        let box = try ValueBox(path: path)
        _ = expectError("checksumMismatch") { _ = try box.get(table, key: ikey(1)) }
        _ = expectError("checksumMismatch") { _ = try box.withValue(table, key: ikey(1)) { _ in } }
        #expect(try box.get(table, key: ikey(2))?.makeArray() == [2])
        #expect(try box.check().problems.isEmpty == false)
        try box.close()
    }
}
