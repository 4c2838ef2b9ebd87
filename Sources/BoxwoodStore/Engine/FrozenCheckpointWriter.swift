/// What a background checkpoint writes: the committed state frozen between two transactions (see
/// `BackgroundCheckpoint`). The page and blob arrays are copies of the pager's; the memory they point at is frozen
/// (`Pager.frozenBefore`): nothing changes or frees it until the checkpoint is installed.
struct FrozenCheckpointInput {
    /// The tables, sorted by id.
    var tables: [(id: Int32, table: TableState)]
    /// The last commit the frozen state holds (the new meta's `lastSequence`).
    var version: UInt64
    var masterClientId: Int64
    var pages: [UnsafeMutableRawPointer?]
    var blobs: [Pager.Blob?]
    /// The meta the frozen state is built on (the durable one).
    var durableMeta: MetaPage
    /// The first page past everything the frozen state uses: the durable meta's page count, or more when values
    /// written once appended extents past it (`Pager.pageCount`).
    var firstNewPage: UInt64
    /// The salt of the WAL as it is: the new meta keeps it, so the log stays valid with the commits made after the
    /// freeze (recovery skips the records up to `version`).
    var walSalt: UInt64
    /// Free pages of the durable meta that the checkpoint may write (largest first), or none when a reader pins an
    /// older snapshot (then everything goes past the end of the file).
    var reusable: [UInt64]
    /// The durable freelist (all of it stays free when nothing is reused).
    var durableFree: [UInt64]
    /// Pages of the durable state that the frozen state does not use: released before the freeze, the durable
    /// catalog and freelist pages.
    var alsoFree: [UInt64]
    /// Sync the data file (not in `.off`).
    var sync: Bool
}

/// What a background checkpoint wrote, for the install.
struct FrozenCheckpointOutcome {
    var meta: MetaPage
    /// Each frozen table's root as a disk reference.
    var roots: [Int32: PageRef]
    var catalogPages: [UInt64]
    /// The new durable freelist's entries and the pages holding it.
    var free: [UInt64]
    var freelistPages: [UInt64]
    /// Frozen dirty page index → the disk reference it was written as.
    var forward: FrozenPageForward
    /// Frozen blob index → its overflow chain's (or extent's) first disk reference and page numbers.
    var blobForward: [Int: (head: UInt64, pages: [UInt64])]
    /// Every page number written.
    var written: [UInt64]
}

/// Writes a frozen state to the data file on the checkpointer thread: steps 1–4 of the checkpoint order (see
/// `ValueBox+Checkpoint.swift`), except that it never changes the frozen pages. Each page is copied into a page of
/// its own, its references to frozen children and blobs replaced by the disk references they were written as, then
/// sealed and written. It touches no state of the value box or the pager: only the input, the file, and the
/// layout (whose cipher nothing else seals with while a background checkpoint runs).
final class FrozenCheckpointWriter: CheckpointPageSink {
    private let input: FrozenCheckpointInput
    private let file: StorageFile
    private let layout: DataFileLayout
    private let output: PageRunWriter
    private let allocator: PageAllocator
    private let generation: UInt64
    private let scratch = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
    private let extents = ExtentWriter()
    private var forward = FrozenPageForward(count: 0)
    private var blobForward: [Int: (head: UInt64, pages: [UInt64])] = [:]
    private var written: [UInt64] = []
    private let hasBlobs: Bool
    /// Set once the meta is about to be written: its pages are durable, so after a failure the meta is written
    /// again (see `ValueBox.pendingMeta`).
    private(set) var pendingMeta: MetaPage?

    /// What the writer reports as it goes (read by the commits it paces).
    let progress: CheckpointProgress
    /// The page number no page of this checkpoint reaches (`pageBound`; its writes are refused from there on,
    /// `PageRunWriter.checkBelowFence`): values written once while it runs go past it
    /// (`ValueBox.backgroundCheckpointReserve`).
    let fence: UInt64

    /// `nanosecondsPerByte`: what the previous background checkpoint took, for the progress estimate.
    init(input: FrozenCheckpointInput, file: StorageFile, layout: DataFileLayout, nanosecondsPerByte: Double?) {
        self.input = input
        self.file = file
        self.layout = layout
        output = PageRunWriter(file: file, layout: layout)
        progress = CheckpointProgress(expectedBytes: Self.expectedBytes(of: input, slotSize: layout.slotSize),
                                      nanosecondsPerByte: nanosecondsPerByte)
        output.onWrite = { [progress] bytes in progress.noteWritten(bytes) }
        fence = input.firstNewPage + Self.pageBound(of: input)
        allocator = PageAllocator(reusable: input.reusable, firstNewPage: input.firstNewPage)
        output.fence = fence
        generation = input.durableMeta.generation + 1
        hasBlobs = input.blobs.contains { $0 != nil }
    }

