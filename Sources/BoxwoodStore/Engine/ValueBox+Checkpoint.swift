/// Checkpoint: write every dirty page copy-on-write to pages that the durable state does not use, sync,
/// flip the meta page, sync, then reset the WAL. The commit order, and why each step is safe if the
/// process or the power dies right after it:
///
/// 1. Write tree pages, overflow chains, a new catalog tree and a new freelist, only into pages that are
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
        try checkUsable()
        if options.readOnly { throw .readOnly(path: path) }
        if inTransaction || inExplicitRead { throw .transactionAlreadyActive }
        let locked = holdsWriterLock
        if !locked {
            try lockWriter()
            do { try catchUp() } catch { unlockWriter(); throw error }
        }
        defer { if !locked && failure == nil { unlockWriter() } }
        if pager.liveDirtyPages == 0 && pager.pendingFree.isEmpty && lastSequence == meta.lastSequence
            && storedMasterClientId == meta.masterClientId {
            return
        }
        do {
            try writeCheckpoint()
        } catch {
            // Pages were released as they were written: the in-memory trees no longer match the durable
            // meta. The files are consistent (old meta + WAL, or the new meta once `pendingMeta` is
            // rewritten); the next call recovers from them.
            failure = error
            throw error
        }
    }

    private func writeCheckpoint() throws(BoxwoodError) {
        // Free pages of the durable state may still be read by a reader (in any process) whose snapshot is
        // an older generation: then this checkpoint appends instead of reusing them.
        let reuse = !(try header?.hasLiveReader(olderThan: meta.generation, ownSlot: readerSlot) ?? false)
        header?.writerIsChangingFiles = true
        let writer = CheckpointWriter(pager: pager, file: dataFile, reusable: reuse ? pager.freePages : [], firstNewPage: meta.pageCount)

        // 1a. Table trees.
        for id in tables.keys.sorted() {
            var state = tables[id]!
            state.root = try writer.flush(state.root)
            tables[id] = state
        }

        // 1b. A new catalog tree (built in memory, then flushed like any tree).
        var catalogRoot: PageRef = 0
        let keyBuffer = UnsafeMutableRawPointer.allocate(byteCount: 4 + Catalog.valueSize, alignment: 8)
        defer { keyBuffer.deallocate() }
        let path = TreePath()
        for id in tables.keys.sorted() {
            keyBuffer.storeBytes(of: Catalog.key(id), as: UInt32.self)
            Catalog.encode(tables[id]!, into: keyBuffer + 4)
            let size = LeafValue.makeCell(pager, into: cellBuffer, key: keyBuffer, keyLength: 4, value: keyBuffer + 4,
                                          valueLength: Catalog.valueSize, compressionThreshold: Int.max)
            if catalogRoot == 0 {
                let (ref, memory) = pager.allocateDirty()
                Node.initialize(memory, type: .leaf)
                _ = Node.insertCell(memory, at: 0, cellBuffer, size, leaf: true)
                catalogRoot = ref
            } else {
                let (index, _) = try BTree.descend(pager, root: catalogRoot, keyBuffer, 4, path: path)
                try BTree.touchPath(pager, root: &catalogRoot, path: path)
                try BTree.insertIntoLeaf(pager, root: &catalogRoot, path: path, index: index, cell: cellBuffer, size: size)
            }
        }
        catalogRoot = try writer.flush(catalogRoot)
        pager.commitTransaction()

        // 1c. The new freelist: what stays free of the old list, plus everything the old state used that
        // the new one does not (pages freed by commits, the old catalog, the old freelist pages).
        var free = reuse ? writer.remainingReusable : pager.freePages
        free.append(contentsOf: pager.pendingFree)
        free.append(contentsOf: catalogPages)
        free.append(contentsOf: pager.freelistPages)
        let (freelistHead, freelistPages, freeCount) = try writer.writeFreelist(&free)
        try writer.finish()

        // 2. New pages durable before the meta points at them.
        let sync = options.durability != .off
        if sync { try dataFile.sync() }

        // 3-4. Flip the meta.
        let newMeta = MetaPage(generation: meta.generation + 1, pageCount: writer.nextPage, catalogRoot: catalogRoot,
                               freelistHead: freelistHead, freeCount: UInt64(freeCount), lastSequence: lastSequence,
                               walSalt: UInt64.random(in: 1...UInt64.max), masterClientId: storedMasterClientId)
        pendingMeta = newMeta
        try writeMeta(newMeta, sync: sync)
        pendingMeta = nil

        // In-memory state now follows the new meta.
        meta = newMeta
        pager.pageCount = newMeta.pageCount
        try pager.ensureMapped(pages: newMeta.pageCount)
        pager.freePages = free.sorted(by: >)
        pager.freelistPages = freelistPages
        pager.pendingFree = []
        catalogPages = []
        try BTree.visit(pager, root: catalogRoot, page: { (ref, _, _) throws(BoxwoodError) in self.catalogPages.append(ref) }, overflow: { (_) throws(BoxwoodError) in })
        pager.modificationCount &+= 1

        // 5. Reset the WAL, and tell the other value boxes.
        try wal!.reset(salt: newMeta.walSalt, sync: sync)
        publishState()
    }
}

extension ValueBox {
    /// Writes `meta` into its slot and (unless `sync` is false) makes it durable.
    func writeMeta(_ meta: MetaPage, sync: Bool) throws(BoxwoodError) {
        meta.encode(into: cellBuffer)
        try dataFile.write(cellBuffer, count: PageLayout.pageSize, offset: meta.slot * UInt64(PageLayout.pageSize))
        if sync { try dataFile.sync() }
    }
}

