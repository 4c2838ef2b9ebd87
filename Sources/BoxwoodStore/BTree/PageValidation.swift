extension PageType {
    /// The type byte of the page at `p` (a `PageType` raw value on a sound page).
    @inline(__always) static func raw(of p: UnsafeRawPointer) -> UInt8 { p.load(fromByteOffset: PageLayout.typeOffset, as: UInt8.self) }

    /// Structural sanity of a checksum-valid page of the tree area, by its type: the pager's page validator
    /// (`Pager.validatePage`), handed in by the engine. Returns a reason when the page is malformed, so that a
    /// crafted or buggy file can never make a lookup read outside the page, take a disk page number for an
    /// in-memory page, or overflow a length.
    ///
    /// `pageCount` is the page count of the file the page was read from; nil for a page the engine made in
    /// memory (whose children may be dirty references). For a page from disk this checks every number it
    /// holds that the engine later uses as a page number or a length: branch children and overflow/freelist
    /// links are page numbers of the file (`isPageNumber(below:)`: untagged, in 2..<pageCount), overflow and
    /// freelist counts fit their page, and each overflow reference of a leaf names a page of the file with a
    /// stored length the file can hold and a raw length its codec can produce, both below 2^32. Pages are
    /// validated once, when first touched (`Pager.diskPage`), so readers rely on this without re-checking.
    static func problem(_ p: UnsafeRawPointer, pageCount: UInt64?) -> String? {
        guard let type = PageType(rawValue: raw(of: p)) else { return "unknown page type \(raw(of: p))" }
        switch type {
        case .meta: return "meta page inside the tree area"
        case .branch: return BranchPage.problem(p, pageCount: pageCount)
        case .leaf: return LeafPage.problem(p, pageCount: pageCount)
        case .overflow: return OverflowPage.problem(p, pageCount: pageCount)
        case .freelist: return FreelistPage.problem(p, pageCount: pageCount)
        case .extent: return ExtentPage.problem(p, pageCount: pageCount)
        }
    }
}
