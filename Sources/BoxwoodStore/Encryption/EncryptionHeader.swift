/// The first 4096 bytes of an encrypted data file, in the clear: what must be read before the key is known.
/// The pages follow it in `PageCipher` slots (page n at offset 4096 + n × `PageCipher.slotSize`), meta pages
/// included. Layout (the common page header's checksum covers the block, seeded with page number 0):
///
///     offset size field
///     0      8    checksum       XXH64 of bytes 8..<4096, seed 0
///     8      1    type           6 (encryption header)
///     32     8    magic          "BOXWOOD\0" (as a meta page)
///     40     4    formatVersion  2: an encrypted file (a build that reads only version 1 reports a newer format)
///     44     4    pageSize       4096
///     48     4    scheme         1: ChaCha20-Poly1305 pages and WAL records, keys by HKDF-SHA256 (`DatabaseKeys`)
///     52     4    reserved       0
///     56     16   salt           the caller's salt (not secret); a different one is a wrong key
///     72     16   fileId         random, drawn when the file is created; mixed into every key of the file
///     88     16   keyCheck       `DatabaseKeys.keyCheck`: tells a wrong key from a damaged file
///
/// Every other byte is zero. The header is written once, when the file is created (a rekey or compaction
/// writes a new file), and never changes.
struct EncryptionHeader: Equatable {
    static let size = PageLayout.pageSize
    static let pageType: UInt8 = 6
    static let formatVersion: UInt32 = 2
    static let scheme: UInt32 = 1

    var salt: [UInt8]
    var fileId: [UInt8]
    var keyCheck: [UInt8]

    /// True when the block at `p` (at least 48 bytes) starts like an encryption header: the magic, the type and
    /// version 2. Says nothing about its checksum.
    static func looksLikeHeader(_ p: UnsafeRawPointer, count: Int) -> Bool {
        guard count >= 48 else { return false }
        for (i, b) in MetaPage.magic.enumerated() where p.load(fromByteOffset: 32 + i, as: UInt8.self) != b { return false }
        return p.load(fromByteOffset: PageLayout.typeOffset, as: UInt8.self) == pageType && load32(p, 40) == formatVersion
    }

    /// Writes the header into the `size` bytes at `p`.
    func encode(into p: UnsafeMutableRawPointer) {
        p.initializeMemory(as: UInt8.self, repeating: 0, count: EncryptionHeader.size)
        p.storeBytes(of: EncryptionHeader.pageType, toByteOffset: PageLayout.typeOffset, as: UInt8.self)
        for (i, b) in MetaPage.magic.enumerated() { p.storeBytes(of: b, toByteOffset: 32 + i, as: UInt8.self) }
        store32(p, 40, EncryptionHeader.formatVersion)
        store32(p, 44, UInt32(PageLayout.pageSize))
        store32(p, 48, EncryptionHeader.scheme)
        for (i, b) in salt.enumerated() { p.storeBytes(of: b, toByteOffset: 56 + i, as: UInt8.self) }
        for (i, b) in fileId.enumerated() { p.storeBytes(of: b, toByteOffset: 72 + i, as: UInt8.self) }
        for (i, b) in keyCheck.enumerated() { p.storeBytes(of: b, toByteOffset: 88 + i, as: UInt8.self) }
        sealPage(p, pageNumber: 0)
    }

    /// The header in the `size` bytes at `p`, or why it is not a valid one.
    static func decode(_ p: UnsafeRawPointer) -> Result<EncryptionHeader, DecodeProblem> {
        guard looksLikeHeader(p, count: size) else { return .failure(.notAHeader) }
        guard pageChecksum(p, pageNumber: 0) == load64(p, 0) else { return .failure(.damaged("bad checksum")) }
        guard load32(p, 44) == UInt32(PageLayout.pageSize) else { return .failure(.damaged("page size \(load32(p, 44))")) }
        guard load32(p, 48) == scheme else { return .failure(.unsupportedScheme(load32(p, 48))) }
        func bytes(_ offset: Int, _ count: Int) -> [UInt8] { (0..<count).map { p.load(fromByteOffset: offset + $0, as: UInt8.self) } }
        return .success(EncryptionHeader(salt: bytes(56, 16), fileId: bytes(72, DatabaseKeys.fileIdSize),
                                         keyCheck: bytes(88, DatabaseKeys.keyCheckSize)))
    }

    enum DecodeProblem: Error, Equatable {
        case notAHeader
        case damaged(String)
        case unsupportedScheme(UInt32)
    }
}
