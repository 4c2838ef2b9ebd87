import CPrefetch

/// The slotted-page mechanics that leaf and branch pages (`LeafPage`, `BranchPage`) share; each kind conforms
/// with its cell format (`cellHeader`, `cellSize`), and everything here is specialized for it (no existentials).
///
/// After the 32-byte header (`PageLayout`) comes an array of `count` little-endian UInt16 slots, each the offset
/// of a cell, in key order; cell data grows down from the end of the page to `cellStart`. Every cell begins with
/// its key length (u16), and its key starts `cellHeader` bytes in. Removed cells leave `fragmented` bytes below
/// the used area that a compaction reclaims.
///
/// Invariants kept here (and checked by `slotArrayProblem`/`cellsProblem` for pages read from disk):
/// `headerSize + 2 * count <= cellStart <= pageSize`; every slot points at a cell in `cellStart..<pageSize` that
/// ends inside the page; the live cells plus `fragmented` fill exactly `cellStart..<pageSize`.
protocol SlottedPage {
    /// The page's memory.
    var memory: UnsafeRawPointer { get }
    /// The page at `memory` as a page of this kind; the caller has checked its type.
    init(_ memory: UnsafeRawPointer)
    /// The page type of this kind.
    static var pageType: PageType { get }
    /// Bytes from the start of a cell to its key.
    static var cellHeader: Int { get }
    /// Size of the cell at offset `off` of the page at `p`.
    static func cellSize(_ p: UnsafeRawPointer, _ off: Int) -> Int
}

extension SlottedPage {
    // MARK: Reading

    /// The number of cells.
    @inline(__always) var count: Int { load16(memory, PageLayout.countOffset) }
    /// The lowest offset used by cell data.
    @inline(__always) var cellStart: Int { load16(memory, PageLayout.cellStartOffset) }
    /// Bytes of removed cells below the used area.
    @inline(__always) var fragmented: Int { load16(memory, PageLayout.fragmentedOffset) }
    /// The offset of cell `i`.
    @inline(__always) func slot(_ i: Int) -> Int { load16(memory, PageLayout.headerSize + 2 * i) }

    /// Key bytes of cell `i`.
    @inline(__always) func key(_ i: Int) -> (UnsafeRawPointer, Int) {
        let off = slot(i)
        return (memory + off + Self.cellHeader, load16(memory, off))
    }

    /// First cell index whose key is >= the target, and whether it is equal.
    @inline(__always)
    func lowerBound(_ key: UnsafeRawPointer, _ keyLength: Int) -> (Int, Bool) {
        let p = memory
        var low = 0
        var high = count
        while low < high {
            let mid = (low &+ high) >> 1
            let off = slot(mid)
            let c = compareKeys(p + off + Self.cellHeader, load16(p, off), key, keyLength)
            if c < 0 { low = mid + 1 } else if c > 0 { high = mid } else { return (mid, true) }
        }
        return (low, false)
    }

    /// Bytes used by slots and live cells.
    var usedBytes: Int { PageLayout.capacity - (cellStart - PageLayout.headerSize - 2 * count) - fragmented }

    /// Hints the CPU to load the cells `range` (their first two cache lines). A walk calls this when it enters a
    /// page: cells sit in insertion order, not key order, so each would otherwise be a separate cache miss taken
    /// one after the other; hinted, the misses overlap.
    @inline(__always)
    func prefetchCells(_ range: Range<Int>) {
        for i in range {
            let off = slot(i)
            boxwood_prefetch(memory + off)
            if off + 64 < PageLayout.pageSize { boxwood_prefetch(memory + off + 64) }
        }
    }

    // MARK: Writing

    /// Makes the header at `p` that of an empty page of this kind (the rest of the page is left as it is).
    static func initialize(_ p: UnsafeMutableRawPointer) {
        p.initializeMemory(as: UInt8.self, repeating: 0, count: PageLayout.headerSize)
        p.storeBytes(of: pageType.rawValue, toByteOffset: PageLayout.typeOffset, as: UInt8.self)
        store16(p, PageLayout.cellStartOffset, PageLayout.pageSize)
    }

    /// Inserts a prepared cell as cell `i`; false when the page has no room even after compaction.
    static func insertCell(_ p: UnsafeMutableRawPointer, at i: Int, _ cell: UnsafeRawPointer, _ size: Int) -> Bool {
        let page = Self(p)
        let n = page.count
        var start = page.cellStart
        let free = start - PageLayout.headerSize - 2 * (n + 1)
        if free < size {
            if free + page.fragmented < size { return false }
            compact(p)
            start = page.cellStart
        }
        start -= size
        (p + start).copyMemory(from: cell, byteCount: size)
        let slots = p + PageLayout.headerSize
        if i < n { (slots + 2 * (i + 1)).copyMemory(from: slots + 2 * i, byteCount: 2 * (n - i)) }
        store16(p, PageLayout.headerSize + 2 * i, start)
        store16(p, PageLayout.countOffset, n + 1)
        store16(p, PageLayout.cellStartOffset, start)
        return true
    }

