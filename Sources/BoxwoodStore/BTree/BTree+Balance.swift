/// Fuller leaves on insertion (a B*-tree's rule, SQLite's `balance_nonroot` idea restricted to two siblings).
///
/// A plain split leaves two half-full pages, so a tree loaded in random order settles near ln 2 ≈ 69 % full. Here a
/// leaf that overflows in the middle (not by an append past its last cell, which keeps the split that leaves full
/// pages behind an ascending load) shares its cells with the sibling under the same parent that has more room:
///
/// - when the two pages and the new cell fit in two pages with an eighth of a page to spare, they are redistributed
///   evenly over the two (the sibling takes cells; no new page);
/// - otherwise both are (nearly) full, and their cells go evenly over three pages (each about two thirds full).
///
/// The parent's separator between the two is replaced (and, for three pages, one more is inserted); when the parent
/// lacks the room for that, nothing is changed and the caller splits as before (`split`), which may split the parent.
/// The pages written are the leaf (already the transaction's), the sibling (copied on write when it is not), and for
/// three pages one new page.
///
/// What it keeps: after a redistribution over two pages, the two hold more than a page together (they could not be
/// merged); after one over three, two neighbours among the three hold about 1.25 pages (more than a page unless cells
/// near the largest size fall badly at the cuts). Removals still merge an under-filled leaf with a sibling
/// (`rebalance`).
extension BTree {
    /// Bytes a sibling must have to spare, beyond what the redistribution needs, for it to take cells instead of a
    /// split into three.
    static let redistributionSlack = PageLayout.capacity / 8

    /// Inserts `cell` (`size` bytes) at `index` of the full leaf at `level` of `path` by sharing with a sibling (see
    /// the extension's comment). False, nothing changed, when the leaf has no sibling under its parent, or the
    /// parent cannot take the new separators without splitting.
    static func insertSharingWithSibling(_ pager: Pager, path: TreePath, level: Int, index: Int, cell: UnsafeRawPointer, size: Int) throws(BoxwoodError) -> Bool {
        guard level > 0 else { return false }
        let parent = pager.dirtyMemory(path.refs[level - 1])
        let parentPage = BranchPage(parent)
        let c = path.childIndexes[level - 1]
        let leafRef = path.refs[level]
        let leaf = pager.dirtyMemory(leafRef)

        // The sibling with more room.
        var siblingIndex = -1
        var siblingUsed = Int.max
        for candidate in [c - 1, c + 1] where candidate >= 0 && candidate <= parentPage.count {
            let page = try pager.page(parentPage.child(candidate))
            guard PageType.raw(of: page) == PageType.leaf.rawValue else { throw corrupt(pager, parentPage.child(candidate), "siblings of different kinds") }
            let used = LeafPage(page).usedBytes
            if used < siblingUsed { siblingUsed = used; siblingIndex = candidate }
        }
        guard siblingIndex >= 0 else { return false }
        let leftIndex = min(c, siblingIndex)
        let siblingRef = parentPage.child(siblingIndex)

        // The cells of both pages in key order, the new one in its place, read from copies.
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: 2 * PageLayout.pageSize, alignment: 16)
        defer { scratch.deallocate() }
        let leftCopy = scratch
        let rightCopy = scratch + PageLayout.pageSize
        let siblingMemory = try pager.page(siblingRef)
        leftCopy.copyMemory(from: siblingIndex < c ? siblingMemory : UnsafeRawPointer(leaf), byteCount: PageLayout.pageSize)
        rightCopy.copyMemory(from: siblingIndex < c ? UnsafeRawPointer(leaf) : siblingMemory, byteCount: PageLayout.pageSize)
        var cells: [(UnsafeRawPointer, Int)] = []
        cells.reserveCapacity(LeafPage(leftCopy).count + LeafPage(rightCopy).count + 1)
        for (copy, isLeaf) in [(leftCopy, siblingIndex > c), (rightCopy, siblingIndex < c)] {
            let page = LeafPage(copy)
            for i in 0..<page.count {
                if isLeaf && i == index { cells.append((cell, size)) }
                let off = page.slot(i)
                cells.append((UnsafeRawPointer(copy + off), LeafPage.cellSize(copy, off)))
            }
            if isLeaf && index == page.count { cells.append((cell, size)) }
        }
        let total = cells.reduce(0) { $0 + $1.1 + 2 }
        var pageCount = total <= 2 * PageLayout.capacity - redistributionSlack ? 2 : 3
        var evenly = evenCuts(cells, total: total, pages: pageCount)
        if evenly == nil && pageCount == 2 {
            // Large cells may not split evenly into two pages; three always take them (cells are at most a third).
            pageCount = 3
            evenly = evenCuts(cells, total: total, pages: pageCount)
        }
        guard let cuts = evenly else { return false }

