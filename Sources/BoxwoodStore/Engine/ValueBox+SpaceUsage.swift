/// Where the pages of the data file go: the result of ``ValueBox/spaceUsage()``.
///
/// Every page below ``pagesTotal`` is counted once: the two meta pages, the tables' leaf and branch pages, their
/// overflow pages, the catalog and freelist pages, free pages (on the durable freelist, or released by commits
/// since the last checkpoint and free after the next), and ``pagesUnaccounted`` for anything else (0 in a sound
/// file that was checkpointed by this value box; uncheckpointed commits make tree pages that have no number yet,
/// so their old copies show as released).
public struct SpaceUsage: Sendable, Equatable {
    /// Pages of the data file the newest meta accounts for (both meta pages included).
    public var pagesTotal: UInt64 = 0
    /// Leaf pages of every table (checkpointed and uncheckpointed ones alike).
    public var leafPages = 0
    /// Bytes the leaves' slots and live cells use, summed over every leaf (the fill is this over
    /// `leafPages * PageLayout.capacity`).
    public var leafBytesUsed = 0
    /// Branch pages of every table.
    public var branchPages = 0
    /// Bytes the branches' slots and live cells use.
    public var branchBytesUsed = 0
    /// Overflow pages (values too large for a leaf cell) of checkpointed values.
    public var overflowPages = 0
    /// Pages holding the durable catalog tree.
    public var catalogPages = 0
    /// Pages holding the durable freelist.
    public var freelistPages = 0
    /// Entries of the durable freelist: pages the next checkpoint may write over.
    public var freePages = 0
    /// Pages committed transactions stopped using since the last checkpoint (free after the next one).
    public var releasedPages = 0
    /// Free pages that form the tail of the file (a checkpoint can cut them off).
    public var freeTailPages = 0
    /// Pages below ``pagesTotal`` that none of the above accounts for.
    public var pagesUnaccounted: Int64 = 0
    /// Pairs of adjacent leaves under one parent whose cells would fit in one page together. A random-order load
    /// leaves few: sharing a full leaf with a sibling never makes one, an append past a leaf's last cell (a page of
    /// one cell beside a full one) or a removal can.
    public var mergeableLeafPairs = 0
    /// Bytes one page offers its slots and cells.
    public var pageCapacity: Int { PageLayout.capacity }

    /// Average fill of the leaves (0...1), 0 without leaves.
    public var leafFill: Double { leafPages == 0 ? 0 : Double(leafBytesUsed) / Double(leafPages * PageLayout.capacity) }
    /// Average fill of the branches (0...1), 0 without branches.
    public var branchFill: Double { branchPages == 0 ? 0 : Double(branchBytesUsed) / Double(branchPages * PageLayout.capacity) }

    /// One line per figure, for a report.
    public var lines: [String] {
        func percent(_ x: Double) -> String { "\(Int((x * 1000).rounded()) / 10).\(Int((x * 1000).rounded()) % 10) %" }
        return [
            "pages total \(pagesTotal)",
            "leaf pages \(leafPages) (fill \(percent(leafFill))), branch pages \(branchPages) (fill \(percent(branchFill))), overflow pages \(overflowPages)",
            "catalog pages \(catalogPages), freelist pages \(freelistPages)",
            "free pages \(freePages) (of which the free tail \(freeTailPages)), released (free after the next checkpoint) \(releasedPages), unaccounted \(pagesUnaccounted)",
            "adjacent leaves that would fit in one page: \(mergeableLeafPairs)",
        ]
    }
}

extension ValueBox {
    /// Counts where the data file's pages go (``SpaceUsage``): walks every table's tree in the current snapshot.
    /// A diagnostic: it reads every page of every tree.
    public func spaceUsage() throws(BoxwoodError) -> SpaceUsage {
        let pinned = try enterRead()
        defer { exitRead(pinned) }
        var usage = SpaceUsage()
        usage.pagesTotal = pager.pageCount
        var diskTreePages = 0
        for (_, table) in state.tables.sorted(by: { $0.key < $1.key }) {
            try BTree.visit(pager, root: table.root, page: { (ref, p, _) throws(BoxwoodError) in
                if !ref.isDirtyRef { diskTreePages += 1 }
                if PageType.raw(of: p) == PageType.leaf.rawValue {
                    usage.leafPages += 1
                    usage.leafBytesUsed += LeafPage(p).usedBytes
                    return
                }
                let branch = BranchPage(p)
                usage.branchPages += 1
                usage.branchBytesUsed += branch.usedBytes
                var previous: UnsafeRawPointer? = nil
                for c in 0...branch.count {
                    let child = try pager.page(branch.child(c))
                    guard PageType.raw(of: child) == PageType.leaf.rawValue else { break }
                    if let previous, LeafPage(previous).usedBytes + LeafPage(child).usedBytes <= PageLayout.capacity {
                        usage.mergeableLeafPairs += 1
                    }
                    previous = child
                }
            }, overflow: { (first) throws(BoxwoodError) in
                guard !first.isDirtyRef else { return }
                let head = try pager.diskPage(first)
                if PageType.raw(of: head) == PageType.extent.rawValue {
                    usage.overflowPages += ExtentPage.pageCount(forStored: ExtentPage.storedLength(head))
                    return
                }
                var page = first
                while page != 0 {
                    guard let overflow = OverflowPage(try pager.diskPage(page)) else {
                        throw .corrupted(file: pager.file.path, page: page.diskPageNumber, reason: "expected an overflow page")
                    }
                    usage.overflowPages += 1
                    page = overflow.next
                    if usage.overflowPages > Int(pager.pageCount) { throw .corrupted(file: pager.file.path, page: page.diskPageNumber, reason: "overflow chain loops") }
                }
            })
        }
        let freeSpace = pager.freeSpace
        usage.catalogPages = freeSpace.catalogPages.count
        usage.freelistPages = freeSpace.freelistPages.count
        usage.freePages = freeSpace.free.count
        usage.releasedPages = freeSpace.released.count
        var tail = pager.pageCount
        for page in freeSpace.free where page + 1 == tail { tail = page }   // `free` is largest first
        usage.freeTailPages = Int(pager.pageCount - tail)
        let accounted = 2 + diskTreePages + usage.overflowPages + usage.catalogPages + usage.freelistPages + usage.freePages + usage.releasedPages
        usage.pagesUnaccounted = Int64(pager.pageCount) - Int64(accounted)
        return usage
    }
}
