/// A position in a tree for ordered iteration. Holds raw page pointers, so it is valid only until the next
/// mutation, checkpoint or remap (callers compare `Pager.modificationCount` and re-seek).
///
/// Bounded on a forged or damaged tree, without allocating: every descent counts its levels (a cycle is
/// deeper than `BTree.maxDepth`); moving to the next (previous) leaf requires its first (last) key to be
/// beyond the last key seen, so a leaf reached twice (branch pages forming a DAG) is `.corrupted` at once
/// instead of being iterated again; and the leaves entered since the last seek are counted against the
/// pages that exist, which bounds walks over empty leaves too.
struct Cursor {
    private let pager: Pager
    private let root: PageRef
    /// Branch pages from the root down, with the child index taken in each.
    private var stack: [(BranchPage, Int)] = []
    private(set) var leaf: UnsafeRawPointer? = nil
    /// The reference of `leaf` (for error reports).
    private(set) var leafRef: PageRef = 0
    private(set) var index = 0
    /// Leaves entered by `nextLeaf`/`previousLeaf` since the last seek.
    private var leafSteps: UInt64 = 0

    init(pager: Pager, root: PageRef) {
        self.pager = pager
        self.root = root
        stack.reserveCapacity(8)
    }

    var isValid: Bool { leaf != nil }

    /// The current key. `key` and `cell` need a valid cursor (`leaf` set): every caller checks `isValid` first.
    @inline(__always) var key: (UnsafeRawPointer, Int) { LeafPage(leaf.unsafelyUnwrapped).key(index) }

    /// The current cell (page pointer and cell offset).
    @inline(__always) var cell: (UnsafeRawPointer, Int) { (leaf.unsafelyUnwrapped, LeafPage(leaf.unsafelyUnwrapped).slot(index)) }

    /// Prefetches the cells of the current leaf that a walk in this direction visits next.
    @inline(__always)
    func prefetchRemainingCells(ascending: Bool) {
        guard let p = leaf else { return }
        let page = LeafPage(p)
        if ascending { page.prefetchCells(index..<page.count) } else { page.prefetchCells(0..<(index + 1)) }
    }

    private mutating func descend(from ref: PageRef, first: Bool) throws(BoxwoodError) -> Bool {
        var ref = ref
        while true {
            if stack.count > BTree.maxDepth { throw BTree.corrupt(pager, ref, "tree deeper than \(BTree.maxDepth) levels") }
            let p = try pager.page(ref)
            let type = PageType.raw(of: p)
            if type == PageType.leaf.rawValue {
                let n = LeafPage(p).count
                if n == 0 { return false }
                leaf = p
                leafRef = ref
                index = first ? 0 : n - 1
                return true
            }
            guard type == PageType.branch.rawValue else { throw BTree.corrupt(pager, ref, "expected a tree page") }
            let branch = BranchPage(p)
            let c = first ? 0 : branch.count
            stack.append((branch, c))
            ref = branch.child(c)
        }
    }

    /// Positions on the smallest key.
    mutating func seekFirst() throws(BoxwoodError) {
        stack.removeAll(keepingCapacity: true)
        leaf = nil
        leafSteps = 0
        if root == 0 { return }
        if try !descend(from: root, first: true) { try nextLeaf() }
    }

    /// Positions on the largest key.
    mutating func seekLast() throws(BoxwoodError) {
        stack.removeAll(keepingCapacity: true)
        leaf = nil
        leafSteps = 0
        if root == 0 { return }
        if try !descend(from: root, first: false) { try previousLeaf() }
    }

