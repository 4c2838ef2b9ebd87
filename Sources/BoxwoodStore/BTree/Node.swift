import BoxwoodLZ4
import CPrefetch

/// Accessors for branch and leaf pages (slotted pages). After the 32-byte header comes an array of `count`
/// little-endian UInt16 slots, each the offset of a cell, in key order; cell data grows down from the end of
/// the page. Deleted cells leave `fragmented` bytes that a compaction reclaims.
///
/// Leaf cell:   keyLength u16 | flags u8 | valueLength u32 | key | value
///   flags bit 0: the value lives in overflow pages and `value` is a 24-byte reference
///                (first page u64 | stored length u64 | raw length u64)
///   flags bits 1-2: codec (0 raw, 1 LZ4); an inline LZ4 value is raw length u32 | compressed bytes
/// Branch cell: keyLength u16 | child u64 | key   — the child holds keys >= key (and < the next cell's key);
///   the page's `link` field holds the leftmost child (keys < the first cell's key).
@usableFromInline
enum Node {
    static let leafCellHeader = 7
    static let branchCellHeader = 10
    static let overflowReferenceSize = 24
    static let flagOverflow: UInt8 = 1

    @inline(__always) static func type(_ p: UnsafeRawPointer) -> UInt8 { p.load(fromByteOffset: PageLayout.typeOffset, as: UInt8.self) }
    @inline(__always) static func count(_ p: UnsafeRawPointer) -> Int { load16(p, PageLayout.countOffset) }
    @inline(__always) static func cellStart(_ p: UnsafeRawPointer) -> Int { load16(p, PageLayout.cellStartOffset) }
    @inline(__always) static func fragmented(_ p: UnsafeRawPointer) -> Int { load16(p, PageLayout.fragmentedOffset) }
    @inline(__always) static func link(_ p: UnsafeRawPointer) -> UInt64 { load64(p, PageLayout.linkOffset) }
    @inline(__always) static func slot(_ p: UnsafeRawPointer, _ i: Int) -> Int { load16(p, PageLayout.headerSize + 2 * i) }

    // MARK: Leaf cells

    @inline(__always) static func leafKeyLength(_ p: UnsafeRawPointer, _ off: Int) -> Int { load16(p, off) }
    @inline(__always) static func leafFlags(_ p: UnsafeRawPointer, _ off: Int) -> UInt8 { p.load(fromByteOffset: off + 2, as: UInt8.self) }
    @inline(__always) static func leafValueLength(_ p: UnsafeRawPointer, _ off: Int) -> Int { Int(load32(p, off + 3)) }
    @inline(__always) static func leafCellSize(_ p: UnsafeRawPointer, _ off: Int) -> Int {
        leafCellHeader + leafKeyLength(p, off) + leafValueLength(p, off)
    }

    // MARK: Branch cells

    @inline(__always) static func branchKeyLength(_ p: UnsafeRawPointer, _ off: Int) -> Int { load16(p, off) }
    @inline(__always) static func branchChildAt(_ p: UnsafeRawPointer, _ off: Int) -> UInt64 { load64(p, off + 2) }
    @inline(__always) static func branchCellSize(_ p: UnsafeRawPointer, _ off: Int) -> Int { branchCellHeader + branchKeyLength(p, off) }

    /// Child `c` of a branch: 0 is the leftmost child, `c > 0` is the child of cell `c - 1`.
    @inline(__always) static func child(_ p: UnsafeRawPointer, _ c: Int) -> UInt64 {
        c == 0 ? link(p) : branchChildAt(p, slot(p, c - 1))
    }

    @inline(__always) static func setChild(_ p: UnsafeMutableRawPointer, _ c: Int, _ ref: UInt64) {
        if c == 0 { store64(p, PageLayout.linkOffset, ref) } else { store64(p, slot(p, c - 1) + 2, ref) }
    }

    @inline(__always) static func cellSize(_ p: UnsafeRawPointer, _ off: Int, leaf: Bool) -> Int {
        leaf ? leafCellSize(p, off) : branchCellSize(p, off)
    }

    /// Key bytes of cell `i`.
    @inline(__always) static func key(_ p: UnsafeRawPointer, _ i: Int, leaf: Bool) -> (UnsafeRawPointer, Int) {
        let off = slot(p, i)
        return leaf ? (p + off + leafCellHeader, leafKeyLength(p, off)) : (p + off + branchCellHeader, branchKeyLength(p, off))
    }

    /// Hints the CPU to load the cells `range` of a leaf (their first two cache lines). A walk calls this
    /// when it enters a leaf: cells sit in insertion order, not key order, so each would otherwise be a
    /// separate cache miss taken one after the other; hinted, the misses overlap.
    @inline(__always)
    static func prefetchCells(_ p: UnsafeRawPointer, _ range: Range<Int>) {
        for i in range {
            let off = slot(p, i)
            boxwood_prefetch(p + off)
            if off + 64 < PageLayout.pageSize { boxwood_prefetch(p + off + 64) }
        }
    }

    // MARK: Searching