    deinit { scratch.deallocate() }

    func allocate() -> UInt64 {
        let number = allocator.allocate()
        written.append(number)
        return layout.reference(to: number, writtenBy: generation)
    }

    func write(_ page: UnsafeMutableRawPointer, as reference: UInt64) throws(BoxwoodError) {
        try output.write(page, as: reference)
    }

    /// Writes everything and the meta; returns what the install needs.
    func run() throws(BoxwoodError) -> FrozenCheckpointOutcome {
        forward = FrozenPageForward(count: input.pages.count)
        // 1a. Table trees.
        var roots: [Int32: PageRef] = [:]
        for (id, table) in input.tables { roots[id] = try flush(table.root) }

        // 1b. A new catalog tree, built bottom-up (table ids in ascending order are ascending catalog keys).
        let before = (reusable: allocator.remainingReusable, next: allocator.nextPage)
        let builder = TreeBuilder(output: output, allocator: allocator, generation: generation)
        let cell = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
        let entry = UnsafeMutableRawPointer.allocate(byteCount: 4 + Catalog.valueSize, alignment: 8)
        defer { cell.deallocate(); entry.deallocate() }
        for (id, table) in input.tables {
            var table = table
            table.root = roots[id] ?? table.root
            entry.storeBytes(of: Catalog.key(id), as: UInt32.self)
            Catalog.encode(table, into: entry + 4)
            let size = Self.inlineCell(into: cell, key: entry, keyLength: 4, value: entry + 4, valueLength: Catalog.valueSize)
            try builder.add(cell: cell, size: size, key: entry, keyLength: 4)
        }
        let catalogRoot = try builder.finish()
        // The pages the builder took: the smallest reusable ones (popped off the end), then new ones.
        var catalogPages = Array(before.reusable[allocator.remainingReusable.count...])
        catalogPages.append(contentsOf: before.next..<allocator.nextPage)
        written.append(contentsOf: catalogPages)

        // 1d. The new freelist.
        var free = (input.reusable.isEmpty ? input.durableFree : allocator.remainingReusable) + input.alsoFree
        let (freelistHead, freelistPages, freeCount) = try writeFreelist(&free)
        try output.flush()

        // 2. New pages durable before the meta points at them.
        if input.sync { try file.sync() }

        // 3-4. The meta, keeping the WAL's salt.
        let meta = MetaPage(generation: generation, pageCount: allocator.nextPage, catalogRoot: catalogRoot,
                            freelistHead: freelistHead, freeCount: UInt64(freeCount), lastSequence: input.version,
                            walSalt: input.walSalt, masterClientId: input.masterClientId)
        if let problem = meta.problem {
            throw .corrupted(file: file.path, page: meta.slot, reason: "refusing to write a meta page beyond the format's limits: \(problem)")
        }
        pendingMeta = meta
        meta.encode(into: cell)
        try layout.write(cell, as: meta.slot, to: file)
        if input.sync { try file.sync() }
        pendingMeta = nil
        return FrozenCheckpointOutcome(meta: meta, roots: roots, catalogPages: catalogPages, free: free, freelistPages: freelistPages,
                                       forward: forward, blobForward: blobForward, written: written)
    }

    /// At most how many pages the checkpoint of `input` writes, so at most how far past `firstNewPage` it appends:
    /// one page per frozen page (`flush` writes each reachable one once), each frozen value's extent or chain, the
    /// catalog (built bottom-up: at most a leaf per table and no more branches than leaves, plus a root), and the
    /// freelist (its entries are some of `durableFree` and `alsoFree`; `writeFreelist` takes a page per
    /// `freelistEntriesPerPage` of them, plus one).
    static func pageBound(of input: FrozenCheckpointInput) -> UInt64 {
        var pages = input.pages.reduce(0) { $1 == nil ? $0 : $0 + 1 }
        for case let blob? in input.blobs {
            pages += max(ExtentPage.pageCount(forStored: blob.count), (blob.count + PageLayout.overflowPayload - 1) / PageLayout.overflowPayload)
        }
        pages += 2 * input.tables.count + 2
        pages += (input.durableFree.count + input.alsoFree.count) / PageLayout.freelistEntriesPerPage + 2
        return UInt64(pages)
    }

