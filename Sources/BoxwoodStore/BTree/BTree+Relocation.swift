extension BTree {
    /// Makes every checkpointed page of the tree at `root` whose page number is `boundary` or more writable in the
    /// current transaction (copy-on-write, relinking each parent and `root`), so that the next checkpoint writes
    /// them where its allocator puts them — the lowest free pages — and their old numbers join the freelist. Such a
    /// checkpoint leaves the file's tail free, for the one after it to cut off (`ValueBox.shrinkingCheckpoint`).
    /// The tree's contents do not change. Returns the number of pages moved (parents copied along the way not
    /// counted). Overflow pages stay where they are.
    ///
    /// Branch pages are all read; a leaf is read only when it moves (a branch's first child tells whether its
    /// children are leaves: every leaf of a tree is at the same depth).
    static func relocatePages(_ pager: Pager, root: inout PageRef, from boundary: UInt64) throws(BoxwoodError) -> Int {
        if root == 0 { return 0 }
        var moved = 0
        root = try relocate(pager, root, from: boundary, depth: 0, moved: &moved)
        return moved
    }

    private static func movesTo(_ ref: PageRef, _ boundary: UInt64) -> Bool {
        !ref.isDirtyRef && ref.diskPageNumber >= boundary
    }

    /// The page `ref` (moved when it is past the line) with its subtree's pages past the line moved; returns its
    /// reference in the current transaction.
    private static func relocate(_ pager: Pager, _ ref: PageRef, from boundary: UInt64, depth: Int, moved: inout Int) throws(BoxwoodError) -> PageRef {
        if depth > maxDepth { throw corrupt(pager, ref, "tree deeper than \(maxDepth) levels (cycle?)") }
        var current = ref
        if movesTo(ref, boundary) {
            current = try pager.writable(ref).0
            moved += 1
        }
        let p = try pager.page(current)
        let type = PageType.raw(of: p)
        if type == PageType.leaf.rawValue { return current }
        guard type == PageType.branch.rawValue else { throw corrupt(pager, ref, "expected a tree page, found type \(type)") }
        let count = BranchPage(p).count
        let childrenAreLeaves = PageType.raw(of: try pager.page(BranchPage(p).child(0))) == PageType.leaf.rawValue
        for c in 0...count {
            let child = BranchPage(try pager.page(current)).child(c)
            let newChild: PageRef
            if childrenAreLeaves {
                guard movesTo(child, boundary) else { continue }
                newChild = try pager.writable(child).0
                moved += 1
            } else {
                newChild = try relocate(pager, child, from: boundary, depth: depth + 1, moved: &moved)
                if newChild == child { continue }
            }
            // The parent is copied (when it is not the transaction's already) to point at the moved child.
            current = try pager.writable(current).0
            BranchPage.setChild(pager.dirtyMemory(current), c, newChild)
        }
        return current
    }

    /// The number of branch pages of the tree at `root` (leaves are not read).
    static func branchPageCount(_ pager: Pager, root: PageRef) throws(BoxwoodError) -> Int {
        if root == 0 { return 0 }
        var count = 0
        var stack: [(PageRef, Int)] = [(root, 0)]
        while let (ref, depth) = stack.popLast() {
            if depth > maxDepth { throw corrupt(pager, ref, "tree deeper than \(maxDepth) levels (cycle?)") }
            let p = try pager.page(ref)
            guard PageType.raw(of: p) == PageType.branch.rawValue else { continue }
            count += 1
            let branch = BranchPage(p)
            guard PageType.raw(of: try pager.page(branch.child(0))) == PageType.branch.rawValue else { continue }
            for c in 0...branch.count { stack.append((branch.child(c), depth + 1)) }
            if count > Int(pager.pageCount) + pager.liveDirtyPages { throw corrupt(pager, ref, "more branch pages than pages (cycle?)") }
        }
        return count
    }
}
