/// Checkpoint: write every dirty page copy-on-write to pages that the durable state does not use, sync,
/// flip the meta page, sync, then reset the WAL. The commit order, and why each step is safe if the
/// process or the power dies right after it:
///
/// 1. Write tree pages, overflow chains and extents, a new catalog tree and a new freelist, only into pages that are
///    free in the current durable meta or beyond its page count. (Crash: the old meta is untouched and the
///    WAL still holds every commit.)
/// 2. fsync the data file (not in `.off`). The new pages, and the file's new size, are durable before any
///    meta refers to them.
/// 3. Write the meta into the slot the current meta does not occupy, with generation + 1, the new roots,
///    the new page count, the last included TransactionStateVersion and a new WAL salt. (A torn meta fails
///    its checksum and open uses the other slot.)
/// 4. fsync the data file (not in `.off`).
/// 5. Reset the WAL with the new salt. (Crash before this: the old WAL's salt no longer matches the meta and
///    every record in it is already in the pages, so it is ignored and reset on open.)
///
/// Pages the old state used become reusable only after the next meta is durable; they join the freelist
/// that this checkpoint writes.
extension ValueBox {
    /// Writes all committed changes into the data file and empties the WAL. Runs automatically (WAL size,
    /// memory, close); call it to bound recovery time. Not allowed inside a transaction.
    ///
    /// Takes the writer lock for its duration (waiting up to ``ValueBoxOptions/lockTimeout``) unless this
    /// value box holds it already.
    public func checkpoint() throws(BoxwoodError) {
        try withFileMaintenanceLock { () throws(BoxwoodError) in try checkpointLocked(shrinking: false) }
    }

    /// A checkpoint that, when `shrinking` and the file holds enough free pages, also moves the pages past a line
    /// (`relocationBoundary`) into the lowest free pages and then checkpoints once more to cut the file at the line
    /// (`close` asks for this: see docs/architecture.md, "Space reclamation").
    func checkpoint(shrinking: Bool) throws(BoxwoodError) {
        try withFileMaintenanceLock { () throws(BoxwoodError) in try checkpointLocked(shrinking: shrinking) }
    }

    /// Runs `body` for a maintenance operation on the files (checkpoint, compaction): the value box must be
    /// usable, writable, and neither in a transaction nor in a read snapshot; the writer lock is taken (and the
    /// state caught up) unless this value box holds it already, and released afterwards.
    func withFileMaintenanceLock<T>(_ body: () throws(BoxwoodError) -> T) throws(BoxwoodError) -> T {
        if transaction == nil && !inExplicitRead { waitForBackgroundCheckpoint() }
        try checkUsable()
        if options.readOnly { throw .readOnly(path: path) }
        if transaction != nil || inExplicitRead { throw .transactionAlreadyActive }
        let locked = holdsWriterLock
        if !locked {
            try lockWriter()
            do { try catchUp() } catch { unlockWriter(); throw error }
        }
        defer { if !locked && failure == nil { unlockWriter() } }
        return try body()
    }

    private func checkpointLocked(shrinking: Bool) throws(BoxwoodError) {
        // Nothing to write, and the WAL empty (a background checkpoint leaves its records in the log, which an inline
        // checkpoint empties).
        let idle = pager.liveDirtyPages == 0 && pager.freeSpace.released.isEmpty && state.version == meta.lastSequence
            && state.masterClientId == meta.masterClientId && !state.secureDeletePending && !hasFreeTail
            && (wal?.size ?? 0) <= UInt64(WriteAheadLog.headerSize)
        // An idle value box shrinks nothing: a close that has nothing to write reads no page (a damaged file that
        // was only read still closes without an error).
        if idle { return }
        do {
            try writeCheckpoint()
            // Shrinking: once the dirty pages are written (their old copies are free now), move the pages past the
            // line into the free pages below it; their old numbers are then free in that checkpoint's meta and in
            // the next one, which cuts them off.
            // A free tail (pages free in the durable meta: the moved pages' old numbers, or pages the checkpoint above
            // freed) is cut by the next checkpoint; when the freelist or catalog sits at the end, by the one after.
            if shrinking {
                pagesMovedByLastShrink = 0
                if let boundary = try relocationBoundary() { pagesMovedByLastShrink = try writeCheckpoint(relocatingFrom: boundary) }
                for _ in 0..<2 where hasFreeTail { try writeCheckpoint() }
            }
        } catch {
            // Pages were released as they were written: the in-memory trees no longer match the durable
            // meta. The files are consistent (old meta + WAL, or the new meta once `pendingMeta` is
            // rewritten); the next call recovers from them.
            failure = error
            throw error
        }
    }

