/// The decrypted pages of an encrypted data file, indexed by page number: filled by `Pager.diskPage` on first
/// touch, replaced when a checkpoint writes a page, and trimmed to a byte budget between operations. Each page is
/// held with the write tag it authenticated under (see `PageRef`): a lookup by a reference with another tag misses,
/// so a page is only ever served as the version its reference names.
///
/// Trimming is a CLOCK sweep: every hit marks its page referenced; the sweep frees pages not referenced since it
/// last passed and clears the mark of the others, until the cache is down to `trimTarget` of the budget (so that
/// the next trims are rare), keeping the pages that reads keep coming back to. Freed buffers are kept for the next
/// misses (held pages and spare buffers together stay within the budget), so that a cache that cycles does not
/// churn the allocator.
///
/// Invariant: a page pointer handed out stays valid until the next `trim`, `remove` or `removeAll`; the pager
/// calls those only between operations (or for a page no cursor can hold), so no cursor ever reads a freed page.
final class DecryptedPageCache {
    static let pageSize = PageLayout.pageSize
    /// A trim leaves the cache at this fraction of its budget.
    static let trimTarget = 0.75
    /// Spare buffers kept outside a trim (a checkpoint replacing pages, a page dropped).
    static let spareLimit = 256

    @exclusivity(unchecked) private var pages: [UnsafeMutableRawPointer?] = []
    @exclusivity(unchecked) private var referenced: [Bool] = []
    @exclusivity(unchecked) private var tags: [UInt32] = []
    @exclusivity(unchecked) private var spare: [UnsafeMutableRawPointer] = []
    @exclusivity(unchecked) private var hand = 0
    /// Pages held.
    @exclusivity(unchecked) private(set) var count = 0

    deinit { removeAll(keepingSpare: false) }

    /// The decrypted page `reference` names (its page number, with its write tag), or nil when it is not held.
    /// Marks it referenced.
    @inline(__always)
    func page(_ reference: UInt64) -> UnsafeRawPointer? {
        let page = reference.diskPageNumber
        guard page < UInt64(pages.count), let memory = pages[Int(page)], tags[Int(page)] == reference.writeTag else { return nil }
        referenced[Int(page)] = true
        return UnsafeRawPointer(memory)
    }

    /// True when page number `page` is held, whatever its tag (without marking it, unlike `page(_:)`).
    func holds(_ page: UInt64) -> Bool { page < UInt64(pages.count) && pages[Int(page)] != nil }

    /// A buffer for a page about to be decrypted (a spare one when there is one); hand it to `insert`, or to
    /// `discard` when decryption fails.
    func buffer() -> UnsafeMutableRawPointer {
        spare.popLast() ?? UnsafeMutableRawPointer.allocate(byteCount: DecryptedPageCache.pageSize, alignment: 16)
    }

    /// Gives back a buffer from `buffer()` that holds no page.
    func discard(_ memory: UnsafeMutableRawPointer) {
        if spare.count < DecryptedPageCache.spareLimit { spare.append(memory) } else { memory.deallocate() }
    }

    /// Holds `memory` (from `buffer()`) as the page `reference` names, replacing what was held for its number.
    func insert(_ memory: UnsafeMutableRawPointer, as reference: UInt64) {
        let index = Int(reference.diskPageNumber)
        if index >= pages.count {
            let grow = max(index - pages.count + 1, pages.count / 2)
            pages.append(contentsOf: repeatElement(nil, count: grow))
            referenced.append(contentsOf: repeatElement(false, count: grow))
            tags.append(contentsOf: repeatElement(0, count: grow))
        }
        if let old = pages[index] { discard(old) } else { count += 1 }
        pages[index] = memory
        referenced[index] = true
        tags[index] = reference.writeTag
    }

    /// Copies the plain page at `plain` in as the page `reference` names (a checkpoint just wrote it).
    func store(_ plain: UnsafeRawPointer, as reference: UInt64) {
        let memory = buffer()
        memory.copyMemory(from: plain, byteCount: DecryptedPageCache.pageSize)
        insert(memory, as: reference)
    }

    /// Drops page `page` (its bytes in the file changed).
    func remove(_ page: UInt64) {
        guard page < UInt64(pages.count), let memory = pages[Int(page)] else { return }
        pages[Int(page)] = nil
        count -= 1
        discard(memory)
    }

    /// Frees pages by the CLOCK sweep until at most `trimTarget` × `budget` bytes are held. False when nothing
    /// needed freeing.
    @discardableResult
    func trim(budget: Int) -> Bool {
        guard count * DecryptedPageCache.pageSize > budget else { return false }
        let target = Int(Double(budget) * DecryptedPageCache.trimTarget) / DecryptedPageCache.pageSize
        // Two passes at most: the first clears marks, the second frees what the first left unmarked.
        var steps = 0
        while count > target && steps < 2 * pages.count {
            if hand >= pages.count { hand = 0 }
            if let memory = pages[hand] {
                if referenced[hand] {
                    referenced[hand] = false
                } else {
                    pages[hand] = nil
                    count -= 1
                    spare.append(memory)
                }
            }
            hand += 1
            steps += 1
        }
        while (count + spare.count) * DecryptedPageCache.pageSize > budget, let memory = spare.popLast() { memory.deallocate() }
        return true
    }

    /// Frees every page (and, unless `keepingSpare`, the spare buffers).
    func removeAll(keepingSpare: Bool = true) {
        for index in pages.indices {
            if let memory = pages[index] { if keepingSpare { discard(memory) } else { memory.deallocate() } }
            pages[index] = nil
        }
        count = 0
        if !keepingSpare {
            for memory in spare { memory.deallocate() }
            spare.removeAll()
        }
    }

    /// The page number whose decrypted page holds `pointer`, for error reports (a linear search).
    func pageNumber(of pointer: UnsafeRawPointer) -> UInt64? {
        pages.firstIndex { $0.map { pointer >= UnsafeRawPointer($0) && pointer < UnsafeRawPointer($0) + DecryptedPageCache.pageSize } ?? false }
            .map { UInt64($0) }
    }
}
