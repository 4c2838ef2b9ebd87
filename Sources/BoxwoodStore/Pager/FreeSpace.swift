/// The free space of the data file: which pages of the durable state (the newest meta's trees, catalog and
/// freelist) may be written over, and when. The one owner of that knowledge: transactions release pages here, a
/// checkpoint allocates from it and writes its next freelist from it, `check` and statistics read it.
///
/// Every page below the meta's page count (the two meta pages aside) is in exactly one of these states:
///
/// - used by the current state's trees (not recorded here);
/// - `free`: an entry of the durable freelist. The next checkpoint may write over it, unless a reader pins an
///   older snapshot that may still read it;
/// - `freelistPages` / `catalogPages`: holding the durable freelist or catalog. Every checkpoint writes new ones,
///   so these become free with it;
/// - `released`: a committed transaction stopped using it (copied it on write, or freed it). The durable meta
///   still references it, so it is reusable only after the next checkpoint, whose freelist includes it;
/// - released by the open transaction: like `released` once it commits; back in use if it aborts.
///
/// Values written once (`ValueBox+WrittenOnceValues.swift`) take their extents out of `free` when a transaction
/// writes them (`takeRun`), or past the page count, which then grows (`Pager.growPageCount`): from then on the
/// trees use those pages, as the WAL record that names them says. A transaction that aborts gives its extents back
/// to `free`, and so does replay for the pages between the page count and an extent that starts past it (an
/// aborted transaction's, which no record names). So `free` may hold pages past the durable meta's page count (never
/// past the pager's), and the durable freelist may list pages a WAL record after its meta uses: replaying that
/// record takes them out again (`takeLogged`), and the next checkpoint's freelist no longer has them.
///
/// A page is released at most once between checkpoints (`releasedBits`): in a sound file every page has one
/// parent, so a second release means a forged or damaged file references a page twice (a DAG, or two trees
/// sharing a page). That is refused, or the page would enter the freelist twice and two later pages would be
/// written over one.
final class FreeSpace {
    /// The durable freelist's entries, largest first (allocation takes the smallest).
    private(set) var free: [UInt64] = []
    /// The pages holding the durable freelist.
    private(set) var freelistPages: [UInt64] = []
    /// The pages of the durable catalog tree.
    private(set) var catalogPages: [UInt64] = []
    /// Pages committed transactions released since the last checkpoint.
    private(set) var released: [UInt64] = []
    /// Pages committed transactions released before a background checkpoint froze its state: that checkpoint's
    /// freelist holds them (see `BackgroundCheckpoint`). Empty when none runs.
    private(set) var frozenReleased: [UInt64] = []
    /// Pages the open transaction released.
    private var releasedByTransaction: [UInt64] = []
    /// Extents (first page, page count) the open transaction wrote values into.
    private var extentsOfTransaction: [(first: UInt64, pages: Int)] = []
    /// The shortest run `takeRun` found no free pages for since `free` last grew (`Int.max`: none).
    private var noRunOf = Int.max
    /// True from a background checkpoint's freeze to its install.
    private var isFrozen = false
    /// Extents that committed transactions wrote values into since the freeze (past the fence, see
    /// `ValueBox.backgroundCheckpointReserve`).
    private var extentsSinceFreeze: [(first: UInt64, pages: Int)] = []
    /// One bit per page of `released` and `releasedByTransaction`.
    private var releasedBits: [UInt64] = []

    /// Adopts the free space of a durable state: its freelist (entries and the pages holding them) and its
    /// catalog's pages. Nothing is released in a state just read or just written.
    func install(free: [UInt64], freelistPages: [UInt64], catalogPages: [UInt64]) {
        self.free = FreeSpace.largestFirst(free)
        self.freelistPages = freelistPages
        self.catalogPages = catalogPages
        released = []
        frozenReleased = []
        releasedByTransaction = []
        extentsOfTransaction = []
        noRunOf = Int.max
        isFrozen = false
        extentsSinceFreeze = []
        releasedBits.removeAll(keepingCapacity: true)
    }

    /// A background checkpoint froze the committed state (between transactions): what was released so far is its
    /// business; what commits release from now on waits for the checkpoint after it. The release bits stay: a page
    /// released before the freeze is referenced by nothing live, so it is never released again until the install.
    func freeze() {
        frozenReleased = released
        released = []
        isFrozen = true
        extentsSinceFreeze = []
    }