    /// Writes one checkpoint; with `boundary`, first moves every tree page at or past it (`BTree.relocatePages`)
    /// unless a reader pins an older snapshot. Returns the number of pages moved.
    @discardableResult
    private func writeCheckpoint(relocatingFrom boundary: UInt64? = nil) throws(BoxwoodError) -> Int {
        // Free pages of the durable state may still be read by a reader (in any process) whose snapshot is
        // an older generation: then this checkpoint appends instead of reusing them.
        let reuse = !(try header?.hasLiveReader(olderThan: meta.generation, ownSlot: readerSlot) ?? false)
        header?.writerIsChangingFiles = true
        let freeSpace = pager.freeSpace

        // 0. Moving the tail: the moved pages become dirty pages of this checkpoint, written into the lowest free
        // pages like any other; their old numbers are released (free in the new meta). Only with reuse: appending
        // would move nothing toward the start.
        var moved = 0
        if let boundary, reuse {
            for (id, var table) in state.tables.sorted(by: { $0.key < $1.key }) {
                moved += try BTree.relocatePages(pager, root: &table.root, from: boundary)
                state.tables[id] = table
            }
        }
        // New pages start past the page count, which covers the extents of values written once since the meta.
        let allocator = PageAllocator(reusable: reuse ? freeSpace.free : [], firstNewPage: pager.pageCount)
        valueBytesWrittenOnce = 0
        pager.releasedExtentPages = 0
        let writer = CheckpointWriter(pager: pager, file: dataFile, allocator: allocator, generation: meta.generation + 1)

        // 1a. Table trees.
        for (id, var table) in state.tables.sorted(by: { $0.key < $1.key }) {
            table.root = try writer.flush(table.root)
            state.tables[id] = table
        }

        // 1b. A new catalog tree (built in memory, then flushed like any tree).
        var catalogRoot: PageRef = 0
        let keyBuffer = UnsafeMutableRawPointer.allocate(byteCount: 4 + Catalog.valueSize, alignment: 8)
        defer { keyBuffer.deallocate() }
        let path = TreePath()
        for (id, table) in state.tables.sorted(by: { $0.key < $1.key }) {
            keyBuffer.storeBytes(of: Catalog.key(id), as: UInt32.self)
            Catalog.encode(table, into: keyBuffer + 4)
            let size = LeafValue.makeCell(pager, into: cellBuffer, key: keyBuffer, keyLength: 4, value: keyBuffer + 4,
                                          valueLength: Catalog.valueSize, compressionThreshold: Int.max)
            // Table ids are distinct: nothing is ever replaced.
            try BTree.upsert(pager, root: &catalogRoot, keyBuffer, 4, cell: cellBuffer, size: size, path: path) { (_, _) throws(BoxwoodError) in }
        }
        catalogRoot = try writer.flush(catalogRoot)
        pager.commitTransaction()
        pager.trimSparePages()

        // 1c. Give the free tail of the file back. Only pages free in the durable meta too, and only when no
        // reader pins an older snapshot (`reuse`): no snapshot that any value box can still read refers to
        // them. The file is truncated once the new meta is durable (step 4b).
        if reuse { allocator.dropFreeTail() }

        // 1d. The new freelist: what stays free of the old list, plus everything the old state used that
        // the new one does not (pages freed by commits, the old catalog, the old freelist pages).
        var free = freeSpace.nextFreelist(stillFree: reuse ? allocator.remainingReusable : freeSpace.free)
        let (freelistHead, freelistPages, freeCount) = try writer.writeFreelist(&free)
        try writer.finish()

        // 2. New pages durable before the meta points at them.
        let sync = options.durability != .off
        if sync {
            try dataFile.sync()
            dataFileHasUnsyncedValues = false
        }

        // 3-4. Flip the meta. `meta.generation < MetaPage.generationLimit` (checked when it was read or
        // written), so `+ 1` cannot overflow; `writeMeta` refuses a result beyond the limit.
        var newMeta = MetaPage(generation: meta.generation + 1, pageCount: allocator.nextPage, catalogRoot: catalogRoot,
                               freelistHead: freelistHead, freeCount: UInt64(freeCount), lastSequence: state.version,
                               walSalt: UInt64.random(in: 1...UInt64.max), masterClientId: state.masterClientId)
        newMeta.scrubPending = state.secureDeletePending
        pendingMeta = newMeta
        try writeMeta(newMeta, sync: sync)
        pendingMeta = nil

        // In-memory state now follows the new meta.
        meta = newMeta
        pager.pageCount = newMeta.pageCount
        try pager.ensureMapped(pages: newMeta.pageCount)
        freeSpace.install(free: free, freelistPages: freelistPages, catalogPages: try catalogTreePages(catalogRoot))
        pager.modificationCount &+= 1

        // 4b. Cut the file after the last page the new meta uses (pages past it are free in both metas).
        let end = pager.layout.fileSize(pageCount: newMeta.pageCount)
        if try dataFile.size() > end {
            try dataFile.truncate(to: end)
            if sync { try dataFile.sync() }
        }

        // 5. Reset the WAL, and tell the other value boxes.
        try wal!.reset(salt: newMeta.walSalt, sync: sync)  // a writable value box has its log (see `wal`)
        walCheckpointedEnd = 0
        publishState()

        // 6. Secure delete: zero the free pages, which include every page a secure remove left behind.
        if newMeta.scrubPending { try scrubFreePages() }
        return moved
    }

