import Foundation
import Testing
@testable import BoxwoodStore

/// Forged files with correct checksums (issue 22: "hostile input never crashes, hangs or silently loses data").
/// Every number the engine reads from a file is checked before it is used: each case below trapped a release
/// build (SIGILL: an overflowing `+ 1` or `×`, an `Int(_:)` of a value ≥ 2^63, a disk page number with the top
/// bit taken for an in-memory page and indexing past an array) or walked a DAG of branch pages for ever, and
/// must now be a typed `BoxwoodError` naming the file and, where there is one, the page.
@Suite struct HostileFileTests {
    let tree = ValueBoxTable(id: 5, keyType: .binary)
    let big = ValueBoxTable(id: 6, keyType: .int64)

    private func key(_ i: UInt32) -> ValueBoxKey { uint32Key(i) }

    // MARK: A database to forge

    /// A checkpointed, closed database (see ``makeMultiLevelDatabase(_:tree:big:seed:settle:)``): `tree` more
    /// than one level deep with a non-empty freelist, `big` holding a 100 KB value in overflow pages and a small
    /// one. Its newest meta page is slot 1.
    private func makeDatabase() throws -> String {
        try makeMultiLevelDatabase("hostile", tree: tree, big: big, seed: 22) { box in
            // Settle: no free tail for the close to cut off (it would checkpoint), and the newest meta in slot 1
            // (odd generation).
            for round in 0..<12 where box.hasFreeTail || box.meta.slot != 1 {
                if !box.hasFreeTail {
                    try box.begin()
                    try box.set(tree, key: key(0), value: mbuf([UInt8(round)]))
                    try box.commit()
                }
                try box.checkpoint()
            }
            #expect(box.meta.slot == 1 && !box.hasFreeTail && box.meta.freelistHead != 0)
        }
    }

    /// Page numbers of the closed database at `path` (read-only: nothing is written).
    private struct Layout {
        var meta: MetaPage
        var treeRoot: UInt64 = 0
        /// The key of the root's first cell: its child holds the keys from it on.
        var rootSeparator: [UInt8] = []
        var firstLeaf: UInt64 = 0
        var bigLeaf: UInt64 = 0
        var overflowCell = 0
        var overflow: UInt64 = 0
        var catalog: UInt64 = 0
    }

    private func layout(_ path: String) throws -> Layout {
        let box = try ValueBox(path: path, options: ValueBoxOptions(readOnly: true))
        defer { try? box.close() }
        var l = Layout(meta: box.meta)
        l.treeRoot = box.state.tables[tree.id]!.root
        l.catalog = box.meta.catalogRoot
        var p = try box.pager.diskPage(l.treeRoot), ref = l.treeRoot
        #expect(PageType.raw(of: p) == PageType.branch.rawValue, "the tree should be more than one level deep")
        let (separator, length) = BranchPage(p).key(0)
        l.rootSeparator = Array(UnsafeRawBufferPointer(start: separator, count: length))
        while PageType.raw(of: p) == PageType.branch.rawValue { ref = BranchPage(p).child(0); p = try box.pager.diskPage(ref) }
        l.firstLeaf = ref
        l.bigLeaf = box.state.tables[big.id]!.root
        let leaf = try box.pager.diskPage(l.bigLeaf)
        #expect(PageType.raw(of: leaf) == PageType.leaf.rawValue)
        for i in 0..<LeafPage(leaf).count {
            if let o = LeafValue.overflowReference(leaf, LeafPage(leaf).slot(i)) { l.overflow = o; l.overflowCell = i }
        }
        #expect(l.overflow != 0 && l.catalog != 0)
        return l
    }

    /// Rewrites page `page` of `data` through `edit` and reseals its checksum (``rewritePage(_:page:_:)``); drops
    /// the shared header (volatile state, rebuilt from the files) so that the next open reads the forged files.
    private func rewrite(_ path: String, page: UInt64, _ edit: (UnsafeMutableRawPointer) -> Void) throws {
        try rewritePage(path, page: page, edit)
        removeItem(path + "/header")
    }

    /// Writes `meta` (checksum and all) into its slot, whatever its fields say.
    private func forgeMeta(_ path: String, _ meta: MetaPage) throws {
        var data = try readFile(path + "/data")
        data.withUnsafeMutableBytes { raw in meta.encode(into: raw.baseAddress! + Int(meta.slot) * PageLayout.pageSize) }
        try writeFile(path + "/data", data)
        removeItem(path + "/header")
    }

