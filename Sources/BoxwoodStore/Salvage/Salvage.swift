import BoxwoodPlatform
import SystemPackage

/// Salvage: copy every entry that can still be read out of a damaged database into a new one (issue 27, item 4).
///
/// The source is opened read-only by path — no `ValueBox` is opened on it, nothing is written to its directory
/// (no header, no lock) — and read page by page; each page is believed only when its checksum and structure hold
/// (`PageType.problem`). The rules (docs/file-format.md, "Salvage"):
///
/// 1. **Meta.** The valid meta page with the higher generation. When the WAL's header carries a salt that neither
///    it nor the meta one generation older has, the WAL proves a newer checkpoint whose meta page is lost: the
///    older (consistent) checkpoint is salvaged, the WAL is not replayed, and the report says so.
/// 2. **Trees.** The catalog and then every table's tree are walked from their roots with the key range each page
///    must hold (from its parents' separators). A page that fails its checksum, its structure or its key range is
///    lost; only its subtree is skipped, and its key range is remembered as a gap of that table.
/// 3. **Orphans.** Pages carry no table id and no generation, and a free page may hold an old version of a leaf
///    (a stale copy-on-write page). So orphan pages — sound branch or leaf pages no walk reached — are used only
///    when the freelist was read whole, and only pages of the live state: below the meta's page count, not free,
///    not a freelist page. By the page accounting every such page belongs to a tree of this checkpoint, under a
///    damaged page. Each orphan subtree (an orphan no orphan branch points to, with what hangs below it) goes to a
///    table only when exactly one gap of one table holds all its keys (and an int64 table's keys are 8 bytes);
///    only its keys inside that gap and absent from the destination are taken. When the catalog itself is
///    damaged (tables unknown), a subtree goes to table T only when it holds a page of T's tree at the previous
///    checkpoint (a page alive in both checkpoints was not rewritten in between, so it still belongs to T) and no
///    other table's. Anything else is reported as unattributed and not recovered.
/// 4. **Values.** An overflow value is read whole through its chain; when a page of the chain (or its LZ4 block)
///    is damaged, the entry is lost and reported, never written truncated.
/// 5. **WAL.** The intact prefix of the log (the salvaged meta's salt, consecutive sequences, both checksums) is
///    replayed on top, one destination commit per record, through the engine's replay path. Damage with intact
///    records after it is reported as lost commits; a torn tail is not a loss.
///
/// The destination is written into a new sibling directory (`DEST.salvage-XXXXXXXX`), closed (checkpointed and
/// synced), and renamed to `DEST`, so an interrupted salvage never leaves a half-written `DEST`.
extension ValueBox {
    /// Salvages the database at `source` into a new database at `destination` and reports what was recovered and
    /// what was lost (see ``SalvageReport``). Nothing is written to `source`.
    ///
    /// Throws ``BoxwoodError/notABoxwoodDatabase(path:reason:)`` when `source` is not a database directory or
    /// its data file holds neither a meta page nor a single sound page; ``BoxwoodError/destinationExists(path:)``
    /// when `destination` exists (nothing is written); `.io` with `EINVAL` when
    /// `destination` lies inside `source`; `.unsupportedFormatVersion` when the only meta page is of a newer
    /// format; and the destination's own errors (a full disk…), after removing the unfinished copy.
    /// `progress` is called every 256 pages read and at the end.
    public static func salvage(from source: String, to destination: String,
                               progress: ((SalvageProgress) -> Void)? = nil) throws(BoxwoodError) -> SalvageReport {
        let fileSystem = PosixFileSystem.shared
        let source = trimmingTrailingSlashes(source)
        let destination = trimmingTrailingSlashes(destination)
        if fileSystem.kind(of: destination) != nil { throw .destinationExists(path: destination) }
        if destination == source || destination.hasPrefix(source == "/" ? "/" : source + "/") {
            throw .io(operation: "salvage into the source directory", path: destination, errno: Errno.invalidArgument.rawValue)
        }
        let salvager = try Salvager(source: source, progress: progress)
        defer { salvager.close() }
        try salvager.checkIsDatabase()

        var temporary = ""
        repeat {
            let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
            temporary = destination + ".salvage-" + String(repeating: "0", count: 8 - suffix.count) + suffix
        } while fileSystem.kind(of: temporary) != nil
        let writer: SalvageWriter
        do {
            writer = try SalvageWriter(path: temporary)
        } catch {
            removeSalvageDirectory(temporary)
            throw error
        }
        do throws(BoxwoodError) {
            try salvager.run(into: writer)
            try writer.finish()
            try fileSystem.syncDirectory(temporary)
            // Checked again just before the rename (which would replace an empty directory made meanwhile).
            if fileSystem.kind(of: destination) != nil { throw .destinationExists(path: destination) }
            try fileSystem.rename(temporary, to: destination)
            do {
                try fileSystem.syncDirectory(parentDirectory(of: destination))
            } catch {
                // The rename may not be durable: take it back, so that a failed salvage never leaves a destination.
                try? fileSystem.rename(destination, to: temporary)
                throw error
            }
        } catch {
            writer.abandon()
            removeSalvageDirectory(temporary)
            throw error
        }
        return salvager.report
    }

    /// Removes an unfinished destination: the files a value box makes, then the (then empty) directory.
    private static func removeSalvageDirectory(_ path: String) {
        for name in [dataFileName, walFileName, headerFileName, compactionFileName] {
            try? PosixFileSystem.shared.removeFile(path + "/" + name)
        }
        try? PosixFileSystem.shared.removeDirectory(path)
    }
}