    /// First cell index whose key is >= the target, and whether it is equal.
    @inline(__always)
    static func lowerBound(_ p: UnsafeRawPointer, leaf: Bool, _ key: UnsafeRawPointer, _ keyLength: Int) -> (Int, Bool) {
        var low = 0
        var high = count(p)
        let header = leaf ? leafCellHeader : branchCellHeader
        while low < high {
            let mid = (low &+ high) >> 1
            let off = slot(p, mid)
            let c = compareKeys(p + off + header, load16(p, off), key, keyLength)
            if c < 0 { low = mid + 1 } else if c > 0 { high = mid } else { return (mid, true) }
        }
        return (low, false)
    }

    /// The child of a branch to descend into for `key`: the number of cells whose key is <= the target.
    @inline(__always)
    static func childIndex(_ p: UnsafeRawPointer, _ key: UnsafeRawPointer, _ keyLength: Int) -> Int {
        let (i, found) = lowerBound(p, leaf: false, key, keyLength)
        return found ? i + 1 : i
    }

    // MARK: Space

    /// Bytes used by slots and live cells.
    static func usedBytes(_ p: UnsafeRawPointer) -> Int {
        PageLayout.capacity - (cellStart(p) - PageLayout.headerSize - 2 * count(p)) - fragmented(p)
    }

    // MARK: Building

    static func initialize(_ p: UnsafeMutableRawPointer, type: PageType) {
        p.initializeMemory(as: UInt8.self, repeating: 0, count: PageLayout.headerSize)
        p.storeBytes(of: type.rawValue, toByteOffset: PageLayout.typeOffset, as: UInt8.self)
        store16(p, PageLayout.cellStartOffset, PageLayout.pageSize)
    }

