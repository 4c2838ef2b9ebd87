/// Page numbers for pages about to be written: first the reusable pages it was given (free in the durable state;
/// the smallest first), then new pages past the end of the file. A checkpoint allocates from the durable freelist;
/// a compaction, writing a new file, only new pages.
final class PageAllocator {
    /// Reusable pages not handed out yet, largest first.
    private(set) var remainingReusable: [UInt64]
    /// The first page number past everything allocated so far.
    private(set) var nextPage: UInt64
    /// The shortest run `allocateRun` found no reusable pages for (`Int.max`: none yet).
    private var noRunOf = Int.max

    init(reusable: [UInt64] = [], firstNewPage: UInt64) {
        remainingReusable = reusable
        nextPage = firstNewPage
    }

    /// One page: the smallest reusable one, else a new one.
    func allocate() -> UInt64 {
        if let page = remainingReusable.popLast() { return page }
        return allocateConsecutive(1)
    }

    /// `count` consecutive pages (an extent, `ExtentPage`); returns the first. The lowest run of `count` consecutive
    /// reusable pages (first fit, from the smallest page numbers), else new pages past the end of the file.
    func allocateRun(_ count: Int) -> UInt64 {
        if count <= 1 { return allocate() }
        // Reusable pages are only taken, never added: once no run of `count` exists, none of `count` or more will.
        if count >= noRunOf { return allocateConsecutive(count) }
        if let i = PageAllocator.lowestRun(of: count, inLargestFirst: remainingReusable) {
            let first = remainingReusable[i]
            remainingReusable.removeSubrange((i - count + 1)...i)
            return first
        }
        noRunOf = count
        return allocateConsecutive(count)
    }

    /// Where the lowest run of `count` (> 1) consecutive page numbers sits in `pages`, sorted largest first and
    /// without duplicates: the index `i` of its first (smallest) page, the run being `pages[(i - count + 1)...i]`
    /// (p, p+1, …, p+count-1 at indices i, i-1, …). nil when there is none.
    static func lowestRun(of count: Int, inLargestFirst pages: [UInt64]) -> Int? {
        var i = pages.count - 1
        while i >= count - 1 {
            let first = pages[i]
            var n = 1
            while n < count && pages[i - n] == first + UInt64(n) { n += 1 }
            if n == count { return i }
            i -= n
        }
        return nil
    }

    /// `count` consecutive new pages; returns the first.
    func allocateConsecutive(_ count: Int) -> UInt64 {
        defer { nextPage += UInt64(count) }
        return nextPage
    }

    /// Stops the file at the last page in use: drops the reusable pages that form its tail.
    func dropFreeTail() {
        var dropped = 0
        while dropped < remainingReusable.count && remainingReusable[dropped] + 1 == nextPage && nextPage > 2 {
            dropped += 1
            nextPage -= 1
        }
        remainingReusable.removeFirst(dropped)
    }
}
