@_spi(Fuzzing) import BoxwoodStore

/// `page`: tree pages (branch, leaf, overflow) decoded two ways. Directly: `PageType.problem` with and without a
/// page count and, for a page that validates, its cells, key searches, and the compaction a checkpoint applies
/// (which must leave a valid page with the same cells). And inside a database: the harness places the pages at
/// their page numbers, adds meta pages, a catalog naming the given root for table 1 (totals computed from the
/// leaves), and a freelist of every page not given, seals every checksum, and runs ``DatabaseExerciser``.
///
/// Encoding (little-endian):
///
///     u8  flags       bit 0 the table's keys are int64; bit 1 write and checkpoint; bit 2 compact;
///                     bit 3 decode directly only; bit 4 open read-only too
///     u16 root        the table's root page (0xffff: empty table; else 2 + root % 62)
///     then pages until the end: u16 page number (2 + n % 62) | `PageCodec` page
enum PageFuzzer {
    static let target = FuzzTarget(
        name: "page",
        summary: "branch/leaf/overflow pages: PageType.problem, cells, searches and compaction directly, then as the tree of a sealed database",
        run: { fuzzOne($0) },
        seeds: { try seeds() },
        libFuzzerOptions: ["-max_len=32768", "-dict=Dictionaries/binary-formats.dict", "-use_value_profile=1"]
    )

    static let pageSize = 4096
    static let firstPage = 2
    static let pageNumbers = 62

    static func fuzzOne(_ bytes: UnsafeRawBufferPointer) {
        var input = FuzzInput(bytes)
        let flags = input.u8()
        let rawRoot = input.u16()
        let root = rawRoot == 0xffff ? 0 : UInt64(firstPage + rawRoot % pageNumbers)
        var pages: [Int: [UInt8]] = [:]
        while !input.isAtEnd {
            let number = firstPage + input.u16() % pageNumbers
            pages[number] = PageCodec.decode(&input, size: pageSize)
        }
        let catalogPage = (pages.keys.max() ?? firstPage - 1) + 1
        let unfilled = (firstPage..<catalogPage).filter { pages[$0] == nil }
        let freelistPage = unfilled.isEmpty ? nil : catalogPage + 1
        let pageCount = UInt64((freelistPage ?? catalogPage) + 1)

        var entries = 0
        var totalBytes = 0
        for number in pages.keys.sorted() {
            if let (count, bytes) = decodeDirectly(pages[number]!, pageCount: pageCount) {
                entries += count
                totalBytes += bytes
            }
        }
        if flags & (1 << 3) != 0 { return }

        // The database around the pages.
        var data = [UInt8](repeating: 0, count: Int(pageCount) * pageSize)
        func place(_ page: [UInt8], at number: Int) {
            data.replaceSubrange(number * pageSize..<(number + 1) * pageSize, with: page)
        }
        for (number, page) in pages { place(page, at: number) }
        var catalog = [UInt8](repeating: 0, count: pageSize)
        catalog.withUnsafeMutableBytes { p in
            FuzzingSupport.initializeTreePage(p.baseAddress!, leaf: true)
            _ = FuzzingSupport.appendLeafCell(p.baseAddress!, key: FuzzingSupport.catalogKey(1),
                                              value: FuzzingSupport.catalogValue(root: root, keyType: flags & 1 != 0 ? .int64 : .binary,
                                                                                 entries: entries, bytes: totalBytes))
        }
        place(catalog, at: catalogPage)
        if let freelistPage {
            var freelist = [UInt8](repeating: 0, count: pageSize)
            freelist[8] = 5 // PageType.freelist
            freelist.storeLE64(UInt64(unfilled.count), at: 24)
            for (i, number) in unfilled.enumerated() { freelist.storeLE64(UInt64(number), at: 32 + 8 * i) }
            place(freelist, at: freelistPage)
        }
        data.withUnsafeMutableBytes { d in
            let base = d.baseAddress!
            for generation in 0..<2 {
                FuzzingSupport.encodeMeta(into: base + generation * pageSize, generation: UInt64(generation), pageCount: pageCount,
                                          catalogRoot: UInt64(catalogPage), freelistHead: UInt64(freelistPage ?? 0),
                                          freeCount: UInt64(unfilled.count), lastSequence: 0, walSalt: 0x5eed)
            }
            for number in 2..<Int(pageCount) { FuzzingSupport.sealPage(base + number * pageSize, pageNumber: UInt64(number)) }
        }
        let path = ScratchFiles.databaseDirectory()
        ScratchFiles.install(path, data: data, wal: nil, header: nil)
        DatabaseExerciser.run(path, steps: DatabaseExerciser.Steps(readOnly: flags & (1 << 4) != 0, write: flags & (1 << 1) != 0,
                                                                   compact: flags & (1 << 2) != 0))
    }

