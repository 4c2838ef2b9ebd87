/// Typed views of the two kinds of page that form chains — overflow pages (a value too large for a leaf) and
/// freelist pages — over their memory. Both have the common 32-byte header (`PageLayout`) whose `link` is the
/// next page of the chain (0 ends it) and whose `aux` counts what the page holds; the body follows.
///
/// A view of a page from disk is made after the pager verified it (`Pager.diskPage`: checksum, then `problem` below
/// through `PageType.problem`: `aux` fits the page and `link` is a page number of the file), so what it reads stays
/// inside the page. Writing goes through `write`, which fills a whole page (unused bytes zero).

/// Why the chain page at `p` (overflow or freelist) read from a file of `pageCount` pages is malformed, or nil:
/// `aux` counts at most `capacity` items, and `link` is 0 (the end of the chain) or a page of the file.
private func chainPageProblem(_ p: UnsafeRawPointer, capacity: Int, what: String, pageCount: UInt64?) -> String? {
    let held = load64(p, PageLayout.auxOffset)
    if held > UInt64(capacity) { return "\(what) \(held)" }
    let next = load64(p, PageLayout.linkOffset)
    guard let pageCount, next != 0, !next.isPageNumber(below: pageCount) else { return nil }
    return "next page \(next) is not a page of the file (\(pageCount) pages)"
}

/// Zeroes `page` and writes the header of a chain page of `type` holding `count` items, linked to `next`.
private func writeChainHeader(_ page: UnsafeMutableRawPointer, _ type: PageType, next: UInt64, count: Int) {
    page.initializeMemory(as: UInt8.self, repeating: 0, count: PageLayout.pageSize)
    page.storeBytes(of: type.rawValue, toByteOffset: PageLayout.typeOffset, as: UInt8.self)
    store64(page, PageLayout.linkOffset, next)
    store64(page, PageLayout.auxOffset, UInt64(count))
}

/// An overflow page: `aux` payload bytes (at most `PageLayout.overflowPayload`) after the header.
struct OverflowPage {
    let memory: UnsafeRawPointer

    /// The page at `memory` as an overflow page; nil when it is a page of another type.
    init?(_ memory: UnsafeRawPointer) {
        guard memory.load(fromByteOffset: PageLayout.typeOffset, as: UInt8.self) == PageType.overflow.rawValue else { return nil }
        self.memory = memory
    }

    /// Why the overflow page at `p`, read from a file of `pageCount` pages (nil: made in memory), is malformed; nil
    /// when it is sound (`PageType.problem` calls this for every overflow page the pager reads).
    static func problem(_ p: UnsafeRawPointer, pageCount: UInt64?) -> String? {
        chainPageProblem(p, capacity: PageLayout.overflowPayload, what: "overflow payload length", pageCount: pageCount)
    }

    /// The next page of the value's chain; 0 on its last page.
    var next: UInt64 { load64(memory, PageLayout.linkOffset) }
    /// The payload bytes this page holds (full on every page but the last).
    var payloadLength: Int { Int(load64(memory, PageLayout.auxOffset)) }
    /// The payload.
    var payload: UnsafeRawPointer { memory + PageLayout.headerSize }

    /// The pages a value of `count` stored bytes takes (at least one, also for an empty value).
    static func pagesNeeded(for count: Int) -> Int {
        max(1, (count + PageLayout.overflowPayload - 1) / PageLayout.overflowPayload)
    }

    /// Writes an overflow page holding `count` bytes (at most `PageLayout.overflowPayload`) of `payload` into `page`,
    /// linked to `next`.
    static func write(_ page: UnsafeMutableRawPointer, next: UInt64, payload: UnsafeRawPointer, count: Int) {
        writeChainHeader(page, .overflow, next: next, count: count)
        if count > 0 { (page + PageLayout.headerSize).copyMemory(from: payload, byteCount: count) }
    }

    /// Writes `count` bytes at `bytes` as a chain of overflow pages numbered by `allocate`, each page through
    /// `write` (a page buffer and its number); returns the pages' numbers in chain order.
    static func writeChain(_ bytes: UnsafeRawPointer, count: Int, allocate: () -> UInt64,
                           write: (UnsafeMutableRawPointer, UInt64) throws(BoxwoodError) -> Void) throws(BoxwoodError) -> [UInt64] {
        let pageCount = pagesNeeded(for: count)
        var numbers: [UInt64] = []
        numbers.reserveCapacity(pageCount)
        for _ in 0..<pageCount { numbers.append(allocate()) }
        let page = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
        defer { page.deallocate() }
        for i in 0..<pageCount {
            let start = i * PageLayout.overflowPayload
            let n = min(PageLayout.overflowPayload, count - start)
            Self.write(page, next: i + 1 < pageCount ? numbers[i + 1] : 0, payload: bytes + start, count: n)
            try write(page, numbers[i])
        }
        return numbers
    }
}

/// A freelist page: `aux` page numbers (u64 each, at most `PageLayout.freelistEntriesPerPage`) after the header.
struct FreelistPage {
    let memory: UnsafeRawPointer

    /// The page at `memory` as a freelist page; nil when it is a page of another type.
    init?(_ memory: UnsafeRawPointer) {
        guard memory.load(fromByteOffset: PageLayout.typeOffset, as: UInt8.self) == PageType.freelist.rawValue else { return nil }
        self.memory = memory
    }

    /// Why the freelist page at `p`, read from a file of `pageCount` pages (nil: made in memory), is malformed; nil
    /// when it is sound (`PageType.problem` calls this for every freelist page the pager reads).
    static func problem(_ p: UnsafeRawPointer, pageCount: UInt64?) -> String? {
        chainPageProblem(p, capacity: PageLayout.freelistEntriesPerPage, what: "freelist entry count", pageCount: pageCount)
    }

    /// The next page of the freelist; 0 on its last page.
    var next: UInt64 { load64(memory, PageLayout.linkOffset) }
    /// The free page numbers this page holds.
    var entryCount: Int { Int(load64(memory, PageLayout.auxOffset)) }
    /// Free page number `i` (`i < entryCount`).
    func entry(_ i: Int) -> UInt64 { load64(memory, PageLayout.headerSize + 8 * i) }

    /// The pages a freelist of `count` entries takes.
    static func pagesNeeded(for count: Int) -> Int {
        (count + PageLayout.freelistEntriesPerPage - 1) / PageLayout.freelistEntriesPerPage
    }

    /// Writes a freelist page holding `entries` (at most `PageLayout.freelistEntriesPerPage`) into `page`, linked
    /// to `next`.
    static func write(_ page: UnsafeMutableRawPointer, next: UInt64, entries: ArraySlice<UInt64>) {
        writeChainHeader(page, .freelist, next: next, count: entries.count)
        for (j, entry) in entries.enumerated() { store64(page, PageLayout.headerSize + 8 * j, entry) }
    }
}