        // The parent must take the new separators in place of the old one.
        var separators: [[UInt8]] = []
        for cut in cuts {
            let (lastKey, lastLength) = (cells[cut - 1].0 + LeafPage.cellHeader, load16(cells[cut - 1].0, 0))
            let (firstKey, firstLength) = (cells[cut].0 + LeafPage.cellHeader, load16(cells[cut].0, 0))
            separators.append(shortestSeparator(lastKey, lastLength, firstKey, firstLength))
        }
        let oldCellSize = BranchPage.cellSize(parent, parentPage.slot(leftIndex))
        let needed = separators.reduce(0) { $0 + BranchPage.cellHeader + $1.count + 2 } - oldCellSize - 2
        let parentFree = parentPage.cellStart - PageLayout.headerSize - 2 * parentPage.count + parentPage.fragmented
        guard needed <= parentFree else { return false }

        // Rewrite: the sibling becomes the transaction's, the pages take their cells, the parent its separators.
        let (newSiblingRef, sibling) = try pager.writable(siblingRef)
        var refs = siblingIndex < c ? [newSiblingRef, leafRef] : [leafRef, newSiblingRef]
        var pages = siblingIndex < c ? [sibling, leaf] : [leaf, sibling]
        if pageCount == 3 {
            let (middleRef, middle) = pager.allocateDirty()
            refs.insert(middleRef, at: 1)
            pages.insert(middle, at: 1)
        }
        let bounds = [0] + cuts + [cells.count]
        for (i, page) in pages.enumerated() {
            LeafPage.initialize(page)
            for j in bounds[i]..<bounds[i + 1] { _ = LeafPage.appendCell(page, cells[j].0, cells[j].1) }
        }
        BranchPage.setChild(parent, leftIndex, refs[0])
        BranchPage.removeCell(parent, at: leftIndex)
        let cellBuffer = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
        defer { cellBuffer.deallocate() }
        for (i, separator) in separators.enumerated() {
            let cellSize = BranchPage.makeCell(cellBuffer, key: separator, child: refs[i + 1])
            _ = BranchPage.insertCell(parent, at: leftIndex + i, cellBuffer, cellSize)   // room checked above
        }
        return true
    }

    /// Cut points (`pages - 1` ascending cell indexes, each the first cell of the next page) that spread `cells`
    /// (`total` bytes with their slots) evenly over `pages` pages, every page non-empty and within capacity; nil
    /// when there are none.
    static func evenCuts(_ cells: [(UnsafeRawPointer, Int)], total: Int, pages: Int) -> [Int]? {
        var cuts: [Int] = []
        var cumulative = 0
        var i = 0
        for k in 1..<pages {
            // The page ends before the first cell whose middle lies past this page's share of the bytes.
            let target = total * k / pages
            while i < cells.count && cumulative + (cells[i].1 + 2) / 2 <= target { cumulative += cells[i].1 + 2; i += 1 }
            // Every page non-empty: at least one cell past the previous cut, and one left for each later page.
            let cut = min(max(i, (cuts.last ?? 0) + 1), cells.count - (pages - k))
            while i < cut { cumulative += cells[i].1 + 2; i += 1 }
            while i > cut { i -= 1; cumulative -= cells[i].1 + 2 }
            cuts.append(cut)
        }
        let bounds = [0] + cuts + [cells.count]
        for k in 0..<pages {
            if bounds[k] >= bounds[k + 1] { return nil }
            if cells[bounds[k]..<bounds[k + 1]].reduce(0, { $0 + $1.1 + 2 }) > PageLayout.capacity { return nil }
        }
        return cuts
    }

    /// The shortest separator between two adjacent leaves: the shortest prefix of the right page's first key that is
    /// greater than the left page's last key.
    static func shortestSeparator(_ lastKey: UnsafeRawPointer, _ lastLength: Int, _ firstKey: UnsafeRawPointer, _ firstLength: Int) -> [UInt8] {
        var p = 0
        while p < lastLength && p < firstLength && lastKey.load(fromByteOffset: p, as: UInt8.self) == firstKey.load(fromByteOffset: p, as: UInt8.self) { p += 1 }
        return Array(UnsafeRawBufferPointer(start: firstKey, count: min(p + 1, firstLength)))
    }
}
