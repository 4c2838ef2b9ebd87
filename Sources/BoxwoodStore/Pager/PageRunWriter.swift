/// Seals pages and writes them to a file, coalescing runs of consecutive page numbers into one write.
final class PageRunWriter {
    let file: StorageFile
    private let run: UnsafeMutableRawPointer
    private let runCapacity = 256
    private var runStart: UInt64 = 0
    private var runCount = 0
    /// Bytes handed to the file so far.
    private(set) var bytesWritten: UInt64 = 0

    init(file: StorageFile) {
        self.file = file
        run = UnsafeMutableRawPointer.allocate(byteCount: runCapacity * PageLayout.pageSize, alignment: 4096)
    }

    deinit { run.deallocate() }

    /// Seals `page` (its checksum, seeded with `number`) and queues it for writing as page `number`.
    func write(_ page: UnsafeMutableRawPointer, as number: UInt64) throws(BoxwoodError) {
        sealPage(page, pageNumber: number)
        if runCount > 0 && (number != runStart + UInt64(runCount) || runCount == runCapacity) { try flush() }
        if runCount == 0 { runStart = number }
        (run + runCount * PageLayout.pageSize).copyMemory(from: page, byteCount: PageLayout.pageSize)
        runCount += 1
    }

    /// Writes everything still queued.
    func flush() throws(BoxwoodError) {
        if runCount == 0 { return }
        try file.write(run, count: runCount * PageLayout.pageSize, offset: runStart * UInt64(PageLayout.pageSize))
        bytesWritten += UInt64(runCount * PageLayout.pageSize)
        runCount = 0
    }
}
