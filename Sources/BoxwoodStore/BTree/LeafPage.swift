import BoxwoodLZ4

/// A leaf page of a tree: a `SlottedPage` whose cells hold the entries, in key order.
///
/// Leaf cell:   keyLength u16 | flags u8 | valueLength u32 | key | value
///   flags bit 0: the value lives in overflow pages and `value` is a 24-byte reference
///                (first page u64 | stored length u64 | raw length u64)
///   flags bits 1-2: codec (0 raw, 1 LZ4); an inline LZ4 value is raw length u32 | compressed bytes
///   (`LeafValue` makes and reads the values.)
///
/// A view of a page from disk is made after the pager verified it (`Pager.diskPage`: checksum, then `problem`),
/// so every cell, key and overflow reference it reads lies inside the page and holds numbers the engine can use.
/// The write paths are the static functions over `UnsafeMutableRawPointer` (here and in `SlottedPage`).
struct LeafPage: SlottedPage {
    let memory: UnsafeRawPointer

    @inline(__always) init(_ memory: UnsafeRawPointer) { self.memory = memory }

    @inline(__always) static var pageType: PageType { .leaf }
    @inline(__always) static var cellHeader: Int { 7 }
    /// Size of the overflow reference that stands for the value of an overflow cell.
    static let overflowReferenceSize = 24
    /// The flags bit of a cell whose value is in overflow pages.
    static let flagOverflow: UInt8 = 1

    // MARK: Cells (at offset `off` of the page at `p`)

    @inline(__always) static func keyLength(_ p: UnsafeRawPointer, _ off: Int) -> Int { load16(p, off) }
    @inline(__always) static func flags(_ p: UnsafeRawPointer, _ off: Int) -> UInt8 { p.load(fromByteOffset: off + 2, as: UInt8.self) }
    @inline(__always) static func valueLength(_ p: UnsafeRawPointer, _ off: Int) -> Int { Int(load32(p, off + 3)) }
    @inline(__always) static func cellSize(_ p: UnsafeRawPointer, _ off: Int) -> Int {
        cellHeader + keyLength(p, off) + valueLength(p, off)
    }

    // MARK: Writing

    /// Replaces the cell at offset `off` with `cell` when it is no larger, in place: the slot stays, and a
    /// shorter cell leaves its unused tail as fragmented bytes. Returns false (page unchanged) when it is larger.
    static func replaceCellInPlace(_ p: UnsafeMutableRawPointer, at off: Int, _ cell: UnsafeRawPointer, _ size: Int) -> Bool {
        let old = cellSize(p, off)
        if size > old { return false }
        (p + off).copyMemory(from: cell, byteCount: size)
        if size < old { store16(p, PageLayout.fragmentedOffset, LeafPage(p).fragmented + old - size) }
        return true
    }

    // MARK: Validation of pages read from disk

    /// Why the leaf page at `p`, read from a file of `pageCount` pages (nil: made in memory), is malformed; nil
    /// when it is sound (`PageType.problem` calls this for every leaf page the pager reads). Besides the slotted
    /// page's checks: an inline LZ4 value holds at least its 4-byte length prefix; an overflow cell's value is a
    /// 24-byte reference, and (from a file) a sound one (`overflowReferenceProblem`).
    ///
    /// The reference's first page is the head of the value's overflow chain or of its extent (`ExtentPage`): the
    /// page's type says which, and the reader checks it (`LeafValue.storedBytes`).
    static func problem(_ p: UnsafeRawPointer, pageCount: UInt64?) -> String? {
        if let problem = slotArrayProblem(p) { return problem }
        return cellsProblem(p) { i, off in
            guard flags(p, off) & flagOverflow != 0 else {
                // An inline LZ4 value starts with its raw length (u32), which `LeafValue.rawLength` reads.
                if LeafValue.codec(p, off) == ValueCodec.lz4.rawValue && valueLength(p, off) < 4 {
                    return "cell \(i) LZ4 value of \(valueLength(p, off)) bytes has no length prefix"
                }
                return nil
            }
            if valueLength(p, off) != overflowReferenceSize { return "cell \(i) overflow reference size" }
            if let pageCount, let problem = overflowReferenceProblem(p, off + cellHeader + keyLength(p, off),
                                                                     codec: LeafValue.codec(p, off), pageCount: pageCount) {
                return "cell \(i) \(problem)"
            }
            return nil
        }
    }

    /// The 24-byte overflow reference at `v` (first page, stored length, raw length) of a leaf read from a
    /// file of `pageCount` pages: the first page is a page of the file, the stored bytes fit in the file's
    /// pages, no length exceeds `LeafValue.maxValueLength`, and the raw length is what the codec can make of
    /// the stored bytes (raw: the same; LZ4: at most 255 times as many, and at most what LZ4 compresses).
    /// Below 2^32 both, `Int(...)` of either cannot trap, nor can a buffer size made of one.
    static func overflowReferenceProblem(_ p: UnsafeRawPointer, _ v: Int, codec: UInt8, pageCount: UInt64) -> String? {
        let first = load64(p, v)
        let stored = load64(p, v + 8)
        let raw = load64(p, v + 16)
        if !first.isPageNumber(below: pageCount) { return "overflow page \(first) is not a page of the file (\(pageCount) pages)" }
        // pageCount <= 2^40, so the product is below 2^52. An extent stores a whole page's bytes per page but the first.
        if stored > LeafValue.maxValueLength || stored > (pageCount - 2) * UInt64(PageLayout.pageSize) {
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
