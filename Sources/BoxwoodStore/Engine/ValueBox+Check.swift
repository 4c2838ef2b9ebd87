/// The result of ``ValueBox/check(progress:)``.
public struct CheckReport: Sendable, Equatable {
    /// Every problem found, in the order found (empty when the database is sound).
    public var problems: [String] = []
    /// Pages read and verified.
    public var pagesChecked = 0
    /// Entries visited across all tables.
    public var entriesChecked = 0

    /// True when no problem was found.
    public var isOK: Bool { problems.isEmpty }
}

/// How far a ``ValueBox/check(progress:)`` has got.
public struct CheckProgress: Sendable, Equatable {
    /// Pages read and verified so far.
    public let pagesChecked: Int
    /// Pages in the data file (uncheckpointed pages are checked too, so `pagesChecked` may end above it).
    public let pagesTotal: Int
}

/// Integrity check: every checksum, key order within and across pages, uniform leaf depth, overflow chains,
/// LZ4 payloads, per-table counts, and page accounting (every page of the file is exactly one of: meta,
/// tree, overflow, catalog, freelist, free).
extension ValueBox {
    /// Verifies the whole database. Problems are reported, not thrown; a thrown error means the check
    /// itself could not run (closed box, I/O error). `progress` is called every 256 pages and at the end.
    public func check(progress: ((CheckProgress) -> Void)? = nil) throws(BoxwoodError) -> CheckReport {
        let pinned = try enterRead()
        defer { exitRead(pinned) }
        var report = CheckReport()
        var owner: [UInt64: String] = [0: "meta", 1: "meta"]
        var usedTwice = Set<UInt64>()
        // The report is passed in (not captured): checkTree holds it inout while calling claim.
        // Returns false when the page must not be walked: outside the file, or reached before (by this or
        // another structure). Every page is walked at most once, so the check is linear in the pages even
        // when a forged file's branch pages form a DAG or a cycle; a page reached many times is reported once.
        func claim(_ reference: UInt64, _ what: String, _ report: inout CheckReport) -> Bool {
            let page = reference.diskPageNumber
            if !reference.isPageNumber(below: pager.pageCount) {
                report.problems.append("\(what): page \(page) is outside the file (\(pager.pageCount) pages)")
                return false
            } else if let previous = owner[page] {
                if usedTwice.insert(page).inserted {
                    report.problems.append("page \(page) is used twice: by \(previous) and by \(what)")
                }
                return false
            } else {
                owner[page] = what
                return true
            }
        }

        for (id, table) in state.tables.sorted(by: { $0.key < $1.key }) {
            checkTree(name: "table \(id)", root: table.root, keyType: table.keyType, expected: table, report: &report, claim: claim,
                      progress: progress)
        }
        let freeSpace = pager.freeSpace
        for page in freeSpace.catalogPages { _ = claim(page, "catalog", &report) }
        if meta.catalogRoot != 0 {
            do { _ = try pager.verifiedDiskPage(meta.catalogRoot) } catch { report.problems.append("catalog: \(error)") }
        }
        // The freelist is walked from the meta: its links are the disk references that name each page's version.
        var freelistPage = meta.freelistHead
        while freelistPage != 0, claim(freelistPage, "freelist", &report) {
            do {
                let p = try pager.verifiedDiskPage(freelistPage)
                report.pagesChecked += 1
                guard let list = FreelistPage(p) else { report.problems.append("freelist, page \(freelistPage.diskPageNumber): not a freelist page"); break }
                freelistPage = list.next
            } catch {
                report.problems.append("freelist: \(error)")
                break
            }
        }
        for page in freeSpace.freelistPages where owner[page] == nil {
            report.problems.append("freelist page \(page) is not on the chain the meta starts")
            owner[page] = "freelist"
        }
        for page in freeSpace.free { _ = claim(page, "free list entry", &report) }
        for page in freeSpace.released { _ = claim(page, "page freed since the last checkpoint", &report) }
        for page in freeSpace.frozenReleased { _ = claim(page, "page freed before the running background checkpoint", &report) }
        // Pages the running background checkpoint may be writing, below values written once past them meanwhile.
        for page in backgroundCheckpointReserve where page < pager.pageCount && owner[page] == nil { owner[page] = "background checkpoint" }
        if UInt64(owner.count) < pager.pageCount {
            let missing = (0..<pager.pageCount).filter { owner[$0] == nil }
            report.problems.append("\(missing.count) page(s) are neither used nor free (leaked), first: \(missing.prefix(8).map(String.init).joined(separator: ", "))")
        }
        if report.problems.count > 200 { report.problems = Array(report.problems.prefix(200)) + ["(more problems not shown)"] }
        progress?(CheckProgress(pagesChecked: report.pagesChecked, pagesTotal: Int(pager.pageCount)))
        return report
    }