/// Lower (inclusive) and upper (exclusive) key bounds of a page; nil: unbounded.
struct SalvageBounds {
    var lower: [UInt8]?
    var upper: [UInt8]?

    static let all = SalvageBounds(lower: nil, upper: nil)

    /// True when every key from `low` to `high` lies inside.
    func holds(_ low: [UInt8], _ high: [UInt8]) -> Bool {
        if let lower, compareKeyArrays(low, lower) < 0 { return false }
        if let upper, compareKeyArrays(high, upper) >= 0 { return false }
        return true
    }

    func holds(_ key: UnsafeRawPointer, _ length: Int) -> Bool {
        if let lower, lower.withUnsafeBytes({ compareKeys(key, length, $0.baseAddress ?? key, $0.count) }) < 0 { return false }
        if let upper, upper.withUnsafeBytes({ compareKeys(key, length, $0.baseAddress ?? key, $0.count) }) >= 0 { return false }
        return true
    }
}

func compareKeyArrays(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.withUnsafeBytes { ra in
        b.withUnsafeBytes { rb in
            let base = UnsafeRawPointer(bitPattern: 1)!  // never read: both lengths are 0 when an address is missing
            return compareKeys(ra.baseAddress ?? base, ra.count, rb.baseAddress ?? base, rb.count)
        }
    }
}

/// One bit per page.
struct PageBitmap {
    private var words: [UInt64]
    let count: UInt64

    init(count: UInt64) {
        self.count = count
        words = Array(repeating: 0, count: Int((count + 63) / 64))
    }

    func contains(_ page: UInt64) -> Bool { page < count && words[Int(page >> 6)] & (1 << (page & 63)) != 0 }

    /// Sets the bit; false when it was set already (or the page is out of range).
    @discardableResult
    mutating func insert(_ page: UInt64) -> Bool {
        guard page < count, !contains(page) else { return false }
        words[Int(page >> 6)] |= 1 << (page & 63)
        return true
    }
}

/// The state of one salvage: the source's files, what has been read, and the report being built.
final class Salvager {
    let sourcePath: String
    let dataPath: String
    let walPath: String
    let file: StorageFile
    /// Whole pages in the data file.
    let filePages: UInt64
    /// Maps the source read-only and verifies each page once (checksum, then `PageType.problem`).
    let pager: Pager
    let progress: ((SalvageProgress) -> Void)?
    var report = SalvageReport()

    private var writer: SalvageWriter!
    private var meta: MetaPage?
    private var otherSlot: MetaPage.DecodeResult?
    private var slots: [MetaPage.DecodeResult] = []
    /// Pages a walk has reached (trees, catalog, overflow chains, freelist).
    private var claimed: PageBitmap
    /// Free pages and freelist pages of the salvaged meta; nil when the freelist could not be read whole.
    private var notLive: PageBitmap?
    private var gaps: [Gap] = []
    private var tables: [Int32: SalvageReport.Table] = [:]

    /// The key range of a lost page of a table (nil: of the catalog).
    struct Gap {
        let table: Int32?
        let bounds: SalvageBounds
        let page: UInt64
    }

    init(source: String, progress: ((SalvageProgress) -> Void)?) throws(BoxwoodError) {
        let fileSystem = PosixFileSystem.shared
        sourcePath = source
        dataPath = source + "/" + ValueBox.dataFileName
        walPath = source + "/" + ValueBox.walFileName
        self.progress = progress
        switch fileSystem.kind(of: source) {
        case nil: throw .notABoxwoodDatabase(path: source, reason: "no such directory")
        case .regular?, .other?: throw .notABoxwoodDatabase(path: source, reason: "not a directory (a Boxwood database is a directory holding 'data' and 'wal')")
        case .directory?: break
        }
        guard fileSystem.kind(of: dataPath) != nil else { throw .notABoxwoodDatabase(path: source, reason: "no data file") }
        file = try fileSystem.open(dataPath, create: false, readOnly: true)
        let size: UInt64
        do { size = try file.size() } catch { file.close(); throw error }
        // Salvage reads pages that may not authenticate one by one; it does not take a key yet, so an encrypted
        // database (its header is in the clear) is refused by name rather than scanned as ciphertext.
        let first: (bytes: [UInt8], count: Int)
        do { first = try EncryptionHeader.readBlock(of: file) } catch { file.close(); throw error }
        if EncryptionHeader.looksLikeHeader(first.bytes, count: first.count) {
            file.close()
            throw .encryptionKeyRequired(path: dataPath)
        }
        filePages = min(size / UInt64(PageLayout.pageSize), MetaPage.pageCountLimit)
        pager = Pager(file: file, layout: DataFileLayout(), validatePage: { page, pageCount in PageType.problem(page, pageCount: pageCount) })
        pager.pageCount = max(filePages, 2)
        claimed = PageBitmap(count: filePages)
        report.pagesInFile = filePages
        if filePages > 2 {
            do { try pager.ensureMapped(pages: filePages) } catch { file.close(); throw error }
        }
    }

    func close() { file.close() }

    // MARK: Pages

    enum PageRead {
        case page(UnsafeRawPointer)
        case damaged(String)
    }

    /// Page `n`, verified; or why it cannot be used.
    private func read(_ n: UInt64) -> PageRead {
        report.pagesRead += 1
        if report.pagesRead & 255 == 0 { reportProgress() }
        guard n.isPageNumber(below: filePages) else { return .damaged("not a page of the file (\(filePages) pages)") }
        do {
            return .page(try pager.diskPage(n))
        } catch {
            switch error {
            case .checksumMismatch: return .damaged("checksum mismatch")
            case let .corrupted(_, _, reason): return .damaged(reason)
            default: return .damaged(error.description)
            }
        }
    }