    /// Positions on the first key >= `key`; returns true when it equals `key`.
    @discardableResult
    mutating func seek(atOrAfter key: UnsafeRawPointer, _ keyLength: Int) throws(BoxwoodError) -> Bool {
        stack.removeAll(keepingCapacity: true)
        leaf = nil
        leafSteps = 0
        if root == 0 { return false }
        var ref = root
        while true {
            if stack.count > BTree.maxDepth { throw BTree.corrupt(pager, ref, "tree deeper than \(BTree.maxDepth) levels") }
            let p = try pager.page(ref)
            let type = PageType.raw(of: p)
            if type == PageType.leaf.rawValue {
                let page = LeafPage(p)
                let (i, found) = page.lowerBound(key, keyLength)
                leaf = p
                leafRef = ref
                index = i
                if i >= page.count { try nextLeaf() }
                return found
            }
            guard type == PageType.branch.rawValue else { throw BTree.corrupt(pager, ref, "expected a tree page") }
            let branch = BranchPage(p)
            let c = branch.childIndex(key, keyLength)
            stack.append((branch, c))
            ref = branch.child(c)
        }
    }

    /// Positions on the last key < `key`.
    mutating func seek(before key: UnsafeRawPointer, _ keyLength: Int) throws(BoxwoodError) {
        try seek(atOrAfter: key, keyLength)
        if isValid { try previous() } else { try seekLast() }
    }

    /// Moves to the next key (invalid past the end).
    mutating func next() throws(BoxwoodError) {
        guard let p = leaf else { return }
        index += 1
        if index >= LeafPage(p).count { try nextLeaf() }
    }

    /// Moves to the previous key (invalid before the start).
    mutating func previous() throws(BoxwoodError) {
        guard leaf != nil else { return }
        index -= 1
        if index < 0 { try previousLeaf() }
    }

    private mutating func nextLeaf() throws(BoxwoodError) {
        let from = leaf
        leaf = nil
        while let (branch, c) = stack.popLast() {
            if c < branch.count {
                stack.append((branch, c + 1))
                try countLeafStep(branch.child(c + 1))
                if try descend(from: branch.child(c + 1), first: true) {
                    if let from { try checkOrder(from, leaf.unsafelyUnwrapped) }  // `descend` set `leaf`
                    return
                }
                leaf = nil
            }
        }
    }

    private mutating func previousLeaf() throws(BoxwoodError) {
        let from = leaf
        leaf = nil
        while let (branch, c) = stack.popLast() {
            if c > 0 {
                stack.append((branch, c - 1))
                try countLeafStep(branch.child(c - 1))
                if try descend(from: branch.child(c - 1), first: false) {
                    if let from { try checkOrder(leaf.unsafelyUnwrapped, from) }  // `descend` set `leaf`
                    return
                }
                leaf = nil
            }
        }
    }

    /// A walk from one seek enters each leaf once (plus one step back for `seek(before:)`), and a tree has
    /// fewer leaves than the file and memory have pages: more steps mean the branch pages reach some leaves
    /// more than once (a DAG of empty leaves, which `checkOrder` cannot see).
    @inline(__always)
    private mutating func countLeafStep(_ ref: PageRef) throws(BoxwoodError) {
        leafSteps &+= 1
        if leafSteps > pager.pageCount &+ UInt64(pager.liveDirtyPages) &+ 2 {
            throw BTree.corrupt(pager, ref, "a walk entered more leaves than the tree has pages (branch pages form a DAG)")
        }
    }

    /// Keys ascend strictly from leaf to leaf: the last key of `left` is below the first key of `right`
    /// (an empty `left` has nothing to compare). A leaf reached again through another branch fails this.
    @inline(__always)
    private func checkOrder(_ left: UnsafeRawPointer, _ right: UnsafeRawPointer) throws(BoxwoodError) {
        let (left, right) = (LeafPage(left), LeafPage(right))
        let n = left.count
        guard n > 0, right.count > 0 else { return }
        let (a, an) = left.key(n - 1)
        let (b, bn) = right.key(0)
        if compareKeys(a, an, b, bn) >= 0 {
            throw BTree.corrupt(pager, leafRef, "leaf keys out of order across leaves (a leaf reached twice, or misplaced keys)")
        }
    }
}