    /// The bytes the frozen pages and values take on disk: one slot per page, and a value's overflow pages.
    private static func expectedBytes(of input: FrozenCheckpointInput, slotSize: Int) -> UInt64 {
        var slots = input.pages.reduce(0) { $1 == nil ? $0 : $0 + 1 }
        for case let blob? in input.blobs { slots += (blob.count + PageLayout.overflowPayload - 1) / PageLayout.overflowPayload }
        return UInt64(slots) * UInt64(slotSize)
    }

    /// Writes the frozen pages of a tree (children first) and returns its root's disk reference.
    private func flush(_ ref: PageRef) throws(BoxwoodError) -> PageRef {
        guard ref.isDirtyRef else { return ref }
        let index = ref.dirtyIndex
        guard index < input.pages.count, let p = input.pages[index] else {
            throw .corrupted(file: file.path, page: nil, reason: "a frozen tree references a missing in-memory page")
        }
        if PageType.raw(of: p) == PageType.branch.rawValue {
            let branch = BranchPage(p)
            var children: [(Int, UInt64)] = []
            for c in 0...branch.count {
                let child = branch.child(c)
                if child.isDirtyRef { children.append((c, try flush(child))) }
            }
            // `scratch` is free again: the children were written.
            scratch.copyMemory(from: p, byteCount: PageLayout.pageSize)
            for (c, disk) in children { BranchPage.setChild(scratch, c, disk) }
            BranchPage.clearUnusedSpace(scratch)
        } else {
            var overflows: [(Int, UInt64)] = []
            if hasBlobs {
                let leaf = LeafPage(p)
                for i in 0..<leaf.count {
                    let off = leaf.slot(i)
                    if let overflow = LeafValue.overflowReference(p, off), overflow.isDirtyRef {
                        overflows.append((LeafValue.valueOffset(p, off), try writeOverflow(overflow)))
                    }
                }
            }
            scratch.copyMemory(from: p, byteCount: PageLayout.pageSize)
            for (offset, disk) in overflows { store64(scratch, offset, disk) }
            LeafPage.clearUnusedSpace(scratch)
        }
        let reference = allocate()
        try output.write(scratch, as: reference)
        forward[index] = reference
        return reference
    }

    /// Writes a frozen blob as an extent (`ExtentPage.holds`) or a chain of overflow pages; returns the first page's
    /// disk reference.
    private func writeOverflow(_ ref: UInt64) throws(BoxwoodError) -> UInt64 {
        let index = ref.dirtyIndex
        guard index < input.blobs.count, let blob = input.blobs[index] else {
            throw .corrupted(file: file.path, page: nil, reason: "a frozen leaf references a missing in-memory value")
        }
        if ExtentPage.holds(blob.count, layout: layout) {
            // Its pages are not in `written`: the install verifies the head and no other (`Pager.installFrozen`).
            let pages = ExtentPage.pageCount(forStored: blob.count)
            let head = allocator.allocateRun(pages)
            try output.writeExtent(blob.memory, count: blob.count, head: head, large: extents)
            blobForward[index] = (head, Array(head..<(head + UInt64(pages))))
            return head   // a plain file's disk reference is the page number
        }
        let numbers = try OverflowPage.writeChain(blob.memory, count: blob.count, allocate: allocate) { (page, number) throws(BoxwoodError) in
            try write(page, as: number)
        }
        blobForward[index] = (numbers[0], numbers.map(\.diskPageNumber))
        return numbers[0]
    }

    /// A leaf cell holding `value` inline and uncompressed (the catalog's 32-byte values always fit): the layout
    /// `LeafValue.makeCell` writes for such a value, without a pager.
    static func inlineCell(into buffer: UnsafeMutableRawPointer, key: UnsafeRawPointer, keyLength: Int,
                           value: UnsafeRawPointer, valueLength: Int) -> Int {
        store16(buffer, 0, keyLength)
        (buffer + LeafPage.cellHeader).copyMemory(from: key, byteCount: keyLength)
        buffer.storeBytes(of: ValueCodec.raw.rawValue << LeafValue.codecShift, toByteOffset: 2, as: UInt8.self)
        store32(buffer, 3, UInt32(valueLength))
        (buffer + LeafPage.cellHeader + keyLength).copyMemory(from: value, byteCount: valueLength)
        return LeafPage.cellHeader + keyLength + valueLength
    }
}