    private func reportProgress() {
        progress?(SalvageProgress(pagesRead: report.pagesRead, pagesTotal: Int(filePages), entriesRecovered: writer?.entriesWritten ?? 0))
    }

    // MARK: Meta

    /// Reads both meta slots. Throws when the file is no Boxwood database at all: no slot carries the magic and
    /// no page passes its checksum and structure checks.
    func checkIsDatabase() throws(BoxwoodError) {
        let page = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
        defer { page.deallocate() }
        for slot in [UInt64(0), 1] {
            page.initializeMemory(as: UInt8.self, repeating: 0, count: PageLayout.pageSize)
            _ = try file.read(into: page, count: PageLayout.pageSize, offset: slot * UInt64(PageLayout.pageSize))
            slots.append(MetaPage.decode(page, slot: slot))
        }
        report.metaSlots = slots.map { result in
            switch result {
            case let .valid(m): return .valid(generation: m.generation)
            case .foreign: return .missing
            case let .unsupportedVersion(v): return .unsupportedVersion(v)
            case let .damaged(reason): return .damaged(reason: reason)
            }
        }
        var best: MetaPage? = nil
        for case let .valid(m) in slots where best.map({ m.generation > $0.generation }) ?? true { best = m }
        if let best {
            meta = best
            otherSlot = slots[Int(1 - best.slot)]
            return
        }
        for case let .unsupportedVersion(v) in slots {
            throw .unsupportedFormatVersion(path: dataPath, found: v, supported: MetaPage.formatVersion)
        }
        let noMagic = slots.allSatisfy { if case .foreign = $0 { return true } else { return false } }
        if noMagic {
            var n: UInt64 = 2
            var sound = false
            while n < filePages && !sound {
                if case .page = read(n) { sound = true }
                n += 1
            }
            if !sound {
                throw .notABoxwoodDatabase(path: sourcePath, reason: "the data file has no Boxwood meta page and no page that passes its checksum")
            }
        }
    }

    // MARK: The salvage

    func run(into writer: SalvageWriter) throws(BoxwoodError) {
        self.writer = writer
        guard let meta else {
            report.notes.append("neither meta page is usable: no tree can be walked, so no page can be attributed to a table")
            report.wal.note = "not replayed: without a meta page nothing says which checkpoint the log follows"
            try noteWALNotReplayed()
            try scanWithoutStructure()
            try finishReport()
            return
        }
        report.checkpointGeneration = meta.generation
        if filePages < meta.pageCount {
            report.notes.append("the data file holds \(filePages) pages, the meta accounts for \(meta.pageCount): the file was truncated")
        }
        let replaySalt = try planWAL(meta)
        notLive = readFreelist(meta)
        report.freelistUsable = notLive != nil
        let known = try readCatalog(meta)
        for (id, state) in known.sorted(by: { $0.key < $1.key }) {
            var table = SalvageReport.Table(id: id, keyType: state.keyType, attribution: .catalog)
            table.entriesExpected = state.entries
            tables[id] = table
            _ = try writer.ensureTable(id, keyType: state.keyType)
        }
        for (id, state) in known.sorted(by: { $0.key < $1.key }) where state.root != 0 {
            try walk(state.root, table: id, keyType: state.keyType, bounds: .all, orphans: false)
        }
        if !gaps.isEmpty || !report.catalogComplete { try recoverOrphans(meta) }
        if meta.masterClientId != 0 { try writer.setMasterClientId(meta.masterClientId) }
        if let replaySalt { try replayWAL(salt: replaySalt, after: meta.lastSequence) }
        try finishReport()
    }

    private func finishReport() throws(BoxwoodError) {
        try writer.commit()
        for (id, (keyType, entries)) in try writer.tableEntries() {
            if tables[id] == nil { tables[id] = SalvageReport.Table(id: id, keyType: keyType, attribution: .wal) }
            tables[id]?.entries = entries
        }
        report.tables = tables.values.sorted { $0.id < $1.id }.map { table in
            var table = table
            table.pagesLost.sort()
            table.orphanLeafPages.sort()
            return table
        }
        report.catalogPagesLost.sort()
        report.unattributedLeafPages.sort()
        report.unattributedDamagedPages.sort()
        reportProgress()
    }

    // MARK: Freelist and catalog

    /// The free pages and freelist pages of `meta` as a bitmap (also claimed), or nil (noted) when the freelist
    /// cannot be read whole.
    private func readFreelist(_ meta: MetaPage) -> PageBitmap? {
        let limit = min(meta.pageCount, filePages)
        var bitmap = PageBitmap(count: limit)
        var page = meta.freelistHead
        var listPages = 0
        var entries: UInt64 = 0
        while page != 0 {
            listPages += 1
            if UInt64(listPages) > limit {
                report.notes.append("the freelist loops")
                return nil
            }
            claimed.insert(page)
            guard case let .page(p) = read(page) else {
                report.notes.append("freelist page \(page) is damaged: pages no tree reaches cannot be told from free ones")
                return nil
            }
            guard let list = FreelistPage(p) else {
                report.notes.append("page \(page), on the freelist chain, is not a freelist page")
                return nil
            }
            bitmap.insert(page)
            for i in 0..<list.entryCount {
                let entry = list.entry(i)
                guard entry >= 2, entry < meta.pageCount else {
                    report.notes.append("freelist page \(page) lists page \(entry), outside the file")
                    return nil
                }
                bitmap.insert(entry)
                entries += 1
            }
            page = list.next
        }
        guard entries == meta.freeCount else {
            report.notes.append("the freelist holds \(entries) pages, the meta says \(meta.freeCount)")
            return nil
        }
        return bitmap
    }