    /// The line past which a shrinking checkpoint moves pages (`FreeSpace.relocationBoundary`), or nil when that
    /// would not shorten the file by at least a sixteenth (and 64 pages): moving pages costs their writes.
    private func relocationBoundary() throws(BoxwoodError) -> UInt64? {
        // A reader of an older snapshot keeps every free page in place (see `writeCheckpoint`): nothing can move.
        if try header?.hasLiveReader(olderThan: meta.generation, ownSlot: readerSlot) ?? false { return nil }
        let freeSpace = pager.freeSpace
        let pageCount = meta.pageCount
        let minimumGain = max(64, pageCount / 16)
        let freeAfter = freeSpace.freeOrReleasedCount + freeSpace.catalogPages.count + freeSpace.freelistPages.count
        guard UInt64(freeAfter) >= minimumGain else { return nil }
        // The checkpoint's own pages: the dirty pages, the overflow chains of the blobs, the new freelist, the
        // catalog (a few tables per page).
        let blobPages = pager.liveBlobBytes / PageLayout.overflowPayload + pager.liveBlobCount
        let freelistPages = freeAfter / PageLayout.freelistEntriesPerPage + 1
        let catalogPages = state.tables.count / 16 + 2
        var branches = 0
        for (_, table) in state.tables { branches += try BTree.branchPageCount(pager, root: table.root) }
        return freeSpace.relocationBoundary(pageCount: pageCount, pagesToWrite: pager.liveDirtyPages + blobPages + freelistPages + catalogPages,
                                            pathCopies: branches, minimumGain: minimumGain)
    }

    /// True when checkpoints can shorten the file (see `FreeSpace.hasFreeTail`).
    var hasFreeTail: Bool { pager.freeSpace.hasFreeTail(pageCount: meta.pageCount) }