/// Allocates pages for a checkpoint and writes them, coalescing runs of consecutive pages into one write.
final class CheckpointWriter {
    let pager: Pager
    let file: StorageFile
    /// Pages free in the durable state, largest first (allocation pops the smallest).
    private(set) var remainingReusable: [UInt64]
    /// The first page number past everything allocated so far.
    private(set) var nextPage: UInt64

    private let run: UnsafeMutableRawPointer
    private let runCapacity = 256
    private var runStart: UInt64 = 0
    private var runCount = 0

    init(pager: Pager, file: StorageFile, reusable: [UInt64], firstNewPage: UInt64) {
        self.pager = pager
        self.file = file
        self.remainingReusable = reusable
        self.nextPage = firstNewPage
        run = UnsafeMutableRawPointer.allocate(byteCount: runCapacity * PageLayout.pageSize, alignment: 4096)
    }

    deinit { run.deallocate() }

    func allocate() -> UInt64 {
        if let page = remainingReusable.popLast() { return page }
        defer { nextPage += 1 }
        return nextPage
    }

    /// Seals `page` as page number `number` and queues it for writing.
    func write(_ page: UnsafeMutableRawPointer, as number: UInt64) throws(BoxwoodError) {
        sealPage(page, pageNumber: number)
        if runCount > 0 && (number != runStart + UInt64(runCount) || runCount == runCapacity) { try flushRun() }
        if runCount == 0 { runStart = number }
        (run + runCount * PageLayout.pageSize).copyMemory(from: page, byteCount: PageLayout.pageSize)
        runCount += 1
        pager.markVerified(number)
    }

    private func flushRun() throws(BoxwoodError) {
        if runCount == 0 { return }
        try file.write(run, count: runCount * PageLayout.pageSize, offset: runStart * UInt64(PageLayout.pageSize))
        runCount = 0
    }

    /// Writes everything still queued.
    func finish() throws(BoxwoodError) { try flushRun() }

    /// Writes the dirty pages of a tree (children first) and returns its on-disk root.
    func flush(_ ref: PageRef) throws(BoxwoodError) -> PageRef {
        guard ref.isDirtyRef else { return ref }
        let p = pager.dirtyMemory(ref)
        if Node.type(p) == PageType.branch.rawValue {
            for c in 0...Node.count(p) {
                let child = Node.child(p, c)
                if child.isDirtyRef { Node.setChild(p, c, try flush(child)) }
            }
        } else {
            for i in 0..<Node.count(p) {
                let off = Node.slot(p, i)
                if let overflow = LeafValue.overflowReference(p, off), overflow.isDirtyRef {
                    store64(p, LeafValue.valueOffset(p, off), try writeOverflow(overflow))
                }
            }
        }
        let number = allocate()
        try write(p, as: number)
        pager.releaseAfterFlush(ref)
        return number
    }

    /// Writes a dirty blob as a chain of overflow pages; returns the first page.
    private func writeOverflow(_ ref: UInt64) throws(BoxwoodError) -> UInt64 {
        let blob = pager.blob(ref)
        let pageCount = max(1, (blob.count + PageLayout.overflowPayload - 1) / PageLayout.overflowPayload)
        var numbers: [UInt64] = []
        numbers.reserveCapacity(pageCount)
        for _ in 0..<pageCount { numbers.append(allocate()) }
        let page = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
        defer { page.deallocate() }
        for i in 0..<pageCount {
            let start = i * PageLayout.overflowPayload
            let n = min(PageLayout.overflowPayload, blob.count - start)
            page.initializeMemory(as: UInt8.self, repeating: 0, count: PageLayout.pageSize)
            page.storeBytes(of: PageType.overflow.rawValue, toByteOffset: PageLayout.typeOffset, as: UInt8.self)
            store64(page, PageLayout.linkOffset, i + 1 < pageCount ? numbers[i + 1] : 0)
            store64(page, PageLayout.auxOffset, UInt64(n))
            if n > 0 { (page + PageLayout.headerSize).copyMemory(from: blob.memory + start, byteCount: n) }
            try write(page, as: numbers[i])
        }
        pager.releaseBlobAfterFlush(ref)
        return numbers[0]
    }

    /// Writes `free` (minus the pages taken to hold it) as a chain of freelist pages.
    func writeFreelist(_ free: inout [UInt64]) throws(BoxwoodError) -> (head: UInt64, pages: [UInt64], count: Int) {
        if free.isEmpty { return (0, [], 0) }
        // Freelist pages must come from pages the durable state does not use: the remaining reusable ones
        // or new pages. Taking one from `remainingReusable` also removes it from `free`.
        var listPages: [UInt64] = []
        while listPages.count * PageLayout.freelistEntriesPerPage < free.count {
            let page = allocate()
            listPages.append(page)
            if let i = free.firstIndex(of: page) { free.remove(at: i) }
        }
        let entries = free.sorted()
        let page = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
        defer { page.deallocate() }
        var index = 0
        for (i, number) in listPages.enumerated() {
            page.initializeMemory(as: UInt8.self, repeating: 0, count: PageLayout.pageSize)
            page.storeBytes(of: PageType.freelist.rawValue, toByteOffset: PageLayout.typeOffset, as: UInt8.self)
            let n = min(PageLayout.freelistEntriesPerPage, entries.count - index)
            store64(page, PageLayout.linkOffset, i + 1 < listPages.count ? listPages[i + 1] : 0)
            store64(page, PageLayout.auxOffset, UInt64(n))
            for j in 0..<n { store64(page, PageLayout.headerSize + 8 * j, entries[index + j]) }
            index += n
            try write(page, as: number)
        }
        return (listPages.first ?? 0, listPages, entries.count)
    }
}