    /// The offset of the catalog cell's value for `table` in the catalog leaf at `p`.
    private func catalogValueOffset(_ p: UnsafeRawPointer, _ table: Int32) -> Int? {
        for i in 0..<LeafPage(p).count {
            let off = LeafPage(p).slot(i)
            let (k, n) = LeafPage(p).key(i)
            if n == 4 && Catalog.id(fromKey: k) == table { return LeafValue.valueOffset(p, off) }
        }
        return nil
    }

    /// The page a `.corrupted` or `.checksumMismatch` error names.
    private func page(of error: BoxwoodError?) -> UInt64? {
        switch error {
        case let .corrupted(_, page, _)?: return page
        case let .checksumMismatch(_, page, _)?: return page
        default: return nil
        }
    }

    // MARK: 1. Meta page fields beyond the format's limits

    enum MetaForgery: String, CaseIterable, Sendable {
        /// A checkpoint computed `generation + 1` (on close).
        case generationMax
        /// WAL replay computed `lastSequence + 1` (at open).
        case lastSequenceMax
        /// Open computed `pageCount × 4096` (2^64).
        case pageCount2To52
        case pageCountMax
        /// The catalog root taken for an in-memory page (index past the dirty-page array).
        case catalogRootTagged
        case catalogRootBeyondTheFile
        case freelistHeadTagged
        case freeCountHuge
    }

