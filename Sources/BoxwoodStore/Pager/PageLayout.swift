/// Fixed geometry of the data file. See docs/file-format.md for the byte-by-byte description.
///
/// Every page starts with a 32-byte header:
///
///     offset size field
///     0      8    checksum    XXH64 of bytes 8..<pageSize, seed = page number
///     8      1    type        PageType
///     9      1    flags       reserved, 0
///     10     2    count       cells (branch/leaf) or 0
///     12     2    cellStart   lowest byte offset used by cell data (branch/leaf)
///     14     2    fragmented  bytes of dead cell data below the used area (branch/leaf)
///     16     8    link        branch: leftmost child; overflow/freelist: next page (0 = end)
///     24     8    aux         overflow: payload bytes in this page; freelist: entries in this page;
///                                extent head: the value's stored length (see `ExtentPage`)
///
/// All integers in page headers, cells and meta pages are little-endian.
@usableFromInline
enum PageLayout {
    @usableFromInline static let pageSize = 4096
    @usableFromInline static let headerSize = 32
    /// Bytes available to slots plus cells in a branch or leaf page.
    @usableFromInline static let capacity = pageSize - headerSize
    /// Largest cell (with its 2-byte slot) allowed, a third of the capacity, so that any full page plus one
    /// more cell can always be split into two pages that fit.
    @usableFromInline static let maxCellWithSlot = capacity / 3
    /// Leaf cells larger than this move their value to overflow pages (keeps at least four entries a leaf).
    @usableFromInline static let maxInlineLeafCell = 1000
    /// Payload bytes of one overflow page.
    @usableFromInline static let overflowPayload = pageSize - headerSize
    /// Page numbers a freelist page holds.
    @usableFromInline static let freelistEntriesPerPage = (pageSize - headerSize) / 8

    // Header field offsets.
    @usableFromInline static let checksumOffset = 0
    @usableFromInline static let typeOffset = 8
    @usableFromInline static let flagsOffset = 9
    @usableFromInline static let countOffset = 10
    @usableFromInline static let cellStartOffset = 12
    @usableFromInline static let fragmentedOffset = 14
    @usableFromInline static let linkOffset = 16
    @usableFromInline static let auxOffset = 24
}

/// The `type` byte of a page header.
@usableFromInline
enum PageType: UInt8 {
    case meta = 1
    case branch = 2
    case leaf = 3
    case overflow = 4
    case freelist = 5
    /// The head of an extent (`ExtentPage`): a large value in consecutive pages of a plain file, written by
    /// format version 2. (6 is the encryption header block's type, `EncryptionHeader`, never a page's.)
    case extent = 7
}

/// A reference to a tree page: a page of the data file, or (top bit set) an in-memory dirty page that has not
/// been checkpointed yet. 0 means "no page" (page 0 is a meta page and never part of a tree).
///
/// A reference to a page of the file (a disk reference) is the page number in bits 0..<40, plus, in an encrypted
/// file, the page's *write tag* in bits 40..<63 (`writeTagBits`): the checkpoint generation that wrote the page,
/// modulo 2^23. The tag is part of what the page's seal authenticates (`PageCipher`), so a reference names one
/// version of a page, and an older version of the page put back in its place does not open (docs/encryption.md).
/// In a plain file the tag is always 0 and a disk reference is the page number.
///
/// Only the engine makes dirty references. Every disk reference read from disk (meta roots, catalog table roots,
/// branch children, overflow references and links, freelist links) is checked to name a page of the file —
/// dirty bit clear, page number in 2..<pageCount (`isPageNumber(below:)`) — before it is used as a `PageRef`;
/// freelist entries are bare page numbers, checked the same way. So a dirty reference always names a dirty page
/// or blob that exists, and `diskPageNumber` of a disk reference is a page of the file.
@usableFromInline
typealias PageRef = UInt64

@usableFromInline let dirtyFlag: UInt64 = 1 << 63
/// Bits of a disk reference that hold the page number (page counts are at most `MetaPage.pageCountLimit`, 2^40).
@usableFromInline let pageNumberBits: UInt64 = (1 << 40) - 1
/// Bits of a disk reference that hold the write tag (see `PageRef`).
@usableFromInline let writeTagBits: UInt64 = ~pageNumberBits & ~dirtyFlag

extension UInt64 {
    @inlinable var isDirtyRef: Bool { self & dirtyFlag != 0 }
    @inlinable var dirtyIndex: Int { Int(truncatingIfNeeded: self & ~dirtyFlag) }

    /// The page number a disk reference names (without its write tag).
    @inlinable @inline(__always) var diskPageNumber: UInt64 { self & pageNumberBits }
    /// The write tag of a disk reference (0 in a plain file).
    @inlinable @inline(__always) var writeTag: UInt32 { UInt32(truncatingIfNeeded: (self & writeTagBits) >> 40) }

    /// The disk reference to page `page` (below 2^40) written with tag `tag` (23 bits).
    @inlinable @inline(__always)
    static func diskReference(page: UInt64, tag: UInt32) -> UInt64 { page | (UInt64(tag) << 40) & writeTagBits }

    /// The write tag of pages written by checkpoint generation `generation` (of an encrypted file).
    @inlinable @inline(__always)
    static func writeTag(ofGeneration generation: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: generation & (writeTagBits >> 40)) }

    /// True when this disk reference, read from disk, can name a non-meta page of a file of `pageCount` pages:
    /// the dirty bit clear and the page number at least 2 and below `pageCount` (which is at most
    /// `MetaPage.pageCountLimit`). Whether the write tag is right is for the page's seal to say.
    @inlinable @inline(__always)
    func isPageNumber(below pageCount: UInt64) -> Bool {
        self & dirtyFlag == 0 && diskPageNumber >= 2 && diskPageNumber < pageCount
    }
}

@inlinable @inline(__always)
func makeDirtyRef(_ index: Int) -> PageRef { UInt64(index) | dirtyFlag }

/// Computes the checksum of a page (bytes 8..<pageSize, seeded with its page number).
@inlinable
func pageChecksum(_ page: UnsafeRawPointer, pageNumber: UInt64) -> UInt64 {
    XXH64.hash(page + 8, PageLayout.pageSize - 8, seed: pageNumber)
}

/// Stores the checksum of a page into its header.
@inlinable
func sealPage(_ page: UnsafeMutableRawPointer, pageNumber: UInt64) {
    storeInteger(page, 0, pageChecksum(page, pageNumber: pageNumber))
}