    /// The tables of the catalog of `meta`; sets `catalogComplete`.
    private func readCatalog(_ meta: MetaPage) throws(BoxwoodError) -> [Int32: TableState] {
        report.catalogComplete = true
        var known: [Int32: TableState] = [:]
        guard meta.catalogRoot != 0 else { return known }
        try walkPages(meta.catalogRoot, keyType: .binary, bounds: .all, claim: true, leaf: { (page, p) throws(BoxwoodError) in
            for (id, state) in self.catalogEntries(p, page: page) { known[id] = state }
        }, damaged: { page, bounds, reason in
            self.report.catalogComplete = false
            self.report.catalogPagesLost.append(page)
            self.gaps.append(Gap(table: nil, bounds: bounds, page: page))
            self.report.notes.append("catalog page \(page): \(reason)")
        })
        return known
    }

    /// The entries of a catalog leaf page; a malformed one is noted and makes the catalog incomplete.
    private func catalogEntries(_ p: UnsafeRawPointer, page: UInt64) -> [(Int32, TableState)] {
        var out: [(Int32, TableState)] = []
        let leaf = LeafPage(p)
        for i in 0..<leaf.count {
            let off = leaf.slot(i)
            let (key, keyLength) = leaf.key(i)
            guard keyLength == 4, !LeafValue.isOverflow(p, off), LeafValue.codec(p, off) == 0,
                  let state = Catalog.decode(p + LeafValue.valueOffset(p, off), count: LeafPage.valueLength(p, off)) else {
                report.catalogComplete = false
                report.notes.append("catalog page \(page): entry \(i) is malformed")
                continue
            }
            out.append((Catalog.id(fromKey: key), state))
        }
        return out
    }

    // MARK: Walking trees

    /// Walks the tree at `root` whose keys lie in `bounds`, in key order, and hands each sound leaf to `leaf`.
    /// Each page must pass its checksum and structure checks, be a branch or leaf page, and hold keys in ascending
    /// order inside the range its parents give it (an int64 table's leaf keys are 8 bytes); a page that does not
    /// is handed to `damaged` with its key range, and its subtree is skipped; `sound` hears of every page that
    /// passes. With `claim`, each page is claimed
    /// (a page claimed before is noted and skipped); without, a walk of its own never visits a page twice.
    private func walkPages(_ root: UInt64, keyType: ValueBoxKeyType, bounds: SalvageBounds, claim: Bool,
                           sound: ((UInt64) -> Void)? = nil,
                           leaf: (UInt64, UnsafeRawPointer) throws(BoxwoodError) -> Void,
                           damaged: (UInt64, SalvageBounds, String) -> Void) throws(BoxwoodError) {
        var seen = Set<UInt64>()
        var stack: [(UInt64, SalvageBounds, Int)] = [(root, bounds, 0)]
        while let (page, bounds, depth) = stack.popLast() {
            if claim {
                guard claimed.insert(page) || !page.isPageNumber(below: filePages) else {
                    report.notes.append("page \(page) is reached twice (by two parents or two trees); walked once")
                    continue
                }
            } else {
                guard seen.insert(page).inserted else { continue }
            }
            let p: UnsafeRawPointer
            switch read(page) {
            case let .damaged(reason):
                damaged(page, bounds, reason)
                continue
            case let .page(sound):
                p = sound
            }
            if let problem = treePageProblem(p, bounds: bounds, keyType: keyType, depth: depth) {
                damaged(page, bounds, problem)
                continue
            }
            sound?(page)
            if PageType.raw(of: p) == PageType.leaf.rawValue {
                try leaf(page, p)
                continue
            }
            let branch = BranchPage(p)
            let n = branch.count
            func keyBytes(_ i: Int) -> [UInt8] { Array(UnsafeRawBufferPointer(start: branch.key(i).0, count: branch.key(i).1)) }
            for c in stride(from: n, through: 0, by: -1) {
                let childBounds = SalvageBounds(lower: c == 0 ? bounds.lower : keyBytes(c - 1), upper: c == n ? bounds.upper : keyBytes(c))
                stack.append((branch.child(c), childBounds, depth + 1))
            }
        }
    }

    /// Why a sound page cannot be a page of the tree at this place, or nil.
    private func treePageProblem(_ p: UnsafeRawPointer, bounds: SalvageBounds, keyType: ValueBoxKeyType, depth: Int) -> String? {
        let type = PageType.raw(of: p)
        let isLeaf = type == PageType.leaf.rawValue
        guard isLeaf || type == PageType.branch.rawValue else { return "a page of type \(type) where a tree page belongs" }
        if depth > BTree.maxDepth { return "deeper than \(BTree.maxDepth) levels" }
        let n = isLeaf ? LeafPage(p).count : BranchPage(p).count
        func key(_ i: Int) -> (UnsafeRawPointer, Int) { isLeaf ? LeafPage(p).key(i) : BranchPage(p).key(i) }
        for i in 0..<n {
            let (k, length) = key(i)
            if isLeaf && keyType == .int64 && length != 8 { return "an int64 key of \(length) bytes" }
            if i > 0 {
                let (previous, previousLength) = key(i - 1)
                if compareKeys(previous, previousLength, k, length) >= 0 { return "keys out of order at cell \(i)" }
            }
        }
        if n > 0 {
            let (first, firstLength) = key(0)
            let (last, lastLength) = key(n - 1)
            if !bounds.holds(first, firstLength) || !bounds.holds(last, lastLength) { return "keys outside the range its parent gives it" }
        }
        return nil
    }

