/// Scratch space for one root-to-leaf descent, reused across operations to avoid allocations.
final class TreePath {
    /// Page references from the root (index 0) to the leaf.
    @exclusivity(unchecked) var refs: [PageRef] = []
    /// For each branch level, the child index taken (0 = leftmost).
    @exclusivity(unchecked) var childIndexes: [Int] = []

    init() {
        refs.reserveCapacity(16)
        childIndexes.reserveCapacity(16)
    }

    func reset() {
        refs.removeAll(keepingCapacity: true)
        childIndexes.removeAll(keepingCapacity: true)
    }
}

/// Copy-on-write B+tree algorithms over the pager. A tree is identified by its root reference (0 = empty).
/// Keys are compared with `compareKeys`; int64 tables store their keys sign-flipped so that this byte order is
/// numeric order.
enum BTree {
    /// Every walk from a root counts its levels and refuses a tree deeper than this: a cycle of branch pages
    /// in a forged or damaged file never reaches a leaf, so it ends here instead of looping. (A tree of
    /// 2^40 pages — the format's limit — is at most 40 levels deep even with two children per branch.)
    static let maxDepth = 48

    static func corrupt(_ pager: Pager, _ ref: PageRef, _ reason: String) -> BoxwoodError {
        .corrupted(file: pager.file.path, page: ref.isDirtyRef ? nil : ref.diskPageNumber, reason: reason)
    }

    // MARK: Lookup

    /// The leaf page and cell offset holding `key`, or nil.
    @inline(__always)
    static func find(_ pager: Pager, root: PageRef, _ key: UnsafeRawPointer, _ keyLength: Int) throws(BoxwoodError) -> (UnsafeRawPointer, Int)? {
        if root == 0 { return nil }
        var ref = root
        var depth = 0
        while true {
            let p = try pager.page(ref)
            let type = PageType.raw(of: p)
            if type == PageType.leaf.rawValue {
                let leaf = LeafPage(p)
                let (i, found) = leaf.lowerBound(key, keyLength)
                return found ? (p, leaf.slot(i)) : nil
            }
            guard type == PageType.branch.rawValue else { throw corrupt(pager, ref, "expected a tree page, found type \(type)") }
            let branch = BranchPage(p)
            ref = branch.child(branch.childIndex(key, keyLength))
            depth += 1
            if depth > maxDepth { throw corrupt(pager, ref, "tree deeper than \(maxDepth) levels (cycle?)") }
        }
    }

    /// Descends to the leaf for `key`, recording the path. Returns the cell index in the leaf and whether the
    /// key is present. The tree must not be empty.
    static func descend(_ pager: Pager, root: PageRef, _ key: UnsafeRawPointer, _ keyLength: Int, path: TreePath) throws(BoxwoodError) -> (Int, Bool) {
        path.reset()
        var ref = root
        while true {
            path.refs.append(ref)
            let p = try pager.page(ref)
            let type = PageType.raw(of: p)
            if type == PageType.leaf.rawValue {
                return LeafPage(p).lowerBound(key, keyLength)
            }
            guard type == PageType.branch.rawValue else { throw corrupt(pager, ref, "expected a tree page, found type \(type)") }
            let branch = BranchPage(p)
            let c = branch.childIndex(key, keyLength)
            path.childIndexes.append(c)
            ref = branch.child(c)
            if path.refs.count > maxDepth { throw corrupt(pager, ref, "tree deeper than \(maxDepth) levels (cycle?)") }
        }
    }

    /// Makes every page on the path writable for the current transaction, top-down, relinking each parent to
    /// its child's new copy and updating `root`.
    static func touchPath(_ pager: Pager, root: inout PageRef, path: TreePath) throws(BoxwoodError) {
        var parent: UnsafeMutableRawPointer? = nil
        for level in 0..<path.refs.count {
            let (ref, memory) = try pager.writable(path.refs[level])
            if ref != path.refs[level] {
                path.refs[level] = ref
                if let parent { BranchPage.setChild(parent, path.childIndexes[level - 1], ref) } else { root = ref }
            }
            parent = memory
        }
    }