    /// Inserts a prepared cell as cell `i`; false when the page has no room even after compaction.
    static func insertCell(_ p: UnsafeMutableRawPointer, at i: Int, _ cell: UnsafeRawPointer, _ size: Int, leaf: Bool) -> Bool {
        let n = count(p)
        var start = cellStart(p)
        let free = start - PageLayout.headerSize - 2 * (n + 1)
        if free < size {
            if free + fragmented(p) < size { return false }
            compact(p, leaf: leaf)
            start = cellStart(p)
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

    /// Removes cell `i`.
    static func removeCell(_ p: UnsafeMutableRawPointer, at i: Int, leaf: Bool) {
        let n = count(p)
        let off = slot(p, i)
        let size = cellSize(p, off, leaf: leaf)
        if off == cellStart(p) {
            store16(p, PageLayout.cellStartOffset, off + size)
        } else {
            store16(p, PageLayout.fragmentedOffset, fragmented(p) + size)
        }
        let slots = p + PageLayout.headerSize
        if i < n - 1 { (slots + 2 * i).copyMemory(from: slots + 2 * (i + 1), byteCount: 2 * (n - 1 - i)) }
        store16(p, PageLayout.countOffset, n - 1)
        if n - 1 == 0 {
            store16(p, PageLayout.cellStartOffset, PageLayout.pageSize)
            store16(p, PageLayout.fragmentedOffset, 0)
        }
    }

    /// Rewrites the cells contiguously at the end of the page.
    static func compact(_ p: UnsafeMutableRawPointer, leaf: Bool) {
        withUnsafeTemporaryAllocation(byteCount: PageLayout.pageSize, alignment: 16) { buffer in
            let scratch = buffer.baseAddress!  // a non-empty allocation
            scratch.copyMemory(from: p, byteCount: PageLayout.pageSize)
            let n = count(p)
            var start = PageLayout.pageSize
            for i in 0..<n {
                let off = slot(scratch, i)
                let size = cellSize(scratch, off, leaf: leaf)
                start -= size
                (p + start).copyMemory(from: scratch + off, byteCount: size)
                store16(p, PageLayout.headerSize + 2 * i, start)
            }
            store16(p, PageLayout.cellStartOffset, start)
            store16(p, PageLayout.fragmentedOffset, 0)
        }
    }

    /// Replaces the leaf cell at offset `off` with `cell` when it is no larger, in place: the slot stays, and a
    /// shorter cell leaves its unused tail as fragmented bytes. Returns false (page unchanged) when it is larger.
    static func replaceLeafCellInPlace(_ p: UnsafeMutableRawPointer, at off: Int, _ cell: UnsafeRawPointer, _ size: Int) -> Bool {
        let old = leafCellSize(p, off)
        if size > old { return false }
        (p + off).copyMemory(from: cell, byteCount: size)
        if size < old { store16(p, PageLayout.fragmentedOffset, fragmented(p) + old - size) }
        return true
    }

    /// Makes every byte of the page that no live cell or slot uses zero: compacts away the bytes of removed
    /// cells and clears the gap between the slots and the cells. Pages reach the disk this way, so a removed
    /// key or value never survives in a page that is still in use, and no stale memory is written out.
    static func clearUnusedSpace(_ p: UnsafeMutableRawPointer, leaf: Bool) {
        if fragmented(p) > 0 { compact(p, leaf: leaf) }
        let slotsEnd = PageLayout.headerSize + 2 * count(p)
        let start = cellStart(p)
        if start > slotsEnd { (p + slotsEnd).initializeMemory(as: UInt8.self, repeating: 0, count: start - slotsEnd) }
    }

    // MARK: Validation of pages read from disk

    /// Structural sanity of a checksum-valid page, so that a crafted or buggy file can never make a lookup
    /// read outside the page, take a disk page number for an in-memory page, or overflow a length. Returns a
    /// reason when the page is malformed.
    ///
    /// `pageCount` is the page count of the file the page was read from; nil for a page the engine made in
    /// memory (whose children may be dirty references). For a page from disk this checks every number it
    /// holds that the engine later uses as a page number or a length: branch children and overflow/freelist
    /// links are page numbers of the file (`isPageNumber(below:)`: untagged, in 2..<pageCount), overflow and
    /// freelist counts fit their page, and each overflow reference of a leaf names a page of the file with a
    /// stored length the file can hold and a raw length its codec can produce, both below 2^32 (so `Int(...)`
    /// of either cannot trap, nor can a buffer size made of one). Pages are validated once, when first
    /// touched (`Pager.diskPage`), so readers rely on this without re-checking.
    static func validate(_ p: UnsafeRawPointer, pageCount: UInt64?) -> String? {
        guard let type = PageType(rawValue: self.type(p)) else { return "unknown page type \(self.type(p))" }
        switch type {
        case .meta:
            return "meta page inside the tree area"
        case .overflow:
            return OverflowPage.problem(p, pageCount: pageCount)
        case .freelist:
            return FreelistPage.problem(p, pageCount: pageCount)
        case .branch, .leaf:
            let leaf = type == .leaf
            let n = count(p)
            let start = cellStart(p)
            if PageLayout.headerSize + 2 * n > start || start > PageLayout.pageSize { return "slot array overlaps cells" }
            if !leaf, let pageCount, !link(p).isPageNumber(below: pageCount) {
                return "leftmost child \(link(p)) is not a page of the file (\(pageCount) pages)"
            }
            var live = 0
            for i in 0..<n {
                let off = slot(p, i)
                if off < start || off + (leaf ? leafCellHeader : branchCellHeader) > PageLayout.pageSize { return "cell \(i) offset \(off)" }
                let size = cellSize(p, off, leaf: leaf)
                if off + size > PageLayout.pageSize { return "cell \(i) overruns the page" }
                // Readers copy keys into buffers of maxKeySize bytes: a longer key on disk is damage, not data.
                let keyLength = leaf ? leafKeyLength(p, off) : branchKeyLength(p, off)
                if keyLength > ValueBox.maxKeySize { return "cell \(i) key of \(keyLength) bytes (limit \(ValueBox.maxKeySize))" }
                if leaf && leafFlags(p, off) & flagOverflow != 0 {
                    if leafValueLength(p, off) != overflowReferenceSize { return "cell \(i) overflow reference size" }
                    if let pageCount, let problem = overflowReferenceProblem(p, off + leafCellHeader + keyLength,
                                                                             codec: LeafValue.codec(p, off), pageCount: pageCount) {
                        return "cell \(i) \(problem)"
                    }
                }
                if !leaf, let pageCount, !branchChildAt(p, off).isPageNumber(below: pageCount) {
                    return "cell \(i) child \(branchChildAt(p, off)) is not a page of the file (\(pageCount) pages)"
                }
                live += size
            }
            if live + fragmented(p) > PageLayout.pageSize - start { return "cell bytes exceed the cell area" }
            return nil
        }
    }

    /// The 24-byte overflow reference at `v` (first page, stored length, raw length) of a leaf read from a
    /// file of `pageCount` pages: the first page is a page of the file, the stored bytes fit in the file's
    /// pages, no length exceeds `LeafValue.maxValueLength`, and the raw length is what the codec can make of
    /// the stored bytes (raw: the same; LZ4: at most 255 times as many, and at most what LZ4 compresses).
    static func overflowReferenceProblem(_ p: UnsafeRawPointer, _ v: Int, codec: UInt8, pageCount: UInt64) -> String? {
        let first = load64(p, v)
        let stored = load64(p, v + 8)
        let raw = load64(p, v + 16)
        if !first.isPageNumber(below: pageCount) { return "overflow page \(first) is not a page of the file (\(pageCount) pages)" }
        // pageCount <= 2^40, so the product is below 2^52.
        if stored > LeafValue.maxValueLength || stored > (pageCount - 2) * UInt64(PageLayout.overflowPayload) {
            return "overflow value of \(stored) stored bytes, more than the file (\(pageCount) pages) or the format holds"
        }
        if raw > LeafValue.maxValueLength { return "overflow value of \(raw) bytes, beyond the format's limit" }
        switch ValueCodec(rawValue: codec) {
        case .raw?:
            if raw != stored { return "raw overflow value of \(raw) bytes stored in \(stored)" }
        case .lz4?:
            if raw > UInt64(LZ4Block.maxInputSize) || raw > stored * 255 {
                return "LZ4 overflow value of \(raw) bytes cannot come from \(stored) stored bytes"
            }
        case nil:
            return "unknown value codec \(codec)"
        }
        return nil
    }
}