    /// Walks (claiming) the tree of table `id` at `root` within `bounds` and writes the entries of its leaves. Lost
    /// pages are recorded (as gaps of the table, unless `orphans`); `orphans` marks entries as coming from orphan
    /// pages, which are written only when the destination does not hold their key yet.
    private func walk(_ root: UInt64, table id: Int32, keyType: ValueBoxKeyType, bounds: SalvageBounds, orphans: Bool) throws(BoxwoodError) {
        try walkPages(root, keyType: keyType, bounds: bounds, claim: true, leaf: { (page, p) throws(BoxwoodError) in
            if orphans { self.tables[id]?.orphanLeafPages.append(page) }
            let leaf = LeafPage(p)
            for i in 0..<leaf.count { try self.recoverCell(p, leaf.slot(i), page: page, table: id, orphan: orphans) }
        }, damaged: { page, bounds, reason in
            self.tables[id]?.pagesLost.append(page)
            // The gaps that attribute orphans are those of the walks from the roots. Below an orphan subtree the
            // bounds are loose (its own range is unknown: its parent is lost), so a damaged page there is no gap.
            if !orphans { self.gaps.append(Gap(table: id, bounds: bounds, page: page)) }
            self.report.notes.append("table \(id), page \(page): \(reason)")
        })
    }

    /// Writes the entry of the cell at `off` of leaf `page` to table `id`, unless its value cannot be read whole.
    private func recoverCell(_ p: UnsafeRawPointer, _ off: Int, page: UInt64, table id: Int32, orphan: Bool) throws(BoxwoodError) {
        let keyLength = LeafPage.keyLength(p, off)
        let key = p + off + LeafPage.cellHeader
        var chainProblem: (UInt64, String)? = nil
        if let first = LeafValue.overflowReference(p, off) { chainProblem = claimChain(first) }
        let value: ValueBytes
        do {
            value = try LeafValue.read(pager, p, off)
        } catch {
            tables[id]?.entriesLost += 1
            if let (bad, _) = chainProblem { tables[id]?.pagesLost.append(bad) }
            report.notes.append("table \(id), page \(page): the value of the cell at offset \(off) cannot be read (\(chainProblem?.1 ?? error.description)): entry left out")
            return
        }
        defer { value.release() }
        if orphan, try writer.contains(id, key: key, length: keyLength) {
            report.notes.append("table \(id), orphan page \(page): a key already recovered elsewhere was not taken again")
            return
        }
        do {
            try writer.set(id, key: key, length: keyLength, value: value.pointer, count: value.count)
        } catch {
            // A key the destination refuses (its pages were sound, so this is a forged file): that entry is lost.
            switch error {
            case .keyTooLarge, .invalidInt64Key, .keyTypeMismatch, .reservedTableId:
                tables[id]?.entriesLost += 1
                report.notes.append("table \(id), page \(page): an entry the destination refuses (\(error)): left out")
                return
            default:
                throw error
            }
        }
        tables[id]?.entriesFromPages += 1
        if orphan { tables[id]?.entriesFromOrphanPages += 1 }
    }

    /// Claims the pages of the overflow chain at `first`; the first page that is damaged (or not an overflow page),
    /// with why, or nil.
    private func claimChain(_ first: UInt64) -> (UInt64, String)? {
        var page = first
        var steps: UInt64 = 0
        while page != 0 {
            steps += 1
            if steps > filePages { return (page, "the overflow chain loops") }
            claimed.insert(page)
            switch read(page) {
            case let .damaged(reason): return (page, "overflow page \(page): \(reason)")
            case let .page(q):
                if page == first, PageType.raw(of: q) == PageType.extent.rawValue {
                    // An extent, verified whole by `read`: all its pages are the value's.
                    for i in 1..<ExtentPage.pageCount(forStored: ExtentPage.storedLength(q)) { claimed.insert(page + UInt64(i)) }
                    return nil
                }
                guard let overflow = OverflowPage(q) else { return (page, "page \(page) of an overflow chain is not an overflow page") }
                page = overflow.next
            }
        }
        return nil
    }

    // MARK: Orphans