    /// Runs the page decoders on one page of a file of `pageCount` pages. For a valid leaf returns its entries
    /// and their key + raw value bytes.
    static func decodeDirectly(_ page: [UInt8], pageCount: UInt64) -> (Int, Int)? {
        var page = page
        return page.withUnsafeMutableBytes { raw -> (Int, Int)? in
            let p = raw.baseAddress!
            _ = FuzzingSupport.validatePage(p, pageCount: nil)
            guard FuzzingSupport.validatePage(p, pageCount: pageCount) == nil else { return nil }
            let type = FuzzingSupport.pageType(p)
            guard type == 2 || type == 3 else { return nil }
            let cells = FuzzingSupport.cells(p)
            _ = FuzzingSupport.usedBytes(p)
            for cell in cells.prefix(16) { _ = FuzzingSupport.lowerBound(p, key: cell.key) }
            _ = FuzzingSupport.lowerBound(p, key: [])
            _ = FuzzingSupport.lowerBound(p, key: [UInt8](repeating: 0xff, count: 9))

            // What a checkpoint does to a page it writes: the result must still validate, with the same cells.
            var copy = [UInt8](UnsafeRawBufferPointer(raw))
            copy.withUnsafeMutableBytes { c in
                FuzzingSupport.compact(c.baseAddress!)
                let problem = FuzzingSupport.validatePage(c.baseAddress!, pageCount: pageCount)
                precondition(problem == nil, "a valid page fails validation after compaction: \(problem!)")
                precondition(FuzzingSupport.cells(c.baseAddress!).map(\.key) == cells.map(\.key), "compaction changed the cells of a valid page")
                FuzzingSupport.clearUnusedSpace(c.baseAddress!)
                let cleared = FuzzingSupport.validatePage(c.baseAddress!, pageCount: pageCount)
                precondition(cleared == nil, "a valid page fails validation after clearing its unused space: \(cleared!)")
                if !cells.isEmpty { FuzzingSupport.removeCell(c.baseAddress!, at: cells.count / 2) }
            }
            guard type == 3 else { return nil }
            return (cells.count, cells.reduce(0) { $0 + $1.key.count + $1.rawLength })
        }
    }

    /// The pages of table 1 of seed databases (branches and leaves; inline, LZ4 and overflow values), at their
    /// page numbers.
    static func seeds() throws -> [(name: String, bytes: [UInt8])] {
        var result: [(String, [UInt8])] = []
        let checkpointed = SeedDatabases.Build { box in
            try SeedDatabases.populate(box)
            try SeedDatabases.walTransactions(box)
        }
        let sources: [(String, SeedDatabases.Build, Int32)] = [
            ("branches", SeedDatabases.all.first { $0.0 == "branches" }!.1, 1),
            ("binary-lz4", checkpointed, 1),
            ("int64-overflow", checkpointed, 2),
        ]
        for (name, build, table) in sources {
            let image = try SeedDatabases.capture(build)
            guard let (root, pages) = treePages(image, table: table) else { continue }
            var out: [UInt8] = [table == 2 ? 1 : 0]
            out.appendLE(UInt16(root - UInt64(firstPage)))
            for number in pages where number >= firstPage && number < firstPage + pageNumbers {
                out.appendLE(UInt16(number - firstPage))
                out += PageCodec.encode(image.pages[number])
            }
            result.append(("seed-\(name)", out))
            if name == "branches" {
                out[0] |= 1 << 1 | 1 << 2
                result.append(("seed-\(name)-write-compact", out))
            }
        }
        return result
    }

    /// The root and every page (branches, leaves, overflow chains) of table `table` of a well-formed image.
    static func treePages(_ image: DatabaseImage, table: Int32) -> (UInt64, [Int])? {
        func page(_ n: UInt64) -> [UInt8]? { n < UInt64(image.pages.count) ? image.pages[Int(n)] : nil }
        let metas = [0, 1].compactMap { slot in
            image.pages[slot].withUnsafeBytes { FuzzingSupport.decodeMeta($0.baseAddress!, slot: UInt64(slot)) }.map { (slot, $0) }
        }
        guard let meta = metas.max(by: { $0.1.generation < $1.1.generation }),
              let catalog = page(image.pages[meta.0].loadLE64(64)) else { return nil }
        let key = FuzzingSupport.catalogKey(table)
        var root: UInt64?
        forEachLeafCell(catalog) { cellKey, value, _ in if cellKey == key { root = value.loadLE64(0) } }
        guard let root, root != 0 else { return nil }
        var result: [Int] = []
        var queue = [root]
        while let n = queue.popLast(), let p = page(n) {
            result.append(Int(n))
            switch p[8] {
            case 2:
                queue.append(p.loadLE64(16))
                let count = Int(p[10]) | Int(p[11]) << 8
                for i in 0..<count {
                    let off = Int(p[32 + 2 * i]) | Int(p[33 + 2 * i]) << 8
                    queue.append(p.loadLE64(off + 2))
                }
            case 3:
                forEachLeafCell(p) { _, value, overflow in if overflow { queue.append(value.loadLE64(0)) } }
            case 4:
                let next = p.loadLE64(16)
                if next != 0 { queue.append(next) }
            default:
                break
            }
        }
        return (root, result.sorted())
    }

    private static func forEachLeafCell(_ p: [UInt8], _ body: ([UInt8], [UInt8], Bool) -> Void) {
        guard p[8] == 3 else { return }
        let count = Int(p[10]) | Int(p[11]) << 8
        for i in 0..<count {
            let off = Int(p[32 + 2 * i]) | Int(p[33 + 2 * i]) << 8
            let keyLength = Int(p[off]) | Int(p[off + 1]) << 8
            let valueLength = Int(p.loadLE32(off + 3))
            let keyStart = off + 7
            let valueStart = keyStart + keyLength
            body(Array(p[keyStart..<valueStart]), Array(p[valueStart..<min(p.count, valueStart + valueLength)]), p[off + 2] & 1 != 0)
        }
    }
}