    // MARK: Insertion

    /// Inserts a prepared leaf cell for `key` into the tree at `root` (making its first leaf when the tree is
    /// empty), copy-on-write along the path. When the key is present, `replacing` is shown the old cell (its
    /// leaf and the cell's offset) before the new cell takes its place. The engine's one insertion path: the
    /// writes of transactions and the catalog a checkpoint builds both use it.
    static func upsert(_ pager: Pager, root: inout PageRef, _ key: UnsafeRawPointer, _ keyLength: Int, cell: UnsafeRawPointer, size: Int,
                       path: TreePath, replacing: (UnsafeMutableRawPointer, Int) throws(BoxwoodError) -> Void) throws(BoxwoodError) {
        if root == 0 {
            let (ref, memory) = pager.allocateDirty()
            LeafPage.initialize(memory)
            _ = LeafPage.insertCell(memory, at: 0, cell, size)   // an empty page holds any cell
            root = ref
            return
        }
        let (index, found) = try descend(pager, root: root, key, keyLength, path: path)
        try touchPath(pager, root: &root, path: path)
        if found {
            let leaf = pager.dirtyMemory(path.refs[path.refs.count - 1])
            let off = LeafPage(leaf).slot(index)
            try replacing(leaf, off)
            // An overwrite that fits in the old cell (the common case: same-size values) rewrites it where it is,
            // instead of removing the cell and inserting it again.
            if LeafPage.replaceCellInPlace(leaf, at: off, cell, size) { return }
            LeafPage.removeCell(leaf, at: index)
        }
        try insertIntoLeaf(pager, root: &root, path: path, index: index, cell: cell, size: size)
    }

    /// Inserts a prepared leaf cell at index `index` of the (already touched) leaf at the end of `path`,
    /// splitting pages up to the root as needed.
    static func insertIntoLeaf(_ pager: Pager, root: inout PageRef, path: TreePath, index: Int, cell: UnsafeRawPointer, size: Int) throws(BoxwoodError) {
        var level = path.refs.count - 1
        let leafMemory = pager.dirtyMemory(path.refs[level])
        if LeafPage.insertCell(leafMemory, at: index, cell, size) { return }
        // An overflow in the middle shares with a sibling (BTree+Balance.swift); an append past the last cell
        // splits so that an ascending load leaves full pages behind.
        let n = LeafPage(leafMemory).count
        if !(index == n && n >= 2), try insertSharingWithSibling(pager, path: path, level: level, index: index, cell: cell, size: size) { return }
        var (separator, right) = split(LeafPage.self, pager, leafMemory, insertingAt: index, cell: cell, size: size)
        // Propagate the new right sibling into the parents.
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
        defer { scratch.deallocate() }
        while level > 0 {
            level -= 1
            let parent = pager.dirtyMemory(path.refs[level])
            let position = path.childIndexes[level]
            let cellSize = BranchPage.makeCell(scratch, key: separator, child: right)
            if BranchPage.insertCell(parent, at: position, scratch, cellSize) { return }
            (separator, right) = split(BranchPage.self, pager, parent, insertingAt: position, cell: scratch, size: cellSize)
        }
        // The root split: grow the tree by one level.
        let (newRoot, memory) = pager.allocateDirty()
        BranchPage.initialize(memory)
        store64(memory, PageLayout.linkOffset, path.refs[0])
        let cellSize = BranchPage.makeCell(scratch, key: separator, child: right)
        _ = BranchPage.insertCell(memory, at: 0, scratch, cellSize)
        root = newRoot
    }