    /// Recovers the sound pages of the live state that no walk reached (see the type's rules).
    private func recoverOrphans(_ meta: MetaPage) throws(BoxwoodError) {
        guard let notLive else {
            report.notes.append("pages no tree reaches were not used: without the freelist they cannot be told from free pages, which may hold old versions of entries")
            return
        }
        let limit = min(meta.pageCount, filePages)
        var orphans: [UInt64: Bool] = [:]  // page: is a branch
        var damagedLive: [UInt64] = []
        var n: UInt64 = 2
        while n < limit {
            defer { n += 1 }
            if claimed.contains(n) || notLive.contains(n) { continue }
            switch read(n) {
            case .damaged: damagedLive.append(n)
            case let .page(p):
                let type = PageType.raw(of: p)
                if type == PageType.branch.rawValue { orphans[n] = true } else if type == PageType.leaf.rawValue { orphans[n] = false }
                // An extent no leaf reached: its other pages are not pages (they would read as damaged).
                if type == PageType.extent.rawValue { n += UInt64(ExtentPage.pageCount(forStored: ExtentPage.storedLength(p)) - 1) }
            }
        }
        var hasParent = Set<UInt64>()
        for (page, isBranch) in orphans where isBranch {
            guard case let .page(p) = read(page) else { continue }
            let branch = BranchPage(p)
            for c in 0...branch.count where branch.child(c) != page && orphans[branch.child(c)] != nil { hasParent.insert(branch.child(c)) }
        }
        var previous: PreviousCheckpoint? = nil
        for root in orphans.keys.filter({ !hasParent.contains($0) }).sorted() {
            let component = collect(root, orphans: orphans)
            guard let low = component.low, let high = component.high else { continue }  // an empty leaf: nothing to recover
            var target: (Int32, ValueBoxKeyType, SalvageBounds)? = nil
            if report.catalogComplete {
                target = uniqueGap(low, high, eightByteKeys: component.eightByteKeys, among: nil)
            } else {
                if previous == nil { previous = readPreviousCheckpoint(meta) }
                target = try previousOwner(component, previous!, low, high)
            }
            if let (id, keyType, bounds) = target {
                try walk(root, table: id, keyType: keyType, bounds: bounds, orphans: true)
            } else {
                report.unattributedLeafPages += component.leaves
                report.unattributedEntries += component.entries
            }
        }
        // Orphans on a loop of branch pages (no root) were never taken.
        let reported = Set(report.unattributedLeafPages)
        for (page, isBranch) in orphans where !isBranch && !claimed.contains(page) && !reported.contains(page) {
            report.unattributedLeafPages.append(page)
            if case let .page(p) = read(page) { report.unattributedEntries += LeafPage(p).count }
        }
        let damagedUnreached = damagedLive.filter { !claimed.contains($0) }
        // With the whole catalog, every live page no walk reached hangs below a lost page of some table (a tree
        // page, or an overflow page of an entry there). When all the lost pages are one table's, so are these.
        let gapTables = Set(gaps.map(\.table))
        if report.catalogComplete, gapTables.count == 1, let only = gapTables.first, let id = only {
            tables[id]?.pagesLost += damagedUnreached
        } else {
            report.unattributedDamagedPages = damagedUnreached
        }
        if !report.unattributedLeafPages.isEmpty {
            report.notes.append("\(report.unattributedLeafPages.count) leaf page(s) of the live state could not be attributed to exactly one table; their \(report.unattributedEntries) entries are not recovered")
        }
    }

    /// An orphan subtree: its pages, its leaf pages, its entries and its key range.
    struct Component {
        var pages = Set<UInt64>()
        var leaves: [UInt64] = []
        var entries = 0
        var low: [UInt8]?
        var high: [UInt8]?
        var eightByteKeys = true
    }

    /// The orphan subtree at `root`: the orphans reached through orphan branch pages.
    private func collect(_ root: UInt64, orphans: [UInt64: Bool]) -> Component {
        var component = Component()
        var stack = [root]
        while let page = stack.popLast() {
            guard component.pages.insert(page).inserted, case let .page(p) = read(page) else { continue }
            if orphans[page] == true {
                let branch = BranchPage(p)
                for c in 0...branch.count where orphans[branch.child(c)] != nil { stack.append(branch.child(c)) }
                continue
            }
            component.leaves.append(page)
            let leaf = LeafPage(p)
            component.entries += leaf.count
            for i in 0..<leaf.count {
                let (k, length) = leaf.key(i)
                if length != 8 { component.eightByteKeys = false }
                let key = Array(UnsafeRawBufferPointer(start: k, count: length))
                if component.low.map({ compareKeyArrays(key, $0) < 0 }) ?? true { component.low = key }
                if component.high.map({ compareKeyArrays(key, $0) > 0 }) ?? true { component.high = key }
            }
        }
        return component
    }

    /// The one gap (of table `among`, or of any table) that holds `low...high`, with its table; nil when none or
    /// several do (or an int64 table's gap and keys that are not all 8 bytes).
    private func uniqueGap(_ low: [UInt8], _ high: [UInt8], eightByteKeys: Bool, among: Int32?) -> (Int32, ValueBoxKeyType, SalvageBounds)? {
        var found: [(Int32, ValueBoxKeyType, SalvageBounds)] = []
        for gap in gaps {
            guard let id = gap.table, among == nil || among == id, let table = tables[id] else { continue }
            guard gap.bounds.holds(low, high), table.keyType == .binary || eightByteKeys else { continue }
            found.append((id, table.keyType, gap.bounds))
        }
        return found.count == 1 ? found[0] : nil
    }

    /// The checkpoint before the salvaged one, for attributing trees when the catalog is damaged: its tables and
    /// which table's tree held each of its pages.
    struct PreviousCheckpoint {
        var tables: [Int32: TableState] = [:]
        var owner: [UInt64: Int32] = [:]
        var shared = Set<UInt64>()
    }

    /// Reads the previous checkpoint's catalog and trees (not claiming anything), when the other meta slot holds
    /// the generation just before the salvaged one.
    private func readPreviousCheckpoint(_ meta: MetaPage) -> PreviousCheckpoint {
        var previous = PreviousCheckpoint()
        guard case let .valid(older)? = otherSlot, older.generation + 1 == meta.generation, older.catalogRoot != 0 else {
            report.notes.append("no meta page of the previous checkpoint to attribute trees by: trees whose catalog entry is lost are not recovered")
            return previous
        }
        do {
            try walkPages(older.catalogRoot, keyType: .binary, bounds: .all, claim: false, leaf: { (page, p) throws(BoxwoodError) in
                let leaf = LeafPage(p)
                for i in 0..<leaf.count {
                    let off = leaf.slot(i)
                    let (key, keyLength) = leaf.key(i)
                    guard keyLength == 4, !LeafValue.isOverflow(p, off), LeafValue.codec(p, off) == 0,
                          let state = Catalog.decode(p + LeafValue.valueOffset(p, off), count: LeafPage.valueLength(p, off)) else { continue }
                    previous.tables[Catalog.id(fromKey: key)] = state
                }
            }, damaged: { _, _, _ in })
            for (id, state) in previous.tables where state.root != 0 {
                try walkPages(state.root, keyType: state.keyType, bounds: .all, claim: false, sound: { page in
                    if let other = previous.owner.updateValue(id, forKey: page), other != id { previous.shared.insert(page) }
                }, leaf: { (_, _) throws(BoxwoodError) in }, damaged: { _, _, _ in })
            }
        } catch {
            // Walks that do not claim hand nothing to the destination, so they cannot fail; keep what was found.
            report.notes.append("reading the previous checkpoint failed: \(error)")
        }
        report.notes.append("the catalog is damaged: trees are attributed by the previous checkpoint (generation \(older.generation)), whose catalog lists \(previous.tables.count) table(s)")
        return previous
    }