    private func checkTree(name: String, root: PageRef, keyType: ValueBoxKeyType, expected: TableState,
                           report: inout CheckReport, claim: (UInt64, String, inout CheckReport) -> Bool,
                           progress: ((CheckProgress) -> Void)?) {
        var entries = 0
        var bytes = 0
        var leafDepth: Int? = nil
        // Uncheckpointed pages reached so far (checkpointed ones are claimed): a page reached twice is reported
        // and not walked again.
        var dirtySeen = Set<PageRef>()
        // (ref, depth, lower bound inclusive, upper bound exclusive)
        var stack: [(PageRef, Int, [UInt8]?, [UInt8]?)] = root == 0 ? [] : [(root, 0, nil, nil)]
        while let (ref, depth, lower, upper) = stack.popLast() {
            let where_ = ref.isDirtyRef ? "\(name), uncheckpointed page" : "\(name), page \(ref.diskPageNumber)"
            if ref.isDirtyRef {
                guard dirtySeen.insert(ref).inserted else { report.problems.append("\(where_): reached twice"); continue }
            } else if !claim(ref, name, &report) {
                continue
            }
            if depth > BTree.maxDepth { report.problems.append("\(where_): tree deeper than \(BTree.maxDepth)"); continue }
            let p: UnsafeRawPointer
            do { p = ref.isDirtyRef ? try pager.page(ref) : try pager.verifiedDiskPage(ref) } catch {
                report.problems.append("\(name): \(error)"); continue
            }
            report.pagesChecked += 1
            if let progress, report.pagesChecked & 255 == 0 {
                progress(CheckProgress(pagesChecked: report.pagesChecked, pagesTotal: Int(pager.pageCount)))
            }
            let type = PageType.raw(of: p)
            guard type == PageType.branch.rawValue || type == PageType.leaf.rawValue else {
                report.problems.append("\(where_): expected a tree page, found type \(type)"); continue
            }
            let leaf = type == PageType.leaf.rawValue
            // Checkpointed pages were validated (against the page count) by `verifiedDiskPage`.
            if ref.isDirtyRef, let reason = PageType.problem(p, pageCount: nil) { report.problems.append("\(where_): \(reason)"); continue }
            let n = leaf ? LeafPage(p).count : BranchPage(p).count
            let keyAt = { (i: Int) in leaf ? LeafPage(p).key(i) : BranchPage(p).key(i) }
            if n == 0 && (leaf ? ref != root : false) { report.problems.append("\(where_): empty leaf") }
            var previous: [UInt8]? = lower
            for i in 0..<n {
                let (k, kn) = keyAt(i)
                let key = Array(UnsafeRawBufferPointer(start: k, count: kn))
                if let previous, leaf || i > 0 || lower != nil {
                    let c = compare(previous, key)
                    if (i == 0 ? c > 0 : c >= 0) { report.problems.append("\(where_): key \(i) out of order"); break }
                }
                if let upper, compare(key, upper) >= 0 { report.problems.append("\(where_): key \(i) beyond its parent's bound"); break }
                if leaf && keyType == .int64 && kn != 8 { report.problems.append("\(where_): int64 key of \(kn) bytes") }
                previous = key
            }
            if leaf {
                if let d = leafDepth, d != depth { report.problems.append("\(where_): leaf at depth \(depth), others at \(d)") }
                leafDepth = leafDepth ?? depth
                for i in 0..<n {
                    let off = LeafPage(p).slot(i)
                    entries += 1
                    // Wrapping: forged lengths (each below 2^32) cannot trap the sum; it is only compared.
                    bytes &+= LeafPage.keyLength(p, off) + LeafValue.rawLength(p, off)
                    if let overflow = LeafValue.overflowReference(p, off), !overflow.isDirtyRef {
                        // Validated with the page (or copied from a validated one): at most the file's bytes.
                        let stored = Int(truncatingIfNeeded: load64(p, LeafValue.valueOffset(p, off) + 8))
                        checkOverflow(overflow, storedLength: stored, name: name, report: &report, claim: claim)
                    }
                    do { try LeafValue.read(pager, p, off).release() } catch { report.problems.append("\(where_): value \(i): \(error)") }
                }
            } else {
                let branch = BranchPage(p)
                let keyBytes = { (i: Int) in Array(UnsafeRawBufferPointer(start: branch.key(i).0, count: branch.key(i).1)) }
                for c in stride(from: n, through: 0, by: -1) {
                    stack.append((branch.child(c), depth + 1, c == 0 ? lower : keyBytes(c - 1), c == n ? upper : keyBytes(c)))
                }
            }
        }
        report.entriesChecked += entries
        if entries != expected.entries { report.problems.append("\(name): \(entries) entries, catalog says \(expected.entries)") }
        if bytes != expected.bytes { report.problems.append("\(name): \(bytes) bytes, catalog says \(expected.bytes)") }
    }