    /// Splits a full page while inserting one more cell. The page keeps the left half; returns the separator
    /// key and the new right page.
    static func split<Page: SlottedPage>(_: Page.Type, _ pager: Pager, _ page: UnsafeMutableRawPointer, insertingAt index: Int,
                                         cell: UnsafeRawPointer, size: Int) -> ([UInt8], PageRef) {
        let leaf = Page.pageType == .leaf
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
        defer { scratch.deallocate() }
        scratch.copyMemory(from: page, byteCount: PageLayout.pageSize)
        let old = Page(scratch)
        let n = old.count
        var cells: [(UnsafeRawPointer, Int)] = []
        cells.reserveCapacity(n + 1)
        for i in 0..<n {
            if i == index { cells.append((cell, size)) }
            let off = old.slot(i)
            cells.append((UnsafeRawPointer(scratch + off), Page.cellSize(scratch, off)))
        }
        if index == n { cells.append((cell, size)) }

        // Choose the split point: the first s whose left part reaches half, or the one before it if the left
        // part would not fit (always one of the two fits because cells are at most a third of a page).
        let total = cells.reduce(0) { $0 + $1.1 + 2 }
        var s = 0
        if index == n && n >= 2 {
            // Appending past the last cell (ascending keys: message ids, timestamps, a sorted load): the page
            // keeps everything it holds and the new cell starts the right page, so sequential inserts leave
            // full pages behind instead of half-full ones.
            s = leaf ? n : n - 1
        } else {
            var left = 0
            while s < cells.count, left + cells[s].1 + 2 <= total / 2 { left += cells[s].1 + 2; s += 1 }
            if s == 0 { s = 1 }
        }
        let rightFits = { (s: Int) -> Bool in
            let l = cells[0..<s].reduce(0) { $0 + $1.1 + 2 }
            let r = total - l - (leaf ? 0 : cells[s].1 + 2)
            return l <= PageLayout.capacity && r <= PageLayout.capacity
        }
        if !rightFits(s) { s += 1 }
        if !leaf && s >= cells.count - 1 { s = cells.count - 2 }
        if leaf && s >= cells.count { s = cells.count - 1 }

        let link = BranchPage(scratch).link
        let (rightRef, right) = pager.allocateDirty()
        Page.initialize(page)
        Page.initialize(right)
        var separator: [UInt8]
        if leaf {
            for i in 0..<s { _ = Page.insertCell(page, at: i, cells[i].0, cells[i].1) }
            for i in s..<cells.count { _ = Page.insertCell(right, at: i - s, cells[i].0, cells[i].1) }
            // Shortest separator: the shortest prefix of the right page's first key that is greater than the
            // left page's last key.
            let (lastKey, lastLength) = LeafPage(page).key(s - 1)
            let (firstKey, firstLength) = LeafPage(right).key(0)
            var p = 0
            while p < lastLength && p < firstLength && lastKey.load(fromByteOffset: p, as: UInt8.self) == firstKey.load(fromByteOffset: p, as: UInt8.self) { p += 1 }
            let length = min(p + 1, firstLength)
            separator = Array(UnsafeRawBufferPointer(start: firstKey, count: length))
        } else {
            store64(page, PageLayout.linkOffset, link)
            for i in 0..<s { _ = Page.insertCell(page, at: i, cells[i].0, cells[i].1) }
            let middle = cells[s].0
            let middleKeyLength = load16(middle, 0)
            separator = Array(UnsafeRawBufferPointer(start: middle + BranchPage.cellHeader, count: middleKeyLength))
            store64(right, PageLayout.linkOffset, load64(middle, 2))
            for i in (s + 1)..<cells.count { _ = Page.insertCell(right, at: i - s - 1, cells[i].0, cells[i].1) }
        }
        return (separator, rightRef)
    }

    // MARK: Removal