    /// The table an orphan subtree belongs to when the catalog is damaged: the one table of the previous checkpoint
    /// whose tree held some of its pages (a page alive in both checkpoints was not rewritten, so it is still that
    /// table's). A table the damaged catalog still lists must also have a gap holding the subtree's keys.
    private func previousOwner(_ component: Component, _ previous: PreviousCheckpoint, _ low: [UInt8], _ high: [UInt8]) throws(BoxwoodError) -> (Int32, ValueBoxKeyType, SalvageBounds)? {
        var owners = Set<Int32>()
        for page in component.pages where !previous.shared.contains(page) {
            if let id = previous.owner[page] { owners.insert(id) }
        }
        guard owners.count == 1, let id = owners.first, let state = previous.tables[id] else { return nil }
        if tables[id]?.attribution == .catalog {
            return uniqueGap(low, high, eightByteKeys: component.eightByteKeys, among: id)
        }
        guard state.keyType == .binary || component.eightByteKeys else { return nil }
        if tables[id] == nil {
            guard try writer.ensureTable(id, keyType: state.keyType) else { return nil }
            tables[id] = SalvageReport.Table(id: id, keyType: state.keyType, attribution: .previousCatalog)
        }
        return (id, state.keyType, .all)
    }

    /// Without a meta page: every sound leaf page is unattributed.
    private func scanWithoutStructure() throws(BoxwoodError) {
        var n: UInt64 = 2
        while n < filePages {
            if case let .page(p) = read(n), PageType.raw(of: p) == PageType.leaf.rawValue {
                report.unattributedLeafPages.append(n)
                report.unattributedEntries += LeafPage(p).count
            }
            n += 1
        }
    }

    // MARK: WAL

    /// Decides whether the WAL is replayed on top of `meta` (returns its salt) or set aside (noted).
    private func planWAL(_ meta: MetaPage) throws(BoxwoodError) -> UInt64? {
        guard PosixFileSystem.shared.kind(of: walPath) == .regular else {
            if case .valid = otherSlot {} else {
                report.notes.append("meta page \(1 - meta.slot) is not valid and there is no WAL to tell whether it held a newer checkpoint")
            }
            return nil
        }
        let walFile = try PosixFileSystem.shared.open(walPath, create: false, readOnly: true)
        defer { walFile.close() }
        let log = WriteAheadLog(file: walFile)
        let header = try log.readHeader()
        let size = try walFile.size()
        var records = size > UInt64(WriteAheadLog.headerSize) ? size - UInt64(WriteAheadLog.headerSize) : 0
        if case let .valid(salt, _) = header, try log.holdsNoRecord(salt: salt) { records = 0 }
        switch header {
        case let .valid(salt, _):
            if salt == meta.walSalt { return salt }
            if case let .valid(previous)? = otherSlot, previous.generation + 1 == meta.generation, previous.walSalt == salt {
                report.wal.note = "the log predates the salvaged checkpoint (its commits are in the pages)"
                return nil
            }
            if case .valid? = otherSlot {
                report.wal.note = "not replayed: its salt matches neither meta page (a log of another database?)"
            } else {
                report.usedOlderCheckpoint = true
                report.wal.note = "not replayed: the log belongs to a newer checkpoint whose meta page (page \(1 - meta.slot)) is lost; "
                    + "the previous checkpoint (generation \(meta.generation)) was salvaged instead, and the commits after it are lost"
                report.wal.commitsLost = true
            }
            report.wal.bytesNotReplayed = records
            report.wal.commitsLost = report.wal.commitsLost || records > 0
            return nil
        case let .otherVersion(version):
            report.wal.note = "not replayed: WAL format version \(version) is not readable by this build"
            report.wal.bytesNotReplayed = records
            report.wal.commitsLost = records > 0
            return nil
        case .invalid:
            if records > 0 {
                report.wal.note = "not replayed: the log's header is damaged"
                report.wal.bytesNotReplayed = records
                report.wal.commitsLost = true
            }
            return nil
        }
    }

    /// Notes the whole log as not replayed (no meta to replay it on).
    private func noteWALNotReplayed() throws(BoxwoodError) {
        guard PosixFileSystem.shared.kind(of: walPath) == .regular else { return }
        let walFile = try PosixFileSystem.shared.open(walPath, create: false, readOnly: true)
        defer { walFile.close() }
        let size = try walFile.size()
        let log = WriteAheadLog(file: walFile)
        if case let .valid(salt, _) = try log.readHeader(), try log.holdsNoRecord(salt: salt) { return }
        if size > UInt64(WriteAheadLog.headerSize) {
            report.wal.bytesNotReplayed = size - UInt64(WriteAheadLog.headerSize)
            report.wal.commitsLost = true
        }
    }

