/// Where each page of a data file sits and how it is sealed: the one owner of "page number → bytes on disk".
///
/// - Plain file: page n at offset n × 4096, sealed with its checksum (`sealPage`).
/// - Encrypted file: an `EncryptionHeader` (4096 bytes, in the clear), then page n at offset
///   4096 + n × `PageCipher.slotSize`, encrypted by `PageCipher` (the tag replaces the checksum; see `seal`).
///
/// Pages are named by disk references (`PageRef`): a page number, plus in an encrypted file the write tag its seal
/// authenticates (`reference(to:writtenBy:)`). Meta pages are pages 0 and 1 in both, with tag 0. Every reader and writer of pages — the pager, checkpoints, meta
/// writes, compaction, the scrub of free pages — goes through one layout, so offsets are computed in one place.
final class DataFileLayout {
    /// The keys of an encrypted file (nil: plain).
    let keys: DatabaseKeys?
    /// Its header (nil: plain).
    let header: EncryptionHeader?
    /// Seals and opens pages of an encrypted file (nil: plain).
    let cipher: PageCipher?
    /// Bytes one page takes in the file.
    let slotSize: Int
    /// Offset of page 0.
    let base: UInt64

    /// The layout of a plain file.
    init() {
        keys = nil
        header = nil
        cipher = nil
        slotSize = PageLayout.pageSize
        base = 0
    }

    /// The layout of an encrypted file with `header`, under `keys` (whose key check the caller verified).
    init(header: EncryptionHeader, keys: DatabaseKeys) {
        self.keys = keys
        self.header = header
        cipher = PageCipher(key: keys.pageKey)
        slotSize = PageCipher.slotSize
        base = UInt64(EncryptionHeader.size)
    }

    var isEncrypted: Bool { cipher != nil }

    /// The byte offset of page `page` (below `MetaPage.pageCountLimit`, so far from overflowing).
    @inline(__always)
    func offset(of page: UInt64) -> UInt64 { base + page * UInt64(slotSize) }

    /// The disk reference to page `page` written by checkpoint generation `generation` (a compaction: the new
    /// file's generation): the page number itself in a plain file, with the generation's write tag in an encrypted
    /// one (see `PageRef`).
    @inline(__always)
    func reference(to page: UInt64, writtenBy generation: UInt64) -> UInt64 {
        isEncrypted ? .diskReference(page: page, tag: UInt64.writeTag(ofGeneration: generation)) : page
    }

    /// The size of a file holding `pageCount` pages.
    func fileSize(pageCount: UInt64) -> UInt64 { offset(of: pageCount) }

    /// Seals the plain page at `page` as the page `reference` names and returns the `slotSize` bytes to write: in a
    /// plain file `page` itself with its checksum set; in an encrypted one `scratch` (at least `slotSize` bytes), the
    /// page encrypted. An encrypted page's checksum field is zero — its GCM tag authenticates every byte, and
    /// `Pager` never checks the field — except in the meta slots, whose decoding checks it in either kind of file
    /// (`MetaPage.encode` sets it).
    func seal(_ page: UnsafeMutableRawPointer, as reference: UInt64, scratch: UnsafeMutableRawPointer) throws(BoxwoodError) -> UnsafeRawPointer {
        let number = reference.diskPageNumber
        guard let cipher else {
            sealPage(page, pageNumber: number)
            return UnsafeRawPointer(page)
        }
        if number >= 2 { store64(page, PageLayout.checksumOffset, 0) } else { sealPage(page, pageNumber: number) }
        try cipher.seal(page, as: reference, into: scratch)
        return UnsafeRawPointer(scratch)
    }

    /// Writes the plain page at `page` as the page `reference` names in `file` (sealing it as `seal` does; `page`
    /// keeps its plain bytes).
    func write(_ page: UnsafeMutableRawPointer, as reference: UInt64, to file: StorageFile) throws(BoxwoodError) {
        let number = reference.diskPageNumber
        guard isEncrypted else {
            sealPage(page, pageNumber: number)
            try file.write(page, count: slotSize, offset: offset(of: number))
            return
        }
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: slotSize, alignment: 16)
        defer { scratch.deallocate() }
        let bytes = try seal(page, as: reference, scratch: scratch)
        try file.write(bytes, count: slotSize, offset: offset(of: number))
    }

    /// What reading one page found.
    enum ReadResult {
        /// The page's plain bytes are in the buffer (its checksum is not verified here).
        case read
        /// The file ends before the page does (the buffer holds zeros where it ends).
        case short
        /// An encrypted page that does not authenticate as the reference's version (the buffer holds zeros).
        case unauthenticated
    }

    /// Reads the page `reference` names in `file` into the 4096 bytes at `page`, decrypting it in an encrypted file.
    func read(_ reference: UInt64, of file: StorageFile, into page: UnsafeMutableRawPointer) throws(BoxwoodError) -> ReadResult {
        let number = reference.diskPageNumber
        page.initializeMemory(as: UInt8.self, repeating: 0, count: PageLayout.pageSize)
        guard let cipher else {
            let count = try file.read(into: page, count: PageLayout.pageSize, offset: offset(of: number))
            return count == PageLayout.pageSize ? .read : .short
        }
        let slot = UnsafeMutableRawPointer.allocate(byteCount: slotSize, alignment: 16)
        defer { slot.deallocate() }
        guard try file.read(into: slot, count: slotSize, offset: offset(of: number)) == slotSize else { return .short }
        if cipher.open(slot, as: reference, into: page) { return .read }
        page.initializeMemory(as: UInt8.self, repeating: 0, count: PageLayout.pageSize)
        return .unauthenticated
    }
}