    /// Zeroes every free page and then writes a meta without the scrub-pending flag. Runs after a
    /// checkpoint's meta flip, so the pages are free in the durable state; it waits (the flag stays set, in
    /// memory and in the meta) while a reader in any process pins an older snapshot that may still read
    /// them. The WAL needs nothing: the checkpoint just truncated it.
    private func scrubFreePages() throws(BoxwoodError) {
        if try header?.hasLiveReader(olderThan: meta.generation, ownSlot: readerSlot) ?? false { return }
        header?.writerIsChangingFiles = true
        let runPages = 64
        let layout = pager.layout
        let zeros = UnsafeMutableRawPointer.allocate(byteCount: runPages * layout.slotSize, alignment: 4096)
        defer { zeros.deallocate() }
        zeros.initializeMemory(as: UInt8.self, repeating: 0, count: runPages * layout.slotSize)
        let pages = pager.freeSpace.free.sorted()
        var i = 0
        while i < pages.count {
            var n = 1
            while i + n < pages.count && n < runPages && pages[i + n] == pages[i] + UInt64(n) { n += 1 }
            try dataFile.write(zeros, count: n * layout.slotSize, offset: layout.offset(of: pages[i]))
            for page in pages[i..<(i + n)] { pager.clearVerified(page) }
            i += n
        }
        // The zeros are durable before a meta says the scrub is done. This runs whatever the durability
        // mode: a secure remove asks for the bytes to be gone.
        try dataFile.sync()
        var scrubbed: MetaPage = meta
        scrubbed.generation += 1
        scrubbed.scrubPending = false
        pendingMeta = scrubbed
        try writeMeta(scrubbed, sync: true)
        pendingMeta = nil
        meta = scrubbed
        state.secureDeletePending = false
        publishState()
    }
}

extension ValueBox {
    /// Writes `meta` into its slot of `file` with `layout` (the data file and its layout unless given: compaction
    /// writes a new one) and, when `sync`, makes it durable. The engine's only meta writer. A meta beyond the
    /// format's limits (`MetaPage.problem`: reachable only from a forged file, e.g. a generation or sequence next
    /// to 2^62) is refused: open would reject it, and fall back to the older meta.
    func writeMeta(_ meta: MetaPage, to file: StorageFile? = nil, layout: DataFileLayout? = nil, sync: Bool) throws(BoxwoodError) {
        let file: StorageFile = file ?? dataFile
        let layout = layout ?? pager.layout
        if let problem = meta.problem {
            throw .corrupted(file: file.path, page: meta.slot, reason: "refusing to write a meta page beyond the format's limits: \(problem)")
        }
        meta.encode(into: cellBuffer)
        try layout.write(cellBuffer, as: meta.slot, to: file)
        if sync { try file.sync() }
    }
}

/// Writes a checkpoint's pages (dirty tree pages, overflow chains, the freelist) to the pages its allocator hands
/// out, coalescing runs of consecutive pages into one write. Every page it writes is named by a disk reference
/// carrying the checkpoint's write tag (`DataFileLayout.reference(to:writtenBy:)`), and that reference is what the
/// parent, the leaf, the previous page of a chain or the meta stores.
final class CheckpointWriter: CheckpointPageSink {
    let pager: Pager
    private let output: PageRunWriter
    private let allocator: PageAllocator
    /// The generation of the meta this checkpoint will write.
    private let generation: UInt64
    private let extents = ExtentWriter()

    init(pager: Pager, file: StorageFile, allocator: PageAllocator, generation: UInt64) {
        self.pager = pager
        self.output = PageRunWriter(file: file, layout: pager.layout)
        self.allocator = allocator
        self.generation = generation
    }

    /// A new page: its disk reference.
    func allocate() -> UInt64 { pager.layout.reference(to: allocator.allocate(), writtenBy: generation) }

    /// Seals `page` as the page `reference` names and queues it for writing.
    func write(_ page: UnsafeMutableRawPointer, as reference: UInt64) throws(BoxwoodError) {
        try output.write(page, as: reference)
        pager.didWrite(page, as: reference)
    }

    /// Writes everything still queued.
    func finish() throws(BoxwoodError) { try output.flush() }

