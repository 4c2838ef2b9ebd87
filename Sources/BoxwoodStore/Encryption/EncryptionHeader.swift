/// The first 4096 bytes of an encrypted data file, in the clear: what must be read before the key is known.
/// The pages follow it in `PageCipher` slots (page n at offset 4096 + n × `PageCipher.slotSize`), meta pages
/// included.
///
/// The block holds the header twice, at offsets 0 and 2048 (two different 512-byte sectors), so that one damaged
/// sector never loses the salt or the file id — without them no page of the file could be opened. Each 256-byte
/// copy:
///
///     offset size field
///     0      8    checksum       XXH64 of bytes 8..<256 of the copy, seed 0
///     8      1    type           6 (encryption header)
///     32     8    magic          "BOXWOOD\0" (as a meta page)
///     40     4    formatVersion  2: an encrypted file (a build that reads only version 1 reports a newer format)
///     44     4    pageSize       4096
///     48     4    scheme         2: AES-256-GCM pages and WAL records, keys by HKDF-SHA256 (`DatabaseKeys`), each page
///                                   authenticated with its number and write tag (`PageCipher`; scheme 1, a pre-release
///                                   without the tag, is refused as unknown)
///     52     4    reserved       0
///     56     16   salt           the caller's salt (not secret); a different one is a wrong key
///     72     16   fileId         random, drawn when the file is created; mixed into every key of the file
///     88     16   keyCheck       `DatabaseKeys.keyCheck`: tells a wrong key from a damaged file
///
/// Every other byte of the block is zero. The header is written once, when the file is created (a rekey or
/// compaction writes a new file), and never changes.
struct EncryptionHeader: Equatable {
    static let size = PageLayout.pageSize
    static let copySize = 256
    static let copyOffsets = [0, 2048]
    /// The bytes of a copy that may be nonzero (its fields).
    static let fieldsSize = 104
    static let pageType: UInt8 = 6
    static let formatVersion: UInt32 = 2
    static let scheme: UInt32 = 2

    var salt: [UInt8]
    var fileId: [UInt8]
    var keyCheck: [UInt8]

    /// The first `size` bytes of `file`, zero-padded when it is shorter, and how many of them it holds: what every
    /// reader of an encryption header starts from (open, salvage, the interrupted-creation check).
    static func readBlock(of file: StorageFile) throws(BoxwoodError) -> (bytes: [UInt8], count: Int) {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        let count = try file.read(into: buffer, count: size, offset: 0)
        return (Array(UnsafeRawBufferPointer(start: buffer, count: size)), count)
    }

    /// True when the block at `p` (`count` bytes read) is meant as an encryption header: in one of its copies the
    /// type is 6 and the magic or version 2 holds too, so that a damaged magic or version still names it. A plain
    /// file's page 0 is a meta page (type 1), whatever its version. Says nothing about checksums; `decode` checks
    /// everything.
    static func looksLikeHeader(_ p: UnsafeRawPointer, count: Int) -> Bool {
        copyOffsets.contains { offset in
            offset + 48 <= count && (p + offset).load(fromByteOffset: PageLayout.typeOffset, as: UInt8.self) == pageType && marks(p + offset) >= 2
        }
    }

    /// How many of a copy's three marks hold.
    private static func marks(_ copy: UnsafeRawPointer) -> Int {
        let magic = MetaPage.magic.indices.allSatisfy { copy.load(fromByteOffset: 32 + $0, as: UInt8.self) == MetaPage.magic[$0] }
        let type = copy.load(fromByteOffset: PageLayout.typeOffset, as: UInt8.self) == pageType
        let version = load32(copy, 40) == formatVersion
        return (magic ? 1 : 0) + (type ? 1 : 0) + (version ? 1 : 0)
    }

    /// Writes the header (both copies) into the `size` bytes at `p`.
    func encode(into p: UnsafeMutableRawPointer) {
        p.initializeMemory(as: UInt8.self, repeating: 0, count: EncryptionHeader.size)
        for offset in EncryptionHeader.copyOffsets {
            let copy = p + offset
            copy.storeBytes(of: EncryptionHeader.pageType, toByteOffset: PageLayout.typeOffset, as: UInt8.self)
            for (i, b) in MetaPage.magic.enumerated() { copy.storeBytes(of: b, toByteOffset: 32 + i, as: UInt8.self) }
            store32(copy, 40, EncryptionHeader.formatVersion)
            store32(copy, 44, UInt32(PageLayout.pageSize))
            store32(copy, 48, EncryptionHeader.scheme)
            for (i, b) in salt.enumerated() { copy.storeBytes(of: b, toByteOffset: 56 + i, as: UInt8.self) }
            for (i, b) in fileId.enumerated() { copy.storeBytes(of: b, toByteOffset: 72 + i, as: UInt8.self) }
            for (i, b) in keyCheck.enumerated() { copy.storeBytes(of: b, toByteOffset: 88 + i, as: UInt8.self) }
            store64(copy, 0, EncryptionHeader.checksum(copy))
        }
    }

    private static func checksum(_ copy: UnsafeRawPointer) -> UInt64 { XXH64.hash(copy + 8, copySize - 8, seed: 0) }

    /// The header in the `size` bytes at `p` (the first intact copy), or why there is none.
    static func decode(_ p: UnsafeRawPointer) -> Result<EncryptionHeader, DecodeProblem> {
        guard looksLikeHeader(p, count: size) else { return .failure(.notAHeader) }
        var problem = DecodeProblem.damaged("both copies fail their checksum")
        for offset in copyOffsets {
            let copy = p + offset
            guard checksum(copy) == load64(copy, 0) else { continue }
            guard marks(copy) == 3 else { problem = .damaged("a mark of the header is wrong"); continue }
            guard load32(copy, 44) == UInt32(PageLayout.pageSize) else { problem = .damaged("page size \(load32(copy, 44))"); continue }
            guard load32(copy, 48) == scheme else { problem = .unsupportedScheme(load32(copy, 48)); continue }
            func bytes(_ at: Int, _ count: Int) -> [UInt8] { (0..<count).map { copy.load(fromByteOffset: at + $0, as: UInt8.self) } }
            return .success(EncryptionHeader(salt: bytes(56, 16), fileId: bytes(72, DatabaseKeys.fileIdSize),
                                             keyCheck: bytes(88, DatabaseKeys.keyCheckSize)))
        }
        return .failure(problem)
    }

    /// True when every byte of the block (`count` bytes read) outside the copies' fields is zero: what writing a
    /// header can leave.
    static func holdsOnlyHeaderBytes(_ p: UnsafeRawPointer, count: Int) -> Bool {
        for i in 0..<count where p.load(fromByteOffset: i, as: UInt8.self) != 0 {
            if !copyOffsets.contains(where: { i >= $0 && i < $0 + fieldsSize }) { return false }
        }
        return true
    }

    enum DecodeProblem: Error, Equatable {
        case notAHeader
        case damaged(String)
        case unsupportedScheme(UInt32)
    }
}
