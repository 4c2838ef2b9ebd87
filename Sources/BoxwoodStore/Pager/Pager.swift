/// Owns the data file's pages: the read-only shared mapping of checkpointed pages (verified against their
/// checksum the first time they are touched), the in-memory dirty pages and value blobs that commits since
/// the last checkpoint produced, and the bookkeeping that makes a transaction abortable.
///
/// Copy-on-write at two levels: a checkpointed page is never modified (a change copies it into a dirty page,
/// and the old page number becomes free only after the next checkpoint's meta is durable), and a dirty page
/// made by an earlier transaction is also copied before the current transaction changes it, so `abort` just
/// drops the pages the transaction made and restores the previous roots.
///
/// In an encrypted file (`layout.cipher`) the mapping holds ciphertext: a checkpointed page is decrypted (which
/// authenticates it) and validated into a page of its own the first time it is touched, and kept in `decrypted`
/// until a trim (see `trimDecryptedPages`), which happens only between operations, where no cursor holds a page
/// pointer.
final class Pager {
    let file: StorageFile
    let pageSize = PageLayout.pageSize
    /// Where pages sit in the file and how they are sealed.
    let layout: DataFileLayout
    /// `layout.isEncrypted`, kept here for the hot path.
    private let isEncrypted: Bool
    /// Checks the structure of a checkpointed page whose checksum matched, the first time it is touched: nil when
    /// it is sound, else why not. The pager knows pages as checksummed blocks; what a page holds is the tree's
    /// business (`PageType.problem`), handed in by the owner of the trees.
    private let validatePage: (_ page: UnsafeRawPointer, _ pageCount: UInt64) -> String?

    // MARK: Mapping of checkpointed pages

    @exclusivity(unchecked) private(set) var map: UnsafeRawPointer?
    private(set) var mapLength = 0
    /// Pages of the data file that the trees may use (meta pages included): the current meta's page count, plus the
    /// extents that values written once took past it since (`growPageCount`).
    @exclusivity(unchecked) var pageCount: UInt64 = 2
    /// One bit per page: its checksum has been verified (or we wrote it ourselves). Plain files only.
    @exclusivity(unchecked) private var verified: [UInt64] = []

    // MARK: Decrypted pages (encrypted files only)

    /// The decrypted, validated pages.
    private let decrypted = DecryptedPageCache()
    /// Pages `decrypted` holds.
    var decryptedPageCount: Int { decrypted.count }

    // MARK: Dirty pages and blobs

    @exclusivity(unchecked) private var dirtyPages: [UnsafeMutableRawPointer?] = []
    @exclusivity(unchecked) private var dirtyTxn: [UInt64] = []
    @exclusivity(unchecked) private var freeDirtySlots: [Int] = []
    @exclusivity(unchecked) private(set) var liveDirtyPages = 0
    /// Page buffers released by commits and checkpoints, kept for the next dirty pages instead of going back
    /// to `malloc` (every transaction copies the pages it touches, so a write workload allocates and frees a
    /// page buffer per touched page). At most `sparePageLimit`; trimmed after each checkpoint.
    @exclusivity(unchecked) private var sparePages: [UnsafeMutableRawPointer] = []
    static let sparePageLimit = 4096
    static let sparePagesAfterCheckpoint = 512

    struct Blob {
        var memory: UnsafeMutableRawPointer
        var count: Int
        var txn: UInt64
    }
    private var blobs: [Blob?] = []
    private var freeBlobSlots: [Int] = []
    private(set) var liveBlobBytes = 0
    /// Dirty blobs alive; when 0, no dirty page holds a reference to one.
    private(set) var liveBlobCount = 0
    /// Pages of checkpointed extents released since the owner last reset it (its checkpoint threshold counts them:
    /// they are reusable only after a checkpoint). Aborted transactions' releases stay counted.
    var releasedExtentPages = 0

    // MARK: Transaction bookkeeping