    /// After removing a cell from the (touched) leaf at the end of `path`: drops empty leaves, merges
    /// under-filled pages with a sibling when both fit in one page, and collapses a root with a single child.
    static func rebalance(_ pager: Pager, root: inout PageRef, path: TreePath) throws(BoxwoodError) {
        var level = path.refs.count - 1
        var nodeIsEmpty = LeafPage(pager.dirtyMemory(path.refs[level])).count == 0
        while level > 0 {
            let nodeRef = path.refs[level]
            let leaf = PageType.raw(of: pager.dirtyMemory(nodeRef)) == PageType.leaf.rawValue
            let parent = pager.dirtyMemory(path.refs[level - 1])
            let c = path.childIndexes[level - 1]
            if nodeIsEmpty {
                // An empty page leaves its parent; a parent that had no other child becomes empty in turn.
                try pager.free(nodeRef)
                level -= 1
                if BranchPage(parent).count == 0 { continue }
                removeChild(parent, c)
                nodeIsEmpty = false
                continue
            }
            let merged = try leaf ? mergeWithSibling(LeafPage.self, pager, parent: parent, c, level: level, path: path)
                                  : mergeWithSibling(BranchPage.self, pager, parent: parent, c, level: level, path: path)
            if !merged { break }
            level -= 1
        }
        if level == 0 && nodeIsEmpty {
            try pager.free(root)
            root = 0
            return
        }
        // Collapse a root branch that is left with a single child.
        while root != 0 {
            let p = try pager.page(root)
            guard PageType.raw(of: p) == PageType.branch.rawValue, BranchPage(p).count == 0 else { break }
            let old = root
            root = BranchPage(p).link
            try pager.free(old)
        }
    }

    /// Merges the under-filled page `c` of `parent` (at `level` of `path`, a page of kind `Page`) with its left
    /// sibling (its right one when it is the leftmost child) when both fit in one page: the left page takes the
    /// right one's cells (for branches, after the separator between them, which takes the right page's leftmost
    /// child), and the right page is freed and leaves `parent`. False, nothing changed, when the page is full
    /// enough, it is its parent's only child, or the two do not fit in one page.
    private static func mergeWithSibling<Page: SlottedPage>(_: Page.Type, _ pager: Pager, parent: UnsafeMutableRawPointer, _ c: Int, level: Int,
                                                            path: TreePath) throws(BoxwoodError) -> Bool {
        let parentPage = BranchPage(parent)
        if Page(pager.dirtyMemory(path.refs[level])).usedBytes >= PageLayout.capacity / 4 || parentPage.count == 0 { return false }
        let (leftIndex, rightIndex) = c > 0 ? (c - 1, c) : (c, c + 1)
        let leftRef = parentPage.child(leftIndex)
        let rightRef = parentPage.child(rightIndex)
        let leftPage = try pager.page(leftRef)
        let rightPage = try pager.page(rightRef)
        guard PageType.raw(of: leftPage) == PageType.raw(of: rightPage) else { throw corrupt(pager, rightRef, "siblings of different kinds") }
        let branch = Page.pageType == .branch
        let separatorSize = branch ? BranchPage.cellSize(parent, parentPage.slot(rightIndex - 1)) + 2 : 0
        if Page(leftPage).usedBytes + Page(rightPage).usedBytes + separatorSize > PageLayout.capacity { return false }
        let (newLeft, left) = try pager.writable(leftRef)
        if newLeft != leftRef {
            BranchPage.setChild(parent, leftIndex, newLeft)
            if leftIndex == c { path.refs[level] = newLeft }
        }
        let right = Page(try pager.page(rightRef))
        if branch {
            let off = parentPage.slot(rightIndex - 1)
            let size = BranchPage.cellSize(parent, off)
            // The separator, with the right page's leftmost child, is copied before it goes (a cell is small: on
            // the stack; a removal that merges nothing allocates nothing).
            withUnsafeTemporaryAllocation(byteCount: size, alignment: 16) { buffer in
                let cell = buffer.baseAddress.unsafelyUnwrapped
                cell.copyMemory(from: parent + off, byteCount: size)
                store64(cell, 2, BranchPage(right.memory).link)
                _ = Page.appendCell(left, cell, size)
            }
        }
        for i in 0..<right.count {
            let off = right.slot(i)
            _ = Page.appendCell(left, right.memory + off, Page.cellSize(right.memory, off))
        }
        try pager.free(rightRef)
        removeChild(parent, rightIndex)
        return true
    }