    /// Writes the dirty pages of a tree (children first) and returns its root's disk reference.
    func flush(_ ref: PageRef) throws(BoxwoodError) -> PageRef {
        guard ref.isDirtyRef else { return ref }
        let p = pager.dirtyMemory(ref)
        if PageType.raw(of: p) == PageType.branch.rawValue {
            let branch = BranchPage(p)
            for c in 0...branch.count {
                let child = branch.child(c)
                if child.isDirtyRef { BranchPage.setChild(p, c, try flush(child)) }
            }
            BranchPage.clearUnusedSpace(p)
        } else {
            // Only a leaf written since the last checkpoint can point at a dirty blob, and only while blobs
            // exist: without any, the cells need no look (saves a cold pass over every leaf).
            if pager.liveBlobCount > 0 {
                let leaf = LeafPage(p)
                for i in 0..<leaf.count {
                    let off = leaf.slot(i)
                    if let overflow = LeafValue.overflowReference(p, off), overflow.isDirtyRef {
                        store64(p, LeafValue.valueOffset(p, off), try writeOverflow(overflow))
                    }
                }
            }
            LeafPage.clearUnusedSpace(p)
        }
        let reference = allocate()
        try output.write(p, as: reference)
        pager.releaseAfterFlush(ref, writtenAs: reference)
        return reference
    }

    /// Writes a dirty blob as an extent (more than a page, a plain file: `ExtentPage.holds`) or as a chain of
    /// overflow pages; returns the first page's disk reference.
    private func writeOverflow(_ ref: UInt64) throws(BoxwoodError) -> UInt64 {
        let blob = pager.blob(ref)
        if ExtentPage.holds(blob.count, layout: pager.layout) {
            let pages = ExtentPage.pageCount(forStored: blob.count)
            let head = allocator.allocateRun(pages)
            try output.writeExtent(blob.memory, count: blob.count, head: head, large: extents)
            pager.didWriteExtent(head, pages: pages)
            pager.releaseBlobAfterFlush(ref)
            return head   // a plain file's disk reference is the page number
        }
        let numbers = try OverflowPage.writeChain(blob.memory, count: blob.count, allocate: allocate) { (page, number) throws(BoxwoodError) in
            try write(page, as: number)
        }
        pager.releaseBlobAfterFlush(ref)
        return numbers[0]
    }
}

/// Where a checkpoint's pages go: disk references for new pages (from its allocator, tagged with its generation)
/// and sealed writes of plain pages. The inline `CheckpointWriter` and the background `FrozenCheckpointWriter`.
protocol CheckpointPageSink: AnyObject {
    /// A new page: its disk reference.
    func allocate() -> UInt64
    /// Seals `page` as the page `reference` names and queues it for writing.
    func write(_ page: UnsafeMutableRawPointer, as reference: UInt64) throws(BoxwoodError)
}

extension CheckpointPageSink {
    /// Writes `free` (minus the pages taken to hold it) as a chain of freelist pages; returns the disk reference of
    /// the first, the page numbers of all, and the entries written, which `free` holds afterwards, largest first.
    func writeFreelist(_ free: inout [UInt64]) throws(BoxwoodError) -> (head: UInt64, pages: [UInt64], count: Int) {
        if free.isEmpty { return (0, [], 0) }
        // Freelist pages must come from pages the durable state does not use: the remaining reusable ones
        // or new pages. Taking one of the remaining reusable pages also removes it from `free`.
        var listPages: [UInt64] = []
        while listPages.count * PageLayout.freelistEntriesPerPage < free.count {
            let page = allocate()
            listPages.append(page)
            if let i = free.firstIndex(of: page.diskPageNumber) { free.remove(at: i) }
        }
        let entries = free.sorted()
        let page = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
        defer { page.deallocate() }
        var index = 0
        for (i, number) in listPages.enumerated() {
            let n = min(PageLayout.freelistEntriesPerPage, entries.count - index)
            FreelistPage.write(page, next: i + 1 < listPages.count ? listPages[i + 1] : 0, entries: entries[index..<(index + n)])
            index += n
            try write(page, as: number)
        }
        // Handed back largest first, the order `FreeSpace` keeps (its install then only checks it).
        free = entries.reversed()
        return (listPages.first ?? 0, listPages.map(\.diskPageNumber), entries.count)
    }
}
