/// The meta page: pages 0 and 1 of the data file alternate (checkpoint generation g writes page g % 2).
/// Open picks the valid one with the higher generation. Layout after the common 32-byte page header
/// (whose checksum covers the whole page):
///
///     offset size field
///     32     8    magic            "BOXWOOD\0"
///     40     4    formatVersion    2 (1: written before extents; read the same way, and holds none)
///     44     4    pageSize         4096
///     48     8    generation       checkpoint counter (1, 2, …)
///     56     8    pageCount        pages in the file that this meta accounts for
///     64     8    catalogRoot      root page of the catalog tree (0 = no tables), a disk reference (`PageRef`)
///     72     8    freelistHead     first freelist page (0 = none), a disk reference
///     80     8    freeCount        page numbers held by the freelist
///     88     8    lastSequence     TransactionStateVersion of the last commit included in the pages
///     96     8    walSalt          salt the current WAL file must carry; records seed their checksum with it
///     104    8    masterClientId   MasterClientId as of lastSequence (0 = none; zero in files written before it existed)
///     112    8    flags            bit 0: scrub pending — a secure remove's old bytes may still sit in free pages
///                                  (zero in files written before it existed)
struct MetaPage: Equatable {
    /// `flags` bit 0: free pages may still hold bytes of a secure remove; the next checkpoint that can
    /// (no reader pins an older snapshot) zeroes every free page and writes a meta without the flag.
    static let flagScrubPending: UInt64 = 1

    static let magic: [UInt8] = Array("BOXWOOD\0".utf8)
    /// The version this build writes: 2, whose files may hold extents (`ExtentPage`); a build that reads only
    /// version 1 refuses them instead of misreading an extent as a damaged page.
    static let formatVersion: UInt32 = 2
    /// The oldest version this build reads: 1 (the same layout without extents).
    static let oldestReadableVersion: UInt32 = 1

    // Format limits. A meta page whose fields exceed them is damaged (or forged), however good its checksum:
    // `decode` rejects it, and `problem` keeps a checkpoint from ever writing one. They leave every later
    // `+ 1` on a generation or a sequence, and every `page × pageSize` in bytes, far from overflowing.

    /// Generations are below this (2^62): a checkpoint's `generation + 1` cannot overflow.
    static let generationLimit: UInt64 = 1 << 62
    /// TransactionStateVersions are below this (2^62): commits and WAL replay add 1 per record.
    static let sequenceLimit: UInt64 = 1 << 62
    /// Page counts are at most this (2^40 pages of 4 KiB, 4 PiB): a page's byte offset (< 2^52) fits an
    /// `off_t` and an `Int` with room for the mapping to double, and every page number below it is far from
    /// the `dirtyFlag` bit, so a page number read from disk that passes `< pageCount` is never taken for
    /// an in-memory page.
    static let pageCountLimit: UInt64 = 1 << 40

    var generation: UInt64
    var pageCount: UInt64
    var catalogRoot: UInt64
    var freelistHead: UInt64
    var freeCount: UInt64
    var lastSequence: UInt64
    var walSalt: UInt64
    var masterClientId: Int64 = 0
    var flags: UInt64 = 0

    var scrubPending: Bool {
        get { flags & MetaPage.flagScrubPending != 0 }
        set { flags = newValue ? flags | MetaPage.flagScrubPending : flags & ~MetaPage.flagScrubPending }
    }

    /// The slot (page number) this meta is written to.
    var slot: UInt64 { generation % 2 }

    /// Writes the meta into a zeroed page buffer and seals its checksum.
    func encode(into page: UnsafeMutableRawPointer) {
        page.initializeMemory(as: UInt8.self, repeating: 0, count: PageLayout.pageSize)
        page.storeBytes(of: PageType.meta.rawValue, toByteOffset: PageLayout.typeOffset, as: UInt8.self)
        for (i, b) in MetaPage.magic.enumerated() { page.storeBytes(of: b, toByteOffset: 32 + i, as: UInt8.self) }
        store32(page, 40, MetaPage.formatVersion)
        store32(page, 44, UInt32(PageLayout.pageSize))
        store64(page, 48, generation)
        store64(page, 56, pageCount)
        store64(page, 64, catalogRoot)
        store64(page, 72, freelistHead)
        store64(page, 80, freeCount)
        store64(page, 88, lastSequence)
        store64(page, 96, walSalt)
        store64(page, 104, UInt64(bitPattern: masterClientId))
        store64(page, 112, flags)
        sealPage(page, pageNumber: slot)
    }

    enum DecodeResult {
        case valid(MetaPage)
        /// The page does not start with the Boxwood magic.
        case foreign
        /// The magic is there but the version is newer than this build understands.
        case unsupportedVersion(UInt32)
        /// The magic is there but the checksum or a field is wrong (a torn or damaged meta).
        case damaged(String)
    }

    static func decode(_ page: UnsafeRawPointer, slot: UInt64) -> DecodeResult {
        for (i, b) in magic.enumerated() where page.load(fromByteOffset: 32 + i, as: UInt8.self) != b {
            return .foreign
        }
        let version = load32(page, 40)
        if version < oldestReadableVersion || version > formatVersion {
            // Check the checksum first: a torn page is "damaged", not "newer".
            if pageChecksum(page, pageNumber: slot) == load64(page, 0) { return .unsupportedVersion(version) }
            return .damaged("bad checksum")
        }
        if pageChecksum(page, pageNumber: slot) != load64(page, 0) { return .damaged("bad checksum") }
        if page.load(fromByteOffset: PageLayout.typeOffset, as: UInt8.self) != PageType.meta.rawValue {
            return .damaged("wrong page type")
        }
        if load32(page, 44) != UInt32(PageLayout.pageSize) { return .damaged("page size \(load32(page, 44))") }
        let meta = MetaPage(
            generation: load64(page, 48), pageCount: load64(page, 56), catalogRoot: load64(page, 64),
            freelistHead: load64(page, 72), freeCount: load64(page, 80), lastSequence: load64(page, 88),
            walSalt: load64(page, 96), masterClientId: Int64(bitPattern: load64(page, 104)), flags: load64(page, 112))
        if meta.generation % 2 != slot { return .damaged("generation \(meta.generation) in slot \(slot)") }
        if let problem = meta.problem { return .damaged(problem) }
        return .valid(meta)
    }

    /// Why this meta breaks the format's limits, or nil. Checked on every meta read (`decode`) and before
    /// every meta write (`ValueBox.writeMeta`), so every meta the engine holds satisfies:
    /// generation < `generationLimit`, lastSequence < `sequenceLimit`, 2 <= pageCount <= `pageCountLimit`,
    /// catalogRoot and freelistHead 0 or disk references to pages in 2..<pageCount, freeCount <= pageCount - 2.
    var problem: String? {
        if generation >= MetaPage.generationLimit { return "generation \(generation) beyond the format limit" }
        if lastSequence >= MetaPage.sequenceLimit { return "last sequence \(lastSequence) beyond the format limit" }
        if pageCount < 2 || pageCount > MetaPage.pageCountLimit { return "page count \(pageCount)" }
        if catalogRoot != 0 && !catalogRoot.isPageNumber(below: pageCount) {
            return "catalog root \(catalogRoot) outside the file (\(pageCount) pages)"
        }
        if freelistHead != 0 && !freelistHead.isPageNumber(below: pageCount) {
            return "freelist head \(freelistHead) outside the file (\(pageCount) pages)"
        }
        if freeCount > pageCount - 2 { return "free count \(freeCount) larger than the file (\(pageCount) pages)" }
        return nil
    }
}