    @Test("a meta page with a field beyond the format's limits is refused at open, naming its slot", arguments: MetaForgery.allCases)
    func metaFieldBeyondLimits(_ forgery: MetaForgery) throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        var meta = try layout(path).meta
        #expect(meta.slot == 1)
        // Keep every page the older meta (slot 0) accounts for, as a crash before the newer checkpoint cut
        // the file's tail would: falling back to it then fails on the WAL, not on the file's length.
        var data = try readFile(path + "/data")
        data.append(contentsOf: [UInt8](repeating: 0, count: 64 * PageLayout.pageSize))
        try writeFile(path + "/data", data)
        switch forgery {
        case .generationMax: meta.generation = .max   // odd: stays in slot 1
        case .lastSequenceMax: meta.lastSequence = .max
        case .pageCount2To52: meta.pageCount = 1 << 52
        case .pageCountMax: meta.pageCount = .max
        case .catalogRootTagged: meta.catalogRoot = dirtyFlag | 3
        case .catalogRootBeyondTheFile: meta.catalogRoot = meta.pageCount
        case .freelistHeadTagged: meta.freelistHead = dirtyFlag | 3
        case .freeCountHuge: meta.freeCount = 1 << 63
        }
        #expect(meta.problem != nil)
        try forgeMeta(path, meta)
        // The older meta (slot 0) is intact, but the WAL was reset by the checkpoint that wrote slot 1: falling
        // back would lose that checkpoint, so the open fails and names slot 1.
        let error = expectError("checksumMismatch", "corrupted") {
            let box = try ValueBox(path: path)
            // Before the fix a forged generation opened, and the checkpoint of this commit trapped on close.
            try box.begin()
            try box.set(tree, key: key(7), value: mbuf([7]))
            try box.commit()
            try box.close()
        }
        #expect(page(of: error) == 1, "\(String(describing: error))")
    }

    @Test("a meta page beyond the limits is never written: a checkpoint at the generation limit is refused")
    func checkpointAtTheGenerationLimit() throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        var meta = try layout(path).meta
        meta.generation = MetaPage.generationLimit - 1   // the largest generation a meta may carry (odd)
        try forgeMeta(path, meta)
        let box = try ValueBox(path: path)
        #expect(box.meta.generation == MetaPage.generationLimit - 1)
        try box.begin()
        try box.set(tree, key: key(7), value: mbuf([7]))
        try box.commit()
        let error = expectError("corrupted") { try box.checkpoint() }
        #expect(page(of: error) == 0, "\(String(describing: error))")
        // The commit is in the WAL; the meta on disk is unchanged.
        try? box.close()
        var reopenedMeta: MetaPage? = nil
        let data = try readFile(path + "/data")
        data.withUnsafeBytes { raw in
            if case let .valid(m) = MetaPage.decode(raw.baseAddress! + PageLayout.pageSize, slot: 1) { reopenedMeta = m }
        }
        #expect(reopenedMeta?.generation == MetaPage.generationLimit - 1)
    }

    // MARK: 2. Page numbers with the in-memory tag bit, or beyond the file

    @Test("a table root with the top bit set is a malformed catalog entry at open")
    func taggedTableRoot() throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        let l = try layout(path)
        try rewrite(path, page: l.catalog) { p in
            let v = catalogValueOffset(p, tree.id)!
            store64(p, v, dirtyFlag | load64(p, v))
        }
        // Before: the open succeeded and the first read indexed past the dirty-page array.
        expectError("corrupted") {
            let box = try ValueBox(path: path)
            _ = try box.get(tree, key: key(0))
            try box.close()
        }
    }

    @Test("a branch child with the top bit set or beyond the file is corrupted, naming the branch", arguments: [dirtyFlag, dirtyFlag | 2, 1 << 40])
    func badBranchChild(child: UInt64) throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        let l = try layout(path)
        // The leftmost child, and the child of the first cell.
        for cell in [-1, 0] {
            let original = try readFile(path + "/data")
            let originalWAL = try readFile(path + "/wal")
            try rewrite(path, page: l.treeRoot) { p in
                if cell < 0 { store64(p, PageLayout.linkOffset, child) } else { store64(p, BranchPage(p).slot(cell) + 2, child) }
            }
            let box = try ValueBox(path: path)
            let error = expectError("corrupted") {
                _ = try box.get(tree, key: key(0))
                _ = try box.allEntries(tree)
            }
            #expect(page(of: error) == l.treeRoot, "\(String(describing: error))")
            expectError("corrupted") { _ = try box.count(tree, start: bkey([]), end: bkey([0xFF])) }
            let report = try box.check()
            #expect(report.problems.contains { $0.contains("page \(l.treeRoot)") && $0.contains("not a page of the file") }, "\(report.problems)")
            try box.close()
            try writeFile(path + "/data", original)
            try writeFile(path + "/wal", originalWAL)
            removeItem(path + "/header")
        }
    }

    @Test("an overflow reference with the top bit set is corrupted, naming the leaf")
    func taggedOverflowReference() throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        let l = try layout(path)
        try rewrite(path, page: l.bigLeaf) { p in
            store64(p, LeafValue.valueOffset(p, LeafPage(p).slot(l.overflowCell)), dirtyFlag)
        }
        let box = try ValueBox(path: path)
        // Before: the read took the reference for an in-memory blob and indexed past the blob array.
        let error = expectError("corrupted") { _ = try box.get(big, key: ikey(-1)) }
        #expect(page(of: error) == l.bigLeaf, "\(String(describing: error))")
        #expect(try box.check().problems.contains { $0.contains("page \(l.bigLeaf)") })
        try box.close()
    }

    // MARK: 3. Counts and lengths beyond their pages and the file

    @Test("a freelist page claiming 2^63 entries is refused at open, naming it")
    func freelistEntryCount() throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        let l = try layout(path)
        try rewrite(path, page: l.meta.freelistHead) { store64($0, PageLayout.auxOffset, 1 << 63) }
        // Before: page validation computed Int(aux) and trapped while the open loaded the freelist.
        let error = expectError("corrupted") { _ = try ValueBox(path: path) }
        #expect(page(of: error) == l.meta.freelistHead, "\(String(describing: error))")
    }

    @Test("an overflow page claiming 2^63 payload bytes is corrupted, naming it")
    func overflowPayloadLength() throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        let l = try layout(path)
        try rewrite(path, page: l.overflow) { store64($0, PageLayout.auxOffset, 1 << 63) }
        let box = try ValueBox(path: path)
        let error = expectError("corrupted") { _ = try box.get(big, key: ikey(-1)) }
        #expect(page(of: error) == l.overflow, "\(String(describing: error))")
        #expect(try box.check().problems.contains { $0.contains("page \(l.overflow)") })
        try box.close()
    }

    enum ReferenceForgery: String, CaseIterable, Sendable {
        case storedLength2To63, storedLengthBeyondTheFile, rawLength2To63, rawLengthNotTheStoredLength, lz4RawLengthImpossible
    }

    @Test("an overflow reference whose lengths cannot fit the file or its codec is corrupted, naming the leaf", arguments: ReferenceForgery.allCases)
    func overflowReferenceLengths(_ forgery: ReferenceForgery) throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        let l = try layout(path)
        try rewrite(path, page: l.bigLeaf) { p in
            let off = LeafPage(p).slot(l.overflowCell)
            let v = LeafValue.valueOffset(p, off)
            switch forgery {
            case .storedLength2To63: store64(p, v + 8, 1 << 63)
            case .storedLengthBeyondTheFile: store64(p, v + 8, 1 << 45); store64(p, v + 16, 1 << 45)
            case .rawLength2To63: store64(p, v + 16, 1 << 63)
            case .rawLengthNotTheStoredLength: store64(p, v + 16, load64(p, v + 16) + 1)
            case .lz4RawLengthImpossible:
                p.storeBytes(of: LeafPage.flagOverflow | (ValueCodec.lz4.rawValue << LeafValue.codecShift), toByteOffset: off + 2, as: UInt8.self)
                store64(p, v + 16, 1 << 40)
            }
        }
        let box = try ValueBox(path: path)
        // Before: Int(_:) of the length trapped (2^63), or a huge allocation failed as an I/O error.
        let error = expectError("corrupted") { _ = try box.get(big, key: ikey(-1)) }
        #expect(page(of: error) == l.bigLeaf, "\(String(describing: error))")
        expectError("corrupted") { try box.read(big, key: ikey(-1)) { _, _ in } }
        // The small value in the same leaf is refused too: the page as a whole is damaged.
        expectError("corrupted") { _ = try box.get(big, key: ikey(1)) }
        #expect(try box.check().problems.contains { $0.contains("page \(l.bigLeaf)") })
        // A write that needs the leaf fails and can be aborted.
        try box.begin()
        expectError("corrupted") { try box.remove(big, key: ikey(-1)) }
        box.abort()
        try box.close()
    }

    @Test("an inline LZ4 value shorter than its 4-byte length prefix is a malformed leaf")
    func lz4ValueWithoutLengthPrefix() throws {
        // Found by the page fuzzer (Fuzz/Corpus/page/crash-lz4-value-without-length-prefix): validation passed
        // the cell, and reading its raw length (`check`, `remove`) read past the cell, past the page's end when
        // the cell was last.
        for valueLength in 0..<4 {
            var page = [UInt8](repeating: 0, count: PageLayout.pageSize)
            try page.withUnsafeMutableBytes { raw in
                let p = raw.baseAddress!
                LeafPage.initialize(p)
                var cell = [UInt8](repeating: 9, count: LeafPage.cellHeader + 4 + valueLength)
                cell.withUnsafeMutableBytes { c in
                    store16(c.baseAddress!, 0, 4)
                    c[2] = 0
                    store32(c.baseAddress!, 3, UInt32(valueLength))
                }
                #expect(cell.withUnsafeBytes { LeafPage.appendCell(p, $0.baseAddress!, $0.count) })
                let off = LeafPage(p).slot(0)
                #expect(PageType.problem(p, pageCount: 100) == nil)
                p.storeBytes(of: ValueCodec.lz4.rawValue << LeafValue.codecShift, toByteOffset: off + 2, as: UInt8.self)
                let problem = try #require(PageType.problem(p, pageCount: 100))
                #expect(problem.contains("LZ4 value of \(valueLength) bytes"), "\(problem)")
                #expect(PageType.problem(p, pageCount: nil) != nil)
            }
        }
    }

    // MARK: 4. Ranges of partial reads and writes

    @Test("partial reads and writes at offsets near Int.max are out of bounds, not an overflow")
    func partialAccessNearIntMax() throws {
        try withTemporaryBox("hostile-range") { box, _ in
            try box.begin()
            try box.set(tree, key: key(1), value: mbuf([1, 2, 3, 4]))
            try box.commit()
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 8)
            defer { buffer.deallocate() }
            for (offset, count) in [(Int.max, 1), (Int.max - 1, 4), (2, Int.max), (Int.max, Int.max), (5, 0), (-1, 1), (1, -1)] {
                try box.begin()
                expectError("outOfBounds") {
                    try box.readWrite(tree, key: key(1)) { _, read, _ in read(buffer, offset, count) }
                }
                expectError("outOfBounds") {
                    try box.readWrite(tree, key: key(1)) { _, _, write in write(buffer, offset, count) }
                }
                try box.commit()
                expectError("outOfBounds") {
                    try box.read(tree, key: key(1)) { _, read in read(buffer, offset, count) }
                }
            }
            // In range still works, up to the end.
            try box.begin()
            try box.readWrite(tree, key: key(1)) { length, _, write in
                #expect(length == 4)
                [UInt8](repeating: 9, count: 2).withUnsafeBytes { write($0.baseAddress!, 2, 2) }
            }
            try box.commit()
            #expect(try box.bytes(tree, key(1)) == [1, 2, 9, 9])
        }
    }

    // MARK: 5. Branch pages forming a DAG

    /// Replaces `tree` with a DAG: `levels` branch pages appended to the file, each with 280 children that
    /// all name the next one, the last naming the first leaf of the old tree (emptied when `emptyLeaf`).
    /// A walk that follows every child visits the leaf 280^levels times. Returns the branch pages, root first.
    private func forgeDAG(_ path: String, levels: Int, emptyLeaf: Bool) throws -> [UInt64] {
        let l = try layout(path)
        var data = try readFile(path + "/data")
        let first = l.meta.pageCount
        // Pages past the page count (a tail a crash left) are ignored by open: the new pages replace them.
        data = Array(data.prefix(Int(first) * PageLayout.pageSize))
        let branches = (0..<UInt64(levels)).map { first + $0 }
        data.append(contentsOf: [UInt8](repeating: 0, count: levels * PageLayout.pageSize))
        var meta = l.meta
        meta.pageCount = first + UInt64(levels)
        data.withUnsafeMutableBytes { raw in
            let base = raw.baseAddress!
            for (level, number) in branches.enumerated() {
                let p = base + Int(number) * PageLayout.pageSize
                let child = level + 1 < levels ? branches[level + 1] : l.firstLeaf
                BranchPage.initialize(p)
                store64(p, PageLayout.linkOffset, child)
                let cell = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
                defer { cell.deallocate() }
                for i in 0..<279 {
                    let size = BranchPage.makeCell(cell, key: [UInt8((i + 1) >> 8), UInt8((i + 1) & 0xFF)], child: child)
                    let inserted = BranchPage.insertCell(p, at: i, cell, size)
                    precondition(inserted, "279 cells fit one branch page")
                }
                BranchPage.clearUnusedSpace(p)
                sealPage(p, pageNumber: number)
            }
            if emptyLeaf {
                let p = base + Int(l.firstLeaf) * PageLayout.pageSize
                LeafPage.initialize(p)
                LeafPage.clearUnusedSpace(p)
                sealPage(p, pageNumber: l.firstLeaf)
            }
            let catalog = base + Int(l.catalog) * PageLayout.pageSize
            store64(catalog, catalogValueOffset(catalog, tree.id)!, branches[0])
            sealPage(catalog, pageNumber: l.catalog)
            meta.encode(into: base + Int(meta.slot) * PageLayout.pageSize)
        }
        try writeFile(path + "/data", data)
        removeItem(path + "/header")
        return branches
    }

    @Test("check, iteration and whole-tree walks over a DAG of 4 levels x 280 children end with corruption", arguments: [false, true])
    func branchPagesFormingADAG(emptyLeaf: Bool) throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        let firstLeaf = try layout(path).firstLeaf
        let branches = try forgeDAG(path, levels: 4, emptyLeaf: emptyLeaf)
        let box = try ValueBox(path: path)
        // check reports the shared pages (each walked once) instead of walking 280^4 leaves.
        let report = try box.check()
        for page in branches.dropFirst() {
            #expect(report.problems.contains { $0.contains("page \(page) is used twice") }, "\(report.problems)")
        }
        // Iteration: a leaf reached twice (keys not ascending), or too many empty leaves.
        expectError("corrupted") { _ = try box.allEntries(tree) }
        expectError("corrupted") { _ = try box.rangeKeys(tree, bkey([0xFF]), bkey([])) }
        expectError("corrupted") { _ = try box.count(tree, start: bkey([]), end: bkey([0xFF])) }
        expectError("corrupted") { _ = try box.compact() }
        // Whole-tree walks (removing all entries or the table) refuse the page reached twice.
        try box.begin()
        let error = expectError("corrupted") { try box.removeAllFromTable(tree) }
        #expect(page(of: error).map { branches.contains($0) || $0 == firstLeaf } == true, "\(String(describing: error))")
        box.abort()
        try box.begin()
        expectError("corrupted") { try box.removeTable(tree) }
        box.abort()
        // The other table is untouched.
        #expect(try box.get(big, key: ikey(1))?.makeArray() == [1])
        try box.close()
    }

    @Test("a page reached twice by writes is refused, not released twice")
    func sharedPageIsNotReleasedTwice() throws {
        let path = try makeDatabase()
        defer { removeItem(path) }
        let l = try layout(path)
        // The root's first two children both name the first leaf (a sound tree references a page once).
        try rewrite(path, page: l.treeRoot) { p in store64(p, BranchPage(p).slot(0) + 2, l.firstLeaf) }
        let box = try ValueBox(path: path)
        try box.begin()
        // A removal copies the leaf through the leftmost reference, releasing the page; a write that reaches
        // it through the other reference would release it again. Before, it did: the page went into the
        // freelist twice, and two later checkpoints could write two different pages over it.
        try box.remove(tree, key: key(0))
        let error = expectError("corrupted") { try box.set(tree, key: bkey(l.rootSeparator), value: mbuf([1])) }
        #expect(page(of: error) == l.firstLeaf, "\(String(describing: error))")
        box.abort()
        try box.close()
    }
}