    private func checkOverflow(_ first: UInt64, storedLength: Int, name: String, report: inout CheckReport, claim: (UInt64, String, inout CheckReport) -> Bool) {
        if checkExtent(first, storedLength: storedLength, name: name, report: &report, claim: claim) { return }
        var page = first
        var total = 0
        while page != 0 {
            // A page claimed before (a loop, or a chain spliced into another) ends the walk.
            guard claim(page, "\(name) overflow", &report) else { return }
            let p: UnsafeRawPointer
            do { p = try pager.verifiedDiskPage(page) } catch { report.problems.append("\(name): \(error)"); return }
            report.pagesChecked += 1
            guard let overflow = OverflowPage(p) else {
                report.problems.append("\(name), page \(page.diskPageNumber): expected an overflow page"); return
            }
            total += overflow.payloadLength
            page = overflow.next
        }
        if total != storedLength { report.problems.append("\(name): overflow chain at \(first.diskPageNumber) holds \(total) bytes, cell says \(storedLength)") }
    }

    /// Checks the value at `first` when it is an extent (`ExtentPage`): re-verifies it whole, claims every page of it
    /// and compares its length with the cell's. Returns true when it did (or reported why it could not read the
    /// head), false when the value is a chain for `checkOverflow` to walk (an encrypted file holds no extents, nor
    /// does a value of one page).
    private func checkExtent(_ first: UInt64, storedLength: Int, name: String, report: inout CheckReport,
                             claim: (UInt64, String, inout CheckReport) -> Bool) -> Bool {
        guard !pager.layout.isEncrypted, storedLength > PageLayout.overflowPayload, first.isPageNumber(below: pager.pageCount) else { return false }
        let head: UnsafeRawPointer
        do { head = try pager.verifiedDiskPage(first) } catch {
            _ = claim(first, "\(name) overflow", &report)
            report.problems.append("\(name): \(error)")
            return true
        }
        guard PageType.raw(of: head) == PageType.extent.rawValue else { return false }
        let pages = ExtentPage.pageCount(forStored: ExtentPage.storedLength(head))
        for i in 0..<pages { guard claim(first + UInt64(i), "\(name) extent", &report) else { return true } }
        report.pagesChecked += pages
        if ExtentPage.storedLength(head) != storedLength {
            report.problems.append("\(name): extent at \(first) holds \(ExtentPage.storedLength(head)) bytes, cell says \(storedLength)")
        }
        return true
    }

    private func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { ra in b.withUnsafeBytes { rb in
            compareKeys(ra.baseAddress ?? UnsafeRawPointer(cellBuffer), ra.count, rb.baseAddress ?? UnsafeRawPointer(cellBuffer), rb.count)
        } }
    }

    // MARK: Statistics

    /// Whole-database figures (no I/O beyond what is already mapped).
    public func statistics() throws(BoxwoodError) -> DatabaseStatistics {
        let pinned = try enterRead()
        defer { exitRead(pinned) }
        return DatabaseStatistics(
            formatVersion: MetaPage.formatVersion, pageSize: PageLayout.pageSize, pagesTotal: pager.pageCount,
            pagesFree: UInt64(pager.freeSpace.freeOrReleasedCount), walBytes: wal?.size ?? 0,
            transactionStateVersion: state.version, checkpointGeneration: meta.generation, tables: try tableStatistics(),
            isEncrypted: pager.layout.isEncrypted, fileBytes: pager.layout.fileSize(pageCount: pager.pageCount),
            checkpointWaits: checkpointWaits, checkpointWaitNanoseconds: checkpointWaitNanoseconds)
    }

    /// Per-table figures, by ascending id.
    public func tableStatistics() throws(BoxwoodError) -> [TableStatistics] {
        let pinned = try enterRead()
        defer { exitRead(pinned) }
        return state.tables.sorted(by: { $0.key < $1.key }).map { id, s in
            TableStatistics(id: id, keyType: s.keyType, entries: s.entries, bytes: s.bytes)
        }
    }

    /// Every table as a descriptor, by ascending id.
    public func allTables() throws(BoxwoodError) -> [ValueBoxTable] {
        let pinned = try enterRead()
        defer { exitRead(pinned) }
        return state.tables.sorted(by: { $0.key < $1.key }).map { ValueBoxTable(id: $0.key, keyType: $0.value.keyType) }
    }
}
