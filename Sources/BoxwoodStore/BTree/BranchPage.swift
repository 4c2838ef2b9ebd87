/// A branch page of a tree: a `SlottedPage` whose cells route a search to the children.
///
/// Branch cell: keyLength u16 | child u64 | key   — the child holds keys >= key (and < the next cell's key);
///   the page's `link` field holds the leftmost child (keys < the first cell's key). So a branch of `count`
///   cells has `count + 1` children, numbered 0 (the leftmost) to `count`.
///
/// A view of a page from disk is made after the pager verified it (`Pager.diskPage`: checksum, then `problem`),
/// so every cell and key it reads lies inside the page and every child is a page number of the file. The write
/// paths are the static functions over `UnsafeMutableRawPointer` (here and in `SlottedPage`).
struct BranchPage: SlottedPage {
    let memory: UnsafeRawPointer

    @inline(__always) init(_ memory: UnsafeRawPointer) { self.memory = memory }

    @inline(__always) static var pageType: PageType { .branch }
    @inline(__always) static var cellHeader: Int { 10 }

    // MARK: Cells (at offset `off` of the page at `p`)

    @inline(__always) static func keyLength(_ p: UnsafeRawPointer, _ off: Int) -> Int { load16(p, off) }
    @inline(__always) static func childAt(_ p: UnsafeRawPointer, _ off: Int) -> UInt64 { load64(p, off + 2) }
    @inline(__always) static func cellSize(_ p: UnsafeRawPointer, _ off: Int) -> Int { cellHeader + keyLength(p, off) }

    // MARK: Children

    /// The leftmost child.
    @inline(__always) var link: UInt64 { load64(memory, PageLayout.linkOffset) }

    /// Child `c`: 0 is the leftmost child, `c > 0` is the child of cell `c - 1`.
    @inline(__always) func child(_ c: Int) -> UInt64 {
        c == 0 ? link : Self.childAt(memory, slot(c - 1))
    }

    /// The child to descend into for `key`: the number of cells whose key is <= the target.
    @inline(__always)
    func childIndex(_ key: UnsafeRawPointer, _ keyLength: Int) -> Int {
        let (i, found) = lowerBound(key, keyLength)
        return found ? i + 1 : i
    }

    // MARK: Writing

    /// Sets child `c` (see `child`) of the branch at `p` to `ref`.
    @inline(__always) static func setChild(_ p: UnsafeMutableRawPointer, _ c: Int, _ ref: UInt64) {
        if c == 0 { store64(p, PageLayout.linkOffset, ref) } else { store64(p, BranchPage(p).slot(c - 1) + 2, ref) }
    }

    /// Writes a cell routing `key` to `child` into `buffer`; returns its size.
    static func makeCell(_ buffer: UnsafeMutableRawPointer, key: [UInt8], child: PageRef) -> Int {
        store16(buffer, 0, key.count)
        store64(buffer, 2, child)
        key.withUnsafeBytes { if let b = $0.baseAddress, $0.count > 0 { (buffer + cellHeader).copyMemory(from: b, byteCount: $0.count) } }
        return cellHeader + key.count
    }

    // MARK: Validation of pages read from disk

    /// Why the branch page at `p`, read from a file of `pageCount` pages (nil: made in memory, whose children may
    /// be dirty references), is malformed; nil when it is sound (`PageType.problem` calls this for every branch
    /// page the pager reads). Besides the slotted page's checks: (from a file) every child is a page of the file.
    static func problem(_ p: UnsafeRawPointer, pageCount: UInt64?) -> String? {
        if let problem = slotArrayProblem(p) { return problem }
        let link = BranchPage(p).link
        if let pageCount, !link.isPageNumber(below: pageCount) {
            return "leftmost child \(link) is not a page of the file (\(pageCount) pages)"
        }
        return cellsProblem(p) { i, off in
            guard let pageCount, !childAt(p, off).isPageNumber(below: pageCount) else { return nil }
            return "cell \(i) child \(childAt(p, off)) is not a page of the file (\(pageCount) pages)"
        }
    }
}
