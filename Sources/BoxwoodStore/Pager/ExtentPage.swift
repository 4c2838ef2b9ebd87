/// An extent: a value of more than one overflow page's payload stored in consecutive pages of a plain file, so
/// that its bytes are contiguous in the file and in the mapping and a read can lend them in place (see
/// docs/file-format.md, "Extents").
///
/// The first page (the extent's head) carries the common 32-byte header — type `PageType.extent`, `link` 0,
/// `aux` the stored length — and the value's first bytes; the value goes on without any header through the next
/// `pageCount(forStored:) - 1` pages, the last one zero-filled after it. The head's checksum covers the whole
/// extent (bytes 8..<pages × 4096 from the head, seed: the head's page number), so the pager verifies every
/// byte of the value the first time the head is touched (`Pager.diskPage`) and sets the head's verified bit
/// only; the other pages are never verified as pages (a reference into the middle of an extent fails its page
/// checksum, as any damaged pointer does).
///
/// Encrypted files never hold extents: every page is sealed in a slot of its own, so a value there stays an
/// overflow chain (`ExtentPage.holds`), and a decrypted page of this type is refused (`Pager.decryptPage`).
enum ExtentPage {
    /// True when a value of `count` stored bytes is written as an extent in a file with `layout`: more than one
    /// overflow page's payload, in a plain file.
    static func holds(_ count: Int, layout: DataFileLayout) -> Bool {
        count > PageLayout.overflowPayload && !layout.isEncrypted
    }

    /// The pages an extent of `count` stored bytes takes (its header included).
    static func pageCount(forStored count: Int) -> Int {
        (PageLayout.headerSize + count + PageLayout.pageSize - 1) / PageLayout.pageSize
    }

    /// The stored length an extent head at `p` records (`aux`; validated by `problem` once the head is verified).
    static func storedLength(_ p: UnsafeRawPointer) -> Int { Int(load64(p, PageLayout.auxOffset)) }

    /// The value's first byte, in the head at `p`.
    static func bytes(_ p: UnsafeRawPointer) -> UnsafeRawPointer { p + PageLayout.headerSize }

    /// The stored length an unverified head at `p` claims, when the extent it describes lies within a file of
    /// `pageCount` pages from page `head`: the pager checks this before hashing the extent, so the hash stays inside
    /// the mapping. nil when it cannot (the head is then damaged: its checksum cannot match in any case).
    static func claimedPages(_ p: UnsafeRawPointer, head: UInt64, pageCount filePages: UInt64) -> Int? {
        let stored = load64(p, PageLayout.auxOffset)
        guard stored > UInt64(PageLayout.overflowPayload), stored <= LeafValue.maxValueLength else { return nil }
        let pages = pageCount(forStored: Int(stored))
        guard head < filePages, UInt64(pages) <= filePages - head else { return nil }
        return pages
    }

    /// The checksum of the extent of `pages` pages whose head is at `p`, page number `head`.
    static func checksum(_ p: UnsafeRawPointer, pages: Int, head: UInt64) -> UInt64 {
        XXH64.hash(p + 8, pages * PageLayout.pageSize - 8, seed: head)
    }

    /// Why the verified extent head at `p` is malformed, or nil (`PageType.problem` calls this for every extent head
    /// the pager reads; the pager checked the run against the file before its checksum, `claimedPages`).
    static func problem(_ p: UnsafeRawPointer, pageCount: UInt64?) -> String? {
        let stored = load64(p, PageLayout.auxOffset)
        if stored <= UInt64(PageLayout.overflowPayload) || stored > LeafValue.maxValueLength { return "extent of \(stored) stored bytes" }
        if load64(p, PageLayout.linkOffset) != 0 { return "extent head with a link" }
        return nil
    }

    /// Lays out the extent of `count` bytes at `value` whose head is page `head` in `buffer` (at least
    /// `pageCount(forStored: count)` pages): header, value, zero tail, and the checksum.
    static func build(_ buffer: UnsafeMutableRawPointer, head: UInt64, value: UnsafeRawPointer, count: Int) {
        let pages = pageCount(forStored: count)
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: PageLayout.headerSize)
        buffer.storeBytes(of: PageType.extent.rawValue, toByteOffset: PageLayout.typeOffset, as: UInt8.self)
        store64(buffer, PageLayout.auxOffset, UInt64(count))
        (buffer + PageLayout.headerSize).copyMemory(from: value, byteCount: count)
        let end = PageLayout.headerSize + count
        (buffer + end).initializeMemory(as: UInt8.self, repeating: 0, count: pages * PageLayout.pageSize - end)
        store64(buffer, PageLayout.checksumOffset, checksum(buffer, pages: pages, head: head))
    }
}

extension PageRunWriter {
    /// Writes the extent of the `count` bytes at `value` whose head is page `head` (a plain file, see
    /// `ExtentPage.holds`): laid out straight into the queued run when it fits one, so that consecutive extents and
    /// pages go to the file in one write, else on its own through `large`.
    func writeExtent(_ value: UnsafeRawPointer, count: Int, head: UInt64, large: ExtentWriter) throws(BoxwoodError) {
        if let room = try reserve(ExtentPage.pageCount(forStored: count), from: head) {
            ExtentPage.build(room, head: head, value: value, count: count)
        } else {
            // (`reserve` checked the pages against the fence.)
            try large.write(value, count: count, head: head, to: file, layout: layout)
        }
    }
}

/// Writes extents (`ExtentPage`) too long for a `PageRunWriter`'s run to a plain file: each one laid out in a buffer
/// it keeps and handed to the file in one write. The pages are allocated by the caller (consecutive).
final class ExtentWriter {
    private var buffer: UnsafeMutableRawPointer?
    private var capacity = 0
    /// Bytes handed to the file so far.
    private(set) var bytesWritten: UInt64 = 0

    init() {}

    deinit { buffer?.deallocate() }

    /// Writes the `count` bytes at `value` as the extent whose head is page `head` of `file` (a plain file: see
    /// `ExtentPage.holds`); returns the checksum its head carries.
    @discardableResult
    func write(_ value: UnsafeRawPointer, count: Int, head: UInt64, to file: StorageFile, layout: DataFileLayout) throws(BoxwoodError) -> UInt64 {
        guard !layout.isEncrypted else {
            throw .corrupted(file: file.path, page: head, reason: "an extent cannot be written to an encrypted file")
        }
        let size = ExtentPage.pageCount(forStored: count) * PageLayout.pageSize
        if size > capacity {
            buffer?.deallocate()
            buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 4096)
            capacity = size
        }
        let buffer = buffer.unsafelyUnwrapped
        ExtentPage.build(buffer, head: head, value: value, count: count)
        // A buffer grown past `keptCapacity` (one huge value) is not kept: the writer lives as long as its value box.
        defer {
            if capacity > ExtentWriter.keptCapacity {
                buffer.deallocate()
                self.buffer = nil
                capacity = 0
            }
        }
        try file.write(buffer, count: size, offset: layout.offset(of: head))
        bytesWritten += UInt64(size)
        return load64(buffer, PageLayout.checksumOffset)
    }

    /// The largest buffer kept between writes.
    static let keptCapacity = 4 << 20
}