    /// Identifier of the open (or next) transaction; dirty pages carry the id of the transaction that made them.
    @exclusivity(unchecked) private(set) var txn: UInt64 = 1
    @exclusivity(unchecked) private var createdPages: [Int] = []
    @exclusivity(unchecked) private var retiredPages: [Int] = []
    @exclusivity(unchecked) private var createdBlobs: [Int] = []
    @exclusivity(unchecked) private var retiredBlobs: [Int] = []

    /// Which pages of the durable state are free, released, or in use (see `FreeSpace`).
    let freeSpace = FreeSpace()

    /// Bumped whenever page memory may have moved or been released (mutation, checkpoint, remap), so that
    /// iterators know to re-seek.
    @exclusivity(unchecked) var modificationCount: UInt64 = 0

    init(file: StorageFile, layout: DataFileLayout,
         validatePage: @escaping (_ page: UnsafeRawPointer, _ pageCount: UInt64) -> String?) {
        self.file = file
        self.layout = layout
        isEncrypted = layout.isEncrypted
        self.validatePage = validatePage
    }

    deinit {
        releaseAllDirty()
        if let map { file.unmap(map, length: mapLength) }
    }

    // MARK: Mapping

    /// Maps the file so that `pageCount` pages are readable, growing the mapping geometrically.
    func ensureMapped(pages: UInt64) throws(BoxwoodError) {
        // Page counts come from meta pages, which keep them <= MetaPage.pageCountLimit (2^40): `needed` is
        // below 2^52 and the doubling below stays far from Int.max. Checked again here, as it is cheap.
        guard pages <= MetaPage.pageCountLimit else {
            throw .corrupted(file: file.path, page: nil, reason: "page count \(pages) beyond the format limit")
        }
        let needed = Int(layout.fileSize(pageCount: pages))
        if needed <= mapLength, map != nil { return }
        var length = max(64 << 20, mapLength)
        while length < needed * 2 { length *= 2 }
        let newMap = try file.map(length: length)
        if let map { file.unmap(map, length: mapLength) }
        map = newMap
        mapLength = length
        modificationCount &+= 1
    }

    /// Lets the trees use the pages below `pages` (a value written once appended its extent past the page count,
    /// see `FreeSpace`), mapping them. The caller has written them, or checked that the file holds them.
    func growPageCount(to pages: UInt64) throws(BoxwoodError) {
        guard pages > pageCount else { return }
        try ensureMapped(pages: pages)
        pageCount = pages
    }

    /// Why the extent a WAL record names (`extent`, `pages` pages from its head) is not in the file as the record
    /// says, or nil: its head must be an extent head of the record's stored length whose checksum, the record's, the
    /// bytes match. Reads the mapping whatever was verified before (the pages may have held something else when
    /// this pager last read them); the caller mapped the pages and checked that the file holds them.
    func problemWithLoggedExtent(_ extent: LoggedExtent, pages: Int) -> String? {
        guard !isEncrypted, let map else { return "an extent in an encrypted file" }
        let head = map + Int(extent.head) * pageSize
        if PageType.raw(of: head) != PageType.extent.rawValue { return "page \(extent.head) is not an extent head" }
        if ExtentPage.storedLength(head) != Int(extent.storedLength) || load64(head, PageLayout.checksumOffset) != extent.checksum {
            return "the extent at page \(extent.head) is not the one the WAL record names"
        }
        if ExtentPage.checksum(head, pages: pages, head: extent.head) != extent.checksum {
            return "the extent at page \(extent.head) does not match its checksum"
        }
        return nil
    }

    @inline(__always)
    private func isVerified(_ page: UInt64) -> Bool {
        let word = Int(page >> 6)
        return word < verified.count && verified[word] & (1 << (page & 63)) != 0
    }

    func markVerified(_ page: UInt64) {
        let word = Int(page >> 6)
        if word >= verified.count { verified.append(contentsOf: repeatElement(0, count: word - verified.count + 1 + verified.count / 2)) }
        verified[word] |= 1 << (page & 63)
    }