    /// Appends a prepared cell after the last; false when the page has no room even after compaction.
    static func appendCell(_ p: UnsafeMutableRawPointer, _ cell: UnsafeRawPointer, _ size: Int) -> Bool {
        insertCell(p, at: Self(p).count, cell, size)
    }

    /// Removes cell `i`.
    static func removeCell(_ p: UnsafeMutableRawPointer, at i: Int) {
        let page = Self(p)
        let n = page.count
        let off = page.slot(i)
        let size = cellSize(p, off)
        if off == page.cellStart {
            store16(p, PageLayout.cellStartOffset, off + size)
        } else {
            store16(p, PageLayout.fragmentedOffset, page.fragmented + size)
        }
        let slots = p + PageLayout.headerSize
        if i < n - 1 { (slots + 2 * i).copyMemory(from: slots + 2 * (i + 1), byteCount: 2 * (n - 1 - i)) }
        store16(p, PageLayout.countOffset, n - 1)
        if n - 1 == 0 {
            store16(p, PageLayout.cellStartOffset, PageLayout.pageSize)
            store16(p, PageLayout.fragmentedOffset, 0)
        }
    }

    /// Rewrites the cells contiguously at the end of the page (`fragmented` becomes 0).
    static func compact(_ p: UnsafeMutableRawPointer) {
        withUnsafeTemporaryAllocation(byteCount: PageLayout.pageSize, alignment: 16) { buffer in
            let scratch = buffer.baseAddress!
            scratch.copyMemory(from: p, byteCount: PageLayout.pageSize)
            let old = Self(scratch)
            var start = PageLayout.pageSize
            for i in 0..<old.count {
                let off = old.slot(i)
                let size = cellSize(scratch, off)
                start -= size
                (p + start).copyMemory(from: scratch + off, byteCount: size)
                store16(p, PageLayout.headerSize + 2 * i, start)
            }
            store16(p, PageLayout.cellStartOffset, start)
            store16(p, PageLayout.fragmentedOffset, 0)
        }
    }

    /// Makes every byte of the page that no live cell or slot uses zero: compacts away the bytes of removed
    /// cells and clears the gap between the slots and the cells. Pages reach the disk this way, so a removed
    /// key or value never survives in a page that is still in use, and no stale memory is written out.
    static func clearUnusedSpace(_ p: UnsafeMutableRawPointer) {
        let page = Self(p)
        if page.fragmented > 0 { compact(p) }
        let slotsEnd = PageLayout.headerSize + 2 * page.count
        let start = page.cellStart
        if start > slotsEnd { (p + slotsEnd).initializeMemory(as: UInt8.self, repeating: 0, count: start - slotsEnd) }
    }

    // MARK: Validation of pages read from disk

    /// Why the slot array of the page at `p` is malformed (it overlaps the cells, or they run past the page), or nil.
    static func slotArrayProblem(_ p: UnsafeRawPointer) -> String? {
        let page = Self(p)
        let start = page.cellStart
        return PageLayout.headerSize + 2 * page.count > start || start > PageLayout.pageSize ? "slot array overlaps cells" : nil
    }

    /// Why the cells of the page at `p` (whose slot array is sound) are malformed, or nil: each lies inside the
    /// cell area, has a key of at most `ValueBox.maxKeySize` bytes and passes the kind's own `check` (given the
    /// cell's index and offset), and the cells with the fragmented bytes fit the cell area.
    static func cellsProblem(_ p: UnsafeRawPointer, check: (Int, Int) -> String?) -> String? {
        let page = Self(p)
        let start = page.cellStart
        var live = 0
        for i in 0..<page.count {
            let off = page.slot(i)
            if off < start || off + cellHeader > PageLayout.pageSize { return "cell \(i) offset \(off)" }
            let size = cellSize(p, off)
            if off + size > PageLayout.pageSize { return "cell \(i) overruns the page" }
            // Readers copy keys into buffers of maxKeySize bytes: a longer key on disk is damage, not data.
            let keyLength = load16(p, off)
            if keyLength > ValueBox.maxKeySize { return "cell \(i) key of \(keyLength) bytes (limit \(ValueBox.maxKeySize))" }
            if let problem = check(i, off) { return problem }
            live += size
        }
        if live + page.fragmented > PageLayout.pageSize - start { return "cell bytes exceed the cell area" }
        return nil
    }
}