    /// Replays the intact prefix of the log (records of `salt` with sequences from `after + 1` on) into the
    /// destination, one commit per record, and notes where and why it stopped.
    private func replayWAL(salt: UInt64, after: UInt64) throws(BoxwoodError) {
        let walFile = try PosixFileSystem.shared.open(walPath, create: false, readOnly: true)
        defer { walFile.close() }
        let log = WriteAheadLog(file: walFile)
        log.restart(salt: salt)
        let size = try walFile.size()
        let headerSize = WriteAheadLog.recordHeaderSize
        var offset = UInt64(WriteAheadLog.headerSize)
        var expected = after + 1  // below MetaPage.sequenceLimit + 1: the meta was validated
        let buffer = ByteBuffer(capacity: 64 << 10)
        var stop: String? = nil
        var searchFrom: UInt64? = nil
        var endedAtMarker = false
        while offset < size {
            guard offset + UInt64(headerSize) <= size else { stop = "a record header at offset \(offset) is cut short by the end of the file"; break }
            buffer.reset()
            buffer.reserve(headerSize)
            guard try walFile.read(into: buffer.memory, count: headerSize, offset: offset) == headerSize,
                  let header = WALRecordHeader.open(buffer.memory, offset: offset, salt: salt) else {
                stop = "the record at offset \(offset) is damaged or torn"
                searchFrom = offset + 1
                break
            }
            let length = header.payloadLength
            let end = offset + UInt64(headerSize) + UInt64(length)
            guard end <= size else { stop = "the record at offset \(offset) runs past the end of the file"; break }
            buffer.reserve(headerSize + length)
            let payload = buffer.memory + headerSize
            guard try walFile.read(into: payload, count: length, offset: offset + UInt64(headerSize)) == length, header.openPayload(payload, cipher: nil) else {
                stop = "the record at offset \(offset) is damaged or torn"
                searchFrom = end
                break
            }
            if header.isEndMarker {
                // Where the last append ended: what follows is preallocated zeros (or records a power cut kept
                // without the ones before them, which opening the database would cut too).
                endedAtMarker = true
                break
            }
            if header.sequence < expected {
                offset = end
                continue
            }
            guard header.sequence == expected else {
                stop = "the record at offset \(offset) has sequence \(header.sequence), expected \(expected)"
                report.wal.commitsLost = true
                break
            }
            var reader = ByteReader(UnsafeRawBufferPointer(start: payload, count: length))
            var operations: [WALOperation] = []
            var malformed = false
            while !reader.isAtEnd {
                do throws(ByteReadError) { operations.append(try reader.operation()) } catch { malformed = true; break }
            }
            if malformed || operations.count != Int(header.operationCount) {
                stop = "the record at offset \(offset) (sequence \(expected)) holds malformed operations"
                report.wal.commitsLost = true
                break
            }
            // A value written once is in the source's data file: the destination gets its bytes.
            do {
                operations = try operations.map { (operation) throws(BoxwoodError) -> WALOperation in
                    guard case let .setExtent(table, keyType, key, extent) = operation else { return operation }
                    return .set(table: table, keyType: keyType, key: key, value: try valueWrittenOnce(extent))
                }
            } catch {
                stop = "the record at offset \(offset) (sequence \(expected)) names a value that cannot be read: \(error)"
                report.wal.commitsLost = true
                break
            }
            do {
                try writer.applyCommit(operations)
            } catch {
                guard case .corrupted = error else { throw error }
                stop = "the record at offset \(offset) (sequence \(expected)) cannot be applied: \(error)"
                report.wal.commitsLost = true
                break
            }
            report.wal.commitsReplayed += 1
            expected += 1
            offset = end
        }
        report.wal.bytesNotReplayed = size > offset && !endedAtMarker ? size - offset : 0
        if let stop {
            if let searchFrom, !report.wal.commitsLost,
               let (found, sequence, _) = try log.firstIntactRecord(from: searchFrom, fileSize: size) {
                report.wal.commitsLost = true
                report.wal.note = stop + "; an intact record (sequence \(sequence)) follows at offset \(found): the commits from there on are lost"
            } else if report.wal.commitsLost {
                report.wal.note = stop + "; the commits from there on are lost"
            } else {
                report.wal.note = stop + ": a torn tail (an append that never finished), as opening the database would cut it"
            }
        }
    }

    /// The bytes of the value written once that `extent` names in the source's data file (in the mapping), checked
    /// against the record: the extent head's checksum covers them, and it must be the one the record carries.
    private func valueWrittenOnce(_ extent: LoggedExtent) throws(BoxwoodError) -> UnsafeRawBufferPointer {
        let stored = extent.storedLength
        guard extent.codec == ValueCodec.raw.rawValue, extent.rawLength == stored, stored > UInt64(PageLayout.overflowPayload),
              stored <= LeafValue.maxValueLength else {
            throw .corrupted(file: dataPath, page: extent.head, reason: "an extent of \(stored) stored bytes for a value of \(extent.rawLength)")
        }
        let head = try pager.diskPage(extent.head)
        guard PageType.raw(of: head) == PageType.extent.rawValue, ExtentPage.storedLength(head) == Int(stored),
              load64(head, PageLayout.checksumOffset) == extent.checksum else {
            throw .corrupted(file: dataPath, page: extent.head, reason: "the extent at page \(extent.head) is not the one the WAL record names")
        }
        return UnsafeRawBufferPointer(start: ExtentPage.bytes(head), count: Int(stored))
    }
}