    /// Forgets that `page` was verified (its bytes in the file changed or must be checked again).
    func clearVerified(_ page: UInt64) {
        if isEncrypted {
            decrypted.remove(page)
            return
        }
        let word = Int(page >> 6)
        if word < verified.count { verified[word] &= ~(1 << (page & 63)) }
    }

    /// Records that the page `reference` names, with the plain bytes at `plain` (checksum sealed), was just written
    /// to the file: a plain file's mapping shows it already, an encrypted file's decrypted copy is replaced.
    func didWrite(_ plain: UnsafeRawPointer, as reference: UInt64) {
        guard isEncrypted else { markVerified(reference.diskPageNumber); return }
        decrypted.store(plain, as: reference)
    }

    /// Frees decrypted pages once they take more than `budget` bytes (see `DecryptedPageCache.trim`). Call only
    /// between operations (no cursor holds a page pointer); it bumps `modificationCount` so that iterators re-seek.
    func trimDecryptedPages(budget: Int) {
        guard isEncrypted, decrypted.trim(budget: budget) else { return }
        modificationCount &+= 1
    }

    /// The memory of the checkpointed page `reference` names (a disk reference, see `PageRef`), verified on first
    /// use: against its checksum in a plain file (where the reference is the page number), by authenticating it as
    /// the version the reference's write tag names in an encrypted one.
    @inline(__always)
    func diskPage(_ reference: UInt64) throws(BoxwoodError) -> UnsafeRawPointer {
        // A plain file's references carry no tag: one that does is out of range like any other bad number.
        let page = isEncrypted ? reference.diskPageNumber : reference
        guard page >= 2, page < pageCount, reference & dirtyFlag == 0, let map else {
            throw .corrupted(file: file.path, page: page, reason: "page number out of range (file has \(pageCount) pages)")
        }
        if isEncrypted {
            if let plain = decrypted.page(reference) { return plain }
            return try decryptPage(reference, map: map)
        }
        let pointer = map + Int(page) * pageSize
        if !isVerified(page) { try verifyPlainPage(pointer, page) }
        return pointer
    }

    /// Verifies the plain page `page` at `pointer` (its checksum, then its structure) and marks it verified. The head
    /// of an extent (`ExtentPage`) is verified whole: its checksum covers every page of the extent, so the value's
    /// bytes are checked before any read lends them, and only the head's bit is set. The type byte, not verified
    /// yet, only chooses how many bytes the checksum covers: a damaged one cannot make a wrong page match, and the
    /// run it claims is checked against the file before it is hashed.
    @inline(never)
    private func verifyPlainPage(_ pointer: UnsafeRawPointer, _ page: UInt64) throws(BoxwoodError) {
        var checksum: UInt64
        if PageType.raw(of: pointer) == PageType.extent.rawValue {
            guard let pages = ExtentPage.claimedPages(pointer, head: page, pageCount: pageCount) else {
                throw .corrupted(file: file.path, page: page, reason: "extent of \(load64(pointer, PageLayout.auxOffset)) stored bytes "
                                 + "does not fit the file (\(pageCount) pages)")
            }
            checksum = ExtentPage.checksum(pointer, pages: pages, head: page)
        } else {
            checksum = pageChecksum(pointer, pageNumber: page)
        }
        if checksum != load64(pointer, 0) {
            throw .checksumMismatch(file: file.path, page: page, offset: layout.offset(of: page))
        }
        if let reason = validatePage(pointer, pageCount) {
            throw .corrupted(file: file.path, page: page, reason: reason)
        }
        markVerified(page)
    }

