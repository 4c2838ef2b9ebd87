/// Seals pages and writes them to a file, coalescing runs of consecutive page numbers into one write. Pages are
/// named by disk references (`PageRef`): the page number and, in an encrypted file, the write tag the seal
/// authenticates.
final class PageRunWriter {
    let file: StorageFile
    /// Where pages go and how they are sealed.
    let layout: DataFileLayout
    private let run: UnsafeMutableRawPointer
    private let runCapacity = 256
    private var runStart: UInt64 = 0
    private var runCount = 0
    /// Bytes handed to the file so far.
    private(set) var bytesWritten: UInt64 = 0
    /// Called after each write reaches the file, with ``bytesWritten`` (a background checkpoint's progress).
    var onWrite: ((UInt64) -> Void)?
    /// The first page this writer must never write (`UInt64.max`: none): a background checkpoint's fence, past which
    /// values written once go while it runs (`FrozenCheckpointWriter.fence`).
    var fence: UInt64 = .max

    init(file: StorageFile, layout: DataFileLayout) {
        self.file = file
        self.layout = layout
        run = UnsafeMutableRawPointer.allocate(byteCount: runCapacity * layout.slotSize, alignment: 4096)
    }

    deinit { run.deallocate() }

    /// Seals `page` as the page `reference` names (`DataFileLayout.seal`: its checksum, or in an encrypted file its
    /// encryption) and queues it for writing. `page` keeps its plain bytes.
    func write(_ page: UnsafeMutableRawPointer, as reference: UInt64) throws(BoxwoodError) {
        let number = reference.diskPageNumber
        try checkBelowFence(number, count: 1)
        if runCount > 0 && (number != runStart + UInt64(runCount) || runCount == runCapacity) { try flush() }
        if runCount == 0 { runStart = number }
        let slot = run + runCount * layout.slotSize
        let sealed = try layout.seal(page, as: reference, scratch: slot)
        if sealed != UnsafeRawPointer(slot) { slot.copyMemory(from: sealed, byteCount: layout.slotSize) }
        runCount += 1
    }

    /// Room in the queued run for `count` consecutive pages from page `first` of a plain file, which the caller fills
    /// whole and seals itself (an extent: `ExtentPage.build`); what is queued is flushed first when the pages do not
    /// continue it or do not fit with it. nil when `count` pages are more than a run holds, or the file is
    /// encrypted (every page sealed alone): the caller writes those itself.
    func reserve(_ count: Int, from first: UInt64) throws(BoxwoodError) -> UnsafeMutableRawPointer? {
        try checkBelowFence(first, count: count)
        guard count <= runCapacity, !layout.isEncrypted else { return nil }
        if runCount > 0 && (first != runStart + UInt64(runCount) || runCount + count > runCapacity) { try flush() }
        if runCount == 0 { runStart = first }
        let slot = run + runCount * layout.slotSize
        runCount += count
        return slot
    }

    /// Refuses pages `first..<first + count` when they reach the fence, before anything of them is written.
    /// `FrozenCheckpointWriter.pageBound` counts every page a background checkpoint writes, so this never happens;
    /// if a miscount ever made it, the checkpoint fails (the old meta and the WAL stay the truth, and the value box
    /// recovers from them) instead of writing over values written once since its freeze.
    func checkBelowFence(_ first: UInt64, count: Int) throws(BoxwoodError) {
        guard first < fence, UInt64(count) <= fence - first else {
            throw .corrupted(file: file.path, page: first,
                             reason: "a background checkpoint reached its fence (page \(fence)); refused, so that values written since its freeze stay intact")
        }
    }

    /// Writes everything still queued.
    func flush() throws(BoxwoodError) {
        if runCount == 0 { return }
        try file.write(run, count: runCount * layout.slotSize, offset: layout.offset(of: runStart))
        bytesWritten += UInt64(runCount * layout.slotSize)
        runCount = 0
        onWrite?(bytesWritten)
    }
}