    /// Adopts the free space of the durable state a background checkpoint just wrote (its freelist, the pages
    /// holding it, its catalog's pages), keeping what commits released since the freeze, plus `alsoReleased`: the
    /// pages that checkpoint wrote for pages and values that commits after the freeze stopped using. The pages from
    /// the new meta's page count `metaPageCount` to the pager's `pageCount` that no committed extent uses (past the
    /// fence: the reserve the checkpoint did not need, aborted transactions' extents) are free too.
    func installAfterBackgroundCheckpoint(free: [UInt64], freelistPages: [UInt64], catalogPages: [UInt64], alsoReleased: [UInt64],
                                          metaPageCount: UInt64, pageCount: UInt64) {
        var free = free
        if pageCount > metaPageCount {
            var used = [Bool](repeating: false, count: Int(pageCount - metaPageCount))
            for extent in extentsSinceFreeze where extent.first >= metaPageCount {
                for i in 0..<extent.pages where extent.first + UInt64(i) < pageCount { used[Int(extent.first - metaPageCount) + i] = true }
            }
            // Largest first, ahead of the freelist's entries (pages of the new meta, below its page count).
            var gap: [UInt64] = []
            for (i, inUse) in used.enumerated().reversed() where !inUse { gap.append(metaPageCount + UInt64(i)) }
            free = gap + free
        }
        isFrozen = false
        extentsSinceFreeze = []
        self.free = FreeSpace.largestFirst(free)
        self.freelistPages = freelistPages
        self.catalogPages = catalogPages
        noRunOf = Int.max
        frozenReleased = []
        released.append(contentsOf: alsoReleased)
        releasedBits.removeAll(keepingCapacity: true)
        for page in released + releasedByTransaction {
            let word = Int(page >> 6)
            if word >= releasedBits.count {
                releasedBits.append(contentsOf: repeatElement(0, count: word - releasedBits.count + 1 + releasedBits.count / 2))
            }
            releasedBits[word] |= 1 << (page & 63)
        }
    }

    /// `pages` sorted largest first. A checkpoint's freelist comes sorted (`writeFreelist`), so the check is all the
    /// work an install does on its committing thread; anything else is sorted.
    private static func largestFirst(_ pages: [UInt64]) -> [UInt64] {
        var index = 1
        while index < pages.count, pages[index - 1] > pages[index] { index += 1 }
        return index >= pages.count ? pages : pages.sorted(by: >)
    }

    /// Records that the open transaction stopped using page `page` of the durable state. False when the page was
    /// released already since the last checkpoint (see the type's comment): the caller reports the damage.
    func release(_ page: UInt64) -> Bool {
        let word = Int(page >> 6)
        let bit: UInt64 = 1 << (page & 63)
        if word >= releasedBits.count {
            releasedBits.append(contentsOf: repeatElement(0, count: word - releasedBits.count + 1 + releasedBits.count / 2))
        }
        if releasedBits[word] & bit != 0 { return false }
        releasedBits[word] |= bit
        releasedByTransaction.append(page)
        return true
    }

    /// The open transaction committed: what it released waits for the next checkpoint; the extents it wrote are
    /// the trees' (its WAL record names them).
    func commitTransaction() {
        released.append(contentsOf: releasedByTransaction)
        releasedByTransaction.removeAll(keepingCapacity: true)
        if isFrozen { extentsSinceFreeze.append(contentsOf: extentsOfTransaction) }
        extentsOfTransaction.removeAll(keepingCapacity: true)
    }

    /// The open transaction aborted: what it released is in use again, and the extents it wrote are free (no record
    /// names them).
    func abortTransaction() {
        for page in releasedByTransaction {
            let word = Int(page >> 6)
            if word < releasedBits.count { releasedBits[word] &= ~(1 << (page & 63)) }
        }
        releasedByTransaction.removeAll(keepingCapacity: true)
        for extent in extentsOfTransaction { giveBack(extent.first, pages: extent.pages) }
        extentsOfTransaction.removeAll(keepingCapacity: true)
    }

    // MARK: Values written once

    /// Takes the lowest run of `count` consecutive free pages for an extent the open transaction writes; nil when
    /// `free` has none (the caller appends past the page count and records that with ``noteExtent(_:pages:)``).
    func takeRun(_ count: Int) -> UInt64? {
        if count >= noRunOf { return nil }
        guard let i = PageAllocator.lowestRun(of: count, inLargestFirst: free) else {
            noRunOf = count
            return nil
        }
        let first = free[i]
        free.removeSubrange((i - count + 1)...i)
        extentsOfTransaction.append((first, count))
        return first
    }

    /// The open transaction could not write the extent it took last: its pages are free again.
    func giveBackLastExtent() {
        guard let extent = extentsOfTransaction.popLast() else { return }
        giveBack(extent.first, pages: extent.pages)
    }

    /// Records that the open transaction wrote an extent of `pages` pages at `first`, past the page count.
    func noteExtent(_ first: UInt64, pages: Int) {
        extentsOfTransaction.append((first, pages))
    }