    /// Decrypts the page `reference` names in an encrypted file into a page of its own (see `decrypted`) and
    /// validates its structure. Authentication replaces the checksum: the tag covers exactly the bytes that were
    /// sealed, the page's own checksum included, so checking that too would only repeat it.
    @inline(never)
    private func decryptPage(_ reference: UInt64, map: UnsafeRawPointer) throws(BoxwoodError) -> UnsafeRawPointer {
        let page = reference.diskPageNumber
        let offset = layout.offset(of: page)
        guard let cipher = layout.cipher else { throw .corrupted(file: file.path, page: page, reason: "not an encrypted file") }
        let memory = decrypted.buffer()
        // The page number is below `pageCount`, whose slots `ensureMapped` maps and open checked the file holds.
        guard cipher.open(map + Int(offset), as: reference, into: memory) else {
            decrypted.discard(memory)
            throw .checksumMismatch(file: file.path, page: page, offset: offset)
        }
        // An extent's bytes run past its page, which an encrypted file seals alone: never written there (`ExtentPage`).
        let extent = PageType.raw(of: memory) == PageType.extent.rawValue
        if let reason = extent ? "an extent in an encrypted file" : validatePage(memory, pageCount) {
            decrypted.discard(memory)
            throw .corrupted(file: file.path, page: page, reason: reason)
        }
        decrypted.insert(memory, as: reference)
        return UnsafeRawPointer(memory)
    }

    /// The page number of a pointer into a checkpointed page (nil for a dirty page), for error reports.
    func pageNumber(of pointer: UnsafeRawPointer) -> UInt64? {
        if isEncrypted { return decrypted.pageNumber(of: pointer) }
        guard let map, pointer >= map, pointer < map + mapLength else { return nil }
        return UInt64((pointer - map) / pageSize)
    }

    /// The checkpointed page `reference` names, its checksum (or seal) and structure verified now, whatever was
    /// verified before.
    func verifiedDiskPage(_ reference: UInt64) throws(BoxwoodError) -> UnsafeRawPointer {
        clearVerified(reference.diskPageNumber)
        return try diskPage(reference)
    }

    /// The memory of any tree page (dirty or checkpointed). A tagged reference is always one the engine made
    /// (page numbers from disk are validated untagged, see `PageRef`), so its dirty page exists.
    @inline(__always)
    func page(_ ref: PageRef) throws(BoxwoodError) -> UnsafeRawPointer {
        if ref.isDirtyRef { return UnsafeRawPointer(dirtyPages[ref.dirtyIndex].unsafelyUnwrapped) }
        return try diskPage(ref)
    }

    // MARK: Dirty pages

    /// A new dirty page owned by the current transaction. Its bytes are unspecified: callers copy a page into
    /// it or initialize it (and every unused byte is zeroed before a page is written).
    func allocateDirty() -> (PageRef, UnsafeMutableRawPointer) {
        let memory = sparePages.popLast() ?? UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        let index: Int
        if let slot = freeDirtySlots.popLast() {
            index = slot
            dirtyPages[index] = memory
            dirtyTxn[index] = txn
        } else {
            index = dirtyPages.count
            dirtyPages.append(memory)
            dirtyTxn.append(txn)
        }
        createdPages.append(index)
        liveDirtyPages += 1
        return (makeDirtyRef(index), memory)
    }

    /// A writable copy of `ref` for the current transaction (the page itself when it is already one).
    func writable(_ ref: PageRef) throws(BoxwoodError) -> (PageRef, UnsafeMutableRawPointer) {
        if ref.isDirtyRef {
            let index = ref.dirtyIndex
            // A tagged reference names a dirty page that exists (see `page` and `PageRef`).
            if dirtyTxn[index] == txn { return (ref, dirtyPages[index].unsafelyUnwrapped) }
            let source = dirtyPages[index].unsafelyUnwrapped
            let (newRef, memory) = allocateDirty()
            memory.copyMemory(from: source, byteCount: pageSize)
            retiredPages.append(index)
            return (newRef, memory)
        }
        let source = try diskPage(ref)
        try release(ref)
        let (newRef, memory) = allocateDirty()
        memory.copyMemory(from: source, byteCount: pageSize)
        return (newRef, memory)
    }