    /// Removes child `c` (and its separator) from a branch.
    static func removeChild(_ parent: UnsafeMutableRawPointer, _ c: Int) {
        if c == 0 {
            store64(parent, PageLayout.linkOffset, BranchPage.childAt(parent, BranchPage(parent).slot(0)))
            BranchPage.removeCell(parent, at: 0)
        } else {
            BranchPage.removeCell(parent, at: c - 1)
        }
    }

    // MARK: Whole trees

    /// Visits every page of a tree (parents before children). `overflow` receives each overflow reference.
    /// A page reached twice (branch pages forming a DAG or a cycle in a forged or damaged file) is
    /// `.corrupted`: each page is visited once, so the walk is linear in the pages, never exponential.
    static func visit(_ pager: Pager, root: PageRef, page visitPage: (PageRef, UnsafeRawPointer, Int) throws(BoxwoodError) -> Void,
                      overflow: (UInt64) throws(BoxwoodError) -> Void) throws(BoxwoodError) {
        if root == 0 { return }
        var stack: [(PageRef, Int)] = [(root, 0)]
        var seen = PageSet()
        while let (ref, depth) = stack.popLast() {
            if depth > maxDepth { throw corrupt(pager, ref, "tree deeper than \(maxDepth) levels (cycle?)") }
            let p = try pager.page(ref)
            guard seen.insert(ref) else { throw corrupt(pager, ref, "page reached twice in one tree (branch pages form a DAG or a cycle)") }
            try visitPage(ref, p, depth)
            let type = PageType.raw(of: p)
            if type == PageType.branch.rawValue {
                let branch = BranchPage(p)
                for c in stride(from: branch.count, through: 0, by: -1) { stack.append((branch.child(c), depth + 1)) }
            } else if type == PageType.leaf.rawValue {
                let leaf = LeafPage(p)
                for i in 0..<leaf.count {
                    let off = leaf.slot(i)
                    if LeafPage.flags(p, off) & LeafPage.flagOverflow != 0 {
                        try overflow(load64(p, off + LeafPage.cellHeader + LeafPage.keyLength(p, off)))
                    }
                }
            } else {
                throw corrupt(pager, ref, "expected a tree page, found type \(type)")
            }
        }
    }

    /// Frees every page and overflow value of a tree.
    static func freeTree(_ pager: Pager, root: PageRef) throws(BoxwoodError) {
        var pages: [PageRef] = []
        var overflows: [UInt64] = []
        try visit(pager, root: root, page: { (ref, _, _) throws(BoxwoodError) in pages.append(ref) }, overflow: { (o) throws(BoxwoodError) in overflows.append(o) })
        for o in overflows { try pager.freeOverflow(o) }
        for p in pages { try pager.free(p) }
    }
}

/// A set of page references for walks over whole trees: a bitmap of the page numbers of disk references (each below
/// the page count, at most `MetaPage.pageCountLimit`; a page is in the set whatever its write tag) and a hash set
/// for the engine's dirty references.
struct PageSet {
    private var bits: [UInt64] = []
    private var dirty: Set<PageRef> = []

    /// Adds `ref`; false when it was there already.
    mutating func insert(_ ref: PageRef) -> Bool {
        if ref.isDirtyRef { return dirty.insert(ref).inserted }
        let page = ref.diskPageNumber
        let word = Int(page >> 6)
        let bit: UInt64 = 1 << (page & 63)
        if word >= bits.count { bits.append(contentsOf: repeatElement(0, count: word - bits.count + 1 + bits.count / 2)) }
        if bits[word] & bit != 0 { return false }
        bits[word] |= bit
        return true
    }
}
