/// Builds a B+tree bottom-up from leaf cells that arrive in key order, packing every page as full as it
/// goes (compaction). Pages get consecutive numbers from a `PageAllocator` and go straight to the file, named by
/// disk references with the write tag of `generation` (the new file's).
final class TreeBuilder {
    private let output: PageRunWriter
    private let allocator: PageAllocator
    private let generation: UInt64
    private let page = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
    /// First key of the leaf being filled (copied when its first cell arrives).
    private var leafFirstKey: [UInt8] = []
    /// One entry per finished page of the level being built: the smallest key below it, and its disk reference.
    private var leaves: [(key: [UInt8], page: UInt64)] = []

    init(output: PageRunWriter, allocator: PageAllocator, generation: UInt64) {
        self.output = output
        self.allocator = allocator
        self.generation = generation
        LeafPage.initialize(page)
    }

    deinit { page.deallocate() }

    /// Appends a leaf cell (its key must be larger than the previous one's).
    func add(cell: UnsafeRawPointer, size: Int, key: UnsafeRawPointer, keyLength: Int) throws(BoxwoodError) {
        let count = LeafPage(page).count
        if LeafPage.insertCell(page, at: count, cell, size) {
            if count == 0 { leafFirstKey = Array(UnsafeRawBufferPointer(start: key, count: keyLength)) }
            return
        }
        try finishLeaf()
        leafFirstKey = Array(UnsafeRawBufferPointer(start: key, count: keyLength))
        guard LeafPage.insertCell(page, at: 0, cell, size) else {
            throw .corrupted(file: output.file.path, page: nil, reason: "a \(size)-byte cell does not fit an empty page")
        }
    }

    private func finishLeaf() throws(BoxwoodError) {
        guard LeafPage(page).count > 0 else { return }
        LeafPage.clearUnusedSpace(page)
        let reference = output.layout.reference(to: allocator.allocate(), writtenBy: generation)
        try output.write(page, as: reference)
        leaves.append((leafFirstKey, reference))
        LeafPage.initialize(page)
    }

    /// Writes the last leaf and the branch levels above; returns the root's disk reference (0 for an empty tree).
    func finish() throws(BoxwoodError) -> UInt64 {
        try finishLeaf()
        var level = leaves
        leaves = []
        while level.count > 1 { level = try buildBranchLevel(level) }
        return level.first?.page ?? 0
    }

    /// Groups `children` into branch pages (each child after a page's first becomes a cell keyed by the
    /// smallest key below it) and returns the new level.
    private func buildBranchLevel(_ children: [(key: [UInt8], page: UInt64)]) throws(BoxwoodError) -> [(key: [UInt8], page: UInt64)] {
        // Plan the groups first so that no page ends up with a single child: the last group borrows one
        // child from a full predecessor (a full branch page holds at least three cells).
        var groups: [Range<Int>] = []
        var start = 0
        var used = 0
        for i in children.indices {
            if i == start { used = 0; continue }
            let size = BranchPage.cellHeader + children[i].key.count + 2
            if used + size > PageLayout.capacity {
                groups.append(start..<i)
                start = i
                used = 0
                continue
            }
            used += size
        }
        groups.append(start..<children.count)
        if groups.count > 1 && groups[groups.count - 1].count == 1 {
            let last = groups.removeLast()
            let previous = groups.removeLast()
            groups.append(previous.lowerBound..<(previous.upperBound - 1))
            groups.append((last.lowerBound - 1)..<last.upperBound)
        }
        var level: [(key: [UInt8], page: UInt64)] = []
        let cell = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
        defer { cell.deallocate() }
        for group in groups {
            BranchPage.initialize(page)
            store64(page, PageLayout.linkOffset, children[group.lowerBound].page)
            for i in group.dropFirst() {
                let size = BranchPage.makeCell(cell, key: children[i].key, child: children[i].page)
                guard BranchPage.appendCell(page, cell, size) else {
                    throw .corrupted(file: output.file.path, page: nil, reason: "branch cell does not fit while compacting")
                }
            }
            BranchPage.clearUnusedSpace(page)
            let reference = output.layout.reference(to: allocator.allocate(), writtenBy: generation)
            try output.write(page, as: reference)
            level.append((children[group.lowerBound].key, reference))
        }
        return level
    }
}