    /// Drops a tree page that is no longer referenced by the current transaction's trees.
    func free(_ ref: PageRef) throws(BoxwoodError) {
        if ref.isDirtyRef {
            let index = ref.dirtyIndex
            if dirtyTxn[index] == txn { releaseDirty(index) } else { retiredPages.append(index) }
        } else if ref != 0 {
            try release(ref)
        }
    }

    /// Records that the current transaction stopped using the checkpointed page `reference` names (see `FreeSpace`,
    /// which counts page numbers).
    private func release(_ reference: UInt64) throws(BoxwoodError) {
        let page = reference.diskPageNumber
        guard freeSpace.release(page) else {
            throw .corrupted(file: file.path, page: page, reason: "page is referenced twice (two parents, or two trees)")
        }
    }

    private func releaseDirty(_ index: Int) {
        guard let memory = detachDirty(index) else { return }
        if sparePages.count < Pager.sparePageLimit { sparePages.append(memory) } else { memory.deallocate() }
    }

    /// Empties dirty page slot `index` (it becomes reusable) and hands its buffer to the caller; nil when it was empty.
    private func detachDirty(_ index: Int) -> UnsafeMutableRawPointer? {
        guard let memory = dirtyPages[index] else { return nil }
        dirtyPages[index] = nil
        freeDirtySlots.append(index)
        liveDirtyPages -= 1
        return memory
    }

    // MARK: Blobs (values bound for overflow pages)

    /// A new blob of `count` bytes owned by the current transaction.
    func allocateBlob(count: Int) -> (UInt64, UnsafeMutableRawPointer) {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        let blob = Blob(memory: memory, count: count, txn: txn)
        let index: Int
        if let slot = freeBlobSlots.popLast() { index = slot; blobs[index] = blob } else { index = blobs.count; blobs.append(blob) }
        createdBlobs.append(index)
        liveBlobBytes += count
        liveBlobCount += 1
        return (makeDirtyRef(index), memory)
    }

    /// The dirty blob `ref` (tagged: one that exists, see `PageRef`).
    func blob(_ ref: UInt64) -> Blob { blobs[ref.dirtyIndex].unsafelyUnwrapped }

    /// Drops an overflow value (a dirty blob, a chain of checkpointed overflow pages, or an extent: all its pages).
    func freeOverflow(_ ref: UInt64) throws(BoxwoodError) {
        if ref.isDirtyRef {
            let index = ref.dirtyIndex
            if let b = blobs[index], b.txn == txn { releaseBlob(index) } else { retiredBlobs.append(index) }
            return
        }
        let head = try diskPage(ref)
        if PageType.raw(of: head) == PageType.extent.rawValue {
            // Verified whole (`diskPage`): the run lies inside the file.
            let first = ref.diskPageNumber
            let pages = ExtentPage.pageCount(forStored: ExtentPage.storedLength(head))
            for i in 0..<pages { try release(first + UInt64(i)) }
            releasedExtentPages += pages
            return
        }
        var page = ref
        var steps: UInt64 = 0
        while page != 0 {
            guard let overflow = OverflowPage(try diskPage(page)) else {
                throw .corrupted(file: file.path, page: page.diskPageNumber, reason: "expected an overflow page")
            }
            try release(page)
            page = overflow.next
            steps += 1
            if steps > pageCount { throw .corrupted(file: file.path, page: page.diskPageNumber, reason: "overflow chain loops") }
        }
    }

    private func releaseBlob(_ index: Int) {
        if let b = blobs[index] {
            b.memory.deallocate()
            liveBlobBytes -= b.count
            liveBlobCount -= 1
            blobs[index] = nil
            freeBlobSlots.append(index)
        }
    }

    // MARK: Transactions