    /// A replayed record names the extent of `pages` pages at `first` in a file whose trees may use `pageCount`
    /// pages before it: its pages below the page count must be free (they leave `free`); the pages between the page
    /// count and an extent that starts past it are unused (an aborted transaction's) and join `free`. Returns the
    /// new page count, or nil when a page below the old one is not free (damage: a page the trees already use).
    func takeLogged(_ first: UInt64, pages: Int, pageCount: UInt64) -> UInt64? {
        let end = first + UInt64(pages)
        let below = min(end, pageCount)
        if first < below {
            // `free` is largest first and has no duplicates: the run's pages below the page count are free when
            // `below - 1` is at some index j and `first` at j + count - 1 (nothing else fits between them).
            guard let j = index(of: below - 1) else { return nil }
            let count = Int(below - first)
            guard j + count <= free.count, free[j + count - 1] == first else { return nil }
            free.removeSubrange(j..<(j + count))
        }
        if first > pageCount { giveBack(pageCount, pages: Int(first - pageCount)) }
        return max(pageCount, end)
    }

    /// The index of `page` in `free`, if there.
    private func index(of page: UInt64) -> Int? {
        // `free` is sorted largest first.
        var low = 0, high = free.count
        while low < high {
            let mid = (low + high) / 2
            if free[mid] > page { low = mid + 1 } else { high = mid }
        }
        return low < free.count && free[low] == page ? low : nil
    }

    /// Puts `pages` pages from `first` back into `free`.
    private func giveBack(_ first: UInt64, pages: Int) {
        guard pages > 0 else { return }
        free.append(contentsOf: (0..<UInt64(pages)).map { first + $0 })
        free.sort(by: >)
        noRunOf = Int.max
    }

    /// Pages free now or after the next checkpoint (statistics, compaction's report).
    var freeOrReleasedCount: Int { free.count + frozenReleased.count + released.count }

    /// The next checkpoint's freelist: `stillFree` (what stays free of the durable freelist after the checkpoint
    /// took pages from it), plus every page the durable state uses that the checkpoint's state does not — the
    /// released pages, the old catalog and the old freelist's pages.
    func nextFreelist(stillFree: [UInt64]) -> [UInt64] {
        stillFree + released + catalogPages + freelistPages
    }

    /// True when checkpoints can shorten a file of `pageCount` pages: its last page is free in the durable meta
    /// (the next checkpoint cuts it off), or it holds the freelist or catalog, which every checkpoint rewrites into
    /// the lowest free pages (so the one after next can cut it off).
    func hasFreeTail(pageCount: UInt64) -> Bool {
        guard let largestFree = free.first else { return false }
        let last = pageCount - 1
        return largestFree == last || freelistPages.contains(last) || catalogPages.contains(last)
    }
}

extension FreeSpace {
    /// Where a checkpoint that moves pages toward the start of the file (`BTree.relocatePages`) should draw the
    /// line in a file of `pageCount` pages: the lowest page number `boundary` such that the pages the durable state
    /// uses at or past it (`movable` of them could move), plus `pagesToWrite` (the checkpoint's other pages) and
    /// `pathCopies` (parents copied along with the moved pages), fit in the durable free pages below it. Every
    /// page at or past the line is then free after that checkpoint — the released pages, the old catalog and
    /// freelist pages are — so the next checkpoint can cut the file there. Nil when the line would gain fewer than
    /// `minimumGain` pages.
    func relocationBoundary(pageCount: UInt64, pagesToWrite: Int, pathCopies: Int, minimumGain: UInt64) -> UInt64? {
        guard pageCount > 2 else { return nil }
        var durableFree = [Bool](repeating: false, count: Int(pageCount))
        var freeAfter = [Bool](repeating: false, count: Int(pageCount))
        for page in free where page < pageCount { durableFree[Int(page)] = true; freeAfter[Int(page)] = true }
        for list in [released, catalogPages, freelistPages] {
            for page in list where page < pageCount { freeAfter[Int(page)] = true }
        }
        var freeBelow = free.count
        var usedAbove = 0
        var boundary = pageCount
        while boundary > 2 {
            let page = Int(boundary - 1)
            var nextFreeBelow = freeBelow
            var nextUsedAbove = usedAbove
            if durableFree[page] { nextFreeBelow -= 1 } else if !freeAfter[page] { nextUsedAbove += 1 }
            if nextUsedAbove + min(nextUsedAbove, pathCopies) + pagesToWrite > nextFreeBelow { break }
            freeBelow = nextFreeBelow
            usedAbove = nextUsedAbove
            boundary -= 1
        }
        return pageCount - boundary >= minimumGain && usedAbove > 0 ? boundary : nil
    }
}
