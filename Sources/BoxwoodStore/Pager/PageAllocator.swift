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

    /// The first page new pages must never reach (`UInt64.max`: none): a background checkpoint's, past which values
    /// written once go while it runs (`FrozenCheckpointWriter.fence`).
    let fence: UInt64

    init(reusable: [UInt64] = [], firstNewPage: UInt64, fence: UInt64 = .max) {
        remainingReusable = reusable
        nextPage = firstNewPage
        self.fence = fence
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
        // `remainingReusable` is largest first: a run p, p+1, …, p+count-1 sits at indices i, i-1, …, i-count+1.
        var i = remainingReusable.count - 1
        while i >= count - 1 {
            let first = remainingReusable[i]
            var n = 1
            while n < count && remainingReusable[i - n] == first + UInt64(n) { n += 1 }
            if n == count {
                remainingReusable.removeSubrange((i - count + 1)...i)
                return first
            }
            i -= n
        }
        noRunOf = count
        return allocateConsecutive(count)
    }

    /// `count` consecutive new pages; returns the first.
    func allocateConsecutive(_ count: Int) -> UInt64 {
        // Invariant: `FrozenCheckpointWriter.pageBound` counts every page its checkpoint writes, so the new pages end
        // at the fence at the latest; passing it would write over values written once since the freeze.
        precondition(nextPage + UInt64(count) <= fence, "a background checkpoint outgrew its page bound")
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