    /// Makes the current transaction's pages permanent (until the next checkpoint) and starts a new one. Frozen
    /// pages and blobs it stopped using stay in memory until the background checkpoint is installed.
    func commitTransaction() {
        if let frozenBefore {
            for index in retiredPages {
                if dirtyTxn[index] < frozenBefore { retiredFrozenPages.append(index) } else { releaseDirty(index) }
            }
            for index in retiredBlobs {
                if let b = blobs[index], b.txn < frozenBefore { retiredFrozenBlobs.append(index) } else { releaseBlob(index) }
            }
        } else {
            for index in retiredPages { releaseDirty(index) }
            for index in retiredBlobs { releaseBlob(index) }
        }
        freeSpace.commitTransaction()
        resetTransactionLists()
    }

    /// Drops everything the current transaction made; the caller restores the previous roots.
    func abortTransaction() {
        for index in createdPages where dirtyPages[index] != nil && dirtyTxn[index] == txn { releaseDirty(index) }
        for index in createdBlobs where blobs[index]?.txn == txn { releaseBlob(index) }
        freeSpace.abortTransaction()
        resetTransactionLists()
        modificationCount &+= 1
    }

    private func resetTransactionLists() {
        createdPages.removeAll(keepingCapacity: true)
        retiredPages.removeAll(keepingCapacity: true)
        createdBlobs.removeAll(keepingCapacity: true)
        retiredBlobs.removeAll(keepingCapacity: true)
        txn &+= 1
    }

    // MARK: Background checkpoint support (see `BackgroundCheckpoint`)

    /// Set while a background checkpoint writes the committed state it froze: the dirty pages and blobs of every
    /// transaction below this id. Invariant kept here: a frozen page or blob is never changed (a later transaction
    /// copies it first, as it copies any page of an earlier transaction) and never freed or its slot reused until
    /// `installFrozen`, so the checkpointer thread may read it while this thread goes on committing.
    private(set) var frozenBefore: UInt64?
    /// Frozen pages and blobs that commits after the freeze stopped using (freed at the install).
    private var retiredFrozenPages: [Int] = []
    private var retiredFrozenBlobs: [Int] = []
    /// Dirty pages and blob bytes alive at the freeze (all frozen).
    private(set) var frozenPageCount = 0
    private(set) var frozenBlobBytes = 0

    /// The committed pages and blobs, frozen for a background checkpoint (between transactions). The arrays are
    /// copies: this thread may grow its own meanwhile.
    func freeze() -> (pages: [UnsafeMutableRawPointer?], blobs: [Blob?]) {
        frozenBefore = txn
        frozenPageCount = liveDirtyPages
        frozenBlobBytes = liveBlobBytes
        return (dirtyPages, blobs)
    }

    /// Installs a background checkpoint whose meta is durable (between transactions): every reference that a page
    /// made after the freeze holds to a frozen page or blob now names the disk page it was written to (`forward`,
    /// `blobForward`: the first page of its overflow chain), the frozen memory is freed, and `written` (every page
    /// the checkpoint wrote) is forgotten as verified or decrypted. Returns the disk pages of frozen pages and blobs
    /// that commits after the freeze stopped using: the next checkpoint frees them. The caller maps the roots.
    func installFrozen(forward: FrozenPageForward, blobForward: [Int: (head: UInt64, pages: [UInt64])], written: [UInt64]) -> [UInt64] {
        guard let frozenBefore else { return [] }
        let hadFrozenBlobs = !blobForward.isEmpty
        for index in dirtyPages.indices {
            guard let p = dirtyPages[index], dirtyTxn[index] >= frozenBefore else { continue }
            if PageType.raw(of: p) == PageType.branch.rawValue {
                let branch = BranchPage(p)
                for c in 0...branch.count {
                    let child = branch.child(c)
                    if child.isDirtyRef, let disk = forward[child.dirtyIndex] { BranchPage.setChild(p, c, disk) }
                }
            } else if hadFrozenBlobs {
                let leaf = LeafPage(p)
                for i in 0..<leaf.count {
                    let off = leaf.slot(i)
                    if let overflow = LeafValue.overflowReference(p, off), overflow.isDirtyRef,
                       let disk = blobForward[overflow.dirtyIndex] {
                        store64(p, LeafValue.valueOffset(p, off), disk.head)
                    }
                }
            }
        }
        var released: [UInt64] = []
        for index in retiredFrozenPages { if let disk = forward[index] { released.append(disk.diskPageNumber) } }
        for index in retiredFrozenBlobs { if let disk = blobForward[index] { released.append(contentsOf: disk.pages) } }
        for page in written { if isEncrypted { decrypted.remove(page) } else { markVerified(page) } }
        // A blob of several pages in a plain file was written as an extent (`ExtentPage.holds`), whose pages are not in
        // `written`: its head is verified (written here), the others must never pass as verified pages.
        if !isEncrypted { for (_, disk) in blobForward where disk.pages.count > 1 { didWriteExtent(disk.pages[0], pages: disk.pages.count) } }
        // The frozen pages' buffers all go to the spare list, whose trim below frees what it does not keep.
        for index in dirtyPages.indices where dirtyTxn[index] < frozenBefore {
            if let memory = detachDirty(index) { sparePages.append(memory) }
        }
        for index in blobs.indices { if let b = blobs[index], b.txn < frozenBefore { releaseBlob(index) } }
        retiredFrozenPages.removeAll()
        retiredFrozenBlobs.removeAll()
        self.frozenBefore = nil
        frozenPageCount = 0
        frozenBlobBytes = 0
        trimSparePages()
        modificationCount &+= 1
        return released
    }

    // MARK: Checkpoint support

    /// Releases a dirty page after the checkpoint wrote it to disk as the page `reference` names. In an encrypted file
    /// its memory becomes that page's decrypted copy, neither copied nor decrypted again on the next read; a plain
    /// file's mapping shows the page already.
    func releaseAfterFlush(_ ref: PageRef, writtenAs reference: UInt64) {
        let index = ref.dirtyIndex
        guard isEncrypted, let memory = dirtyPages[index] else {
            markVerified(reference.diskPageNumber)
            releaseDirty(index)
            return
        }
        dirtyPages[index] = nil
        freeDirtySlots.append(index)
        liveDirtyPages -= 1
        decrypted.insert(memory, as: reference)
    }

    /// Records that an extent of `pages` pages was just written from page `head` (a plain file): the head holds its
    /// checksum over the whole extent, as written, so it is verified; the other pages may have been verified as
    /// pages of another kind before, and must be checked as pages again if anything ever names one.
    func didWriteExtent(_ head: UInt64, pages: Int) {
        markVerified(head)
        for i in 1..<max(pages, 1) { clearVerified(head + UInt64(i)) }
    }

    func releaseBlobAfterFlush(_ ref: UInt64) {
        releaseBlob(ref.dirtyIndex)
    }

    /// The memory of a dirty page (checkpoint only; `ref` is tagged, so the page exists, see `PageRef`).
    func dirtyMemory(_ ref: PageRef) -> UnsafeMutableRawPointer {
        dirtyPages[ref.dirtyIndex].unsafelyUnwrapped
    }

    /// Returns spare page buffers beyond `keep` to the allocator (after a checkpoint released its pages).
    func trimSparePages(keeping keep: Int = Pager.sparePagesAfterCheckpoint) {
        guard sparePages.count > keep else { return }
        // One batch: after a background checkpoint's install it is every frozen page (`PageBufferRelease`).
        PageBufferRelease.deallocate(Array(sparePages[keep...]))
        sparePages.removeLast(sparePages.count - keep)
    }

    /// Frees everything held in memory (on deinit).
    func releaseAllDirty() {
        for index in dirtyPages.indices { releaseDirty(index) }
        trimSparePages(keeping: 0)
        for index in blobs.indices { releaseBlob(index) }
        dirtyPages.removeAll()
        dirtyTxn.removeAll()
        freeDirtySlots.removeAll()
        blobs.removeAll()
        freeBlobSlots.removeAll()
        createdPages.removeAll()
        retiredPages.removeAll()
        createdBlobs.removeAll()
        retiredBlobs.removeAll()
        modificationCount &+= 1
    }
}
