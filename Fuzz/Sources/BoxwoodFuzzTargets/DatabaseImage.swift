@_spi(Fuzzing) import BoxwoodStore

/// A database directory as a fuzz input: the pages of `data`, the `wal` (records in plain form), the shared
/// `header`, and flags saying which checksums to leave alone. ``files()`` rebuilds the three files and, unless a
/// flag says otherwise, recomputes every checksum and the WAL whitening after the mutation, so that mutated
/// bytes get past the integrity checks and reach the decoders behind them.
///
/// Encoding (all integers little-endian; reads past the end of the input yield zeros):
///
///     u8   flags                 see `Flag`
///     u16  page count P          (at most `maxPages`)
///     P ×  page                  `PageCodec`: u16 n | n bytes from the start | u16 m | m bytes at the end
///     u16  tail length + bytes   a partial page after the last full one (a torn extension)
///     u32  WAL length + bytes    0xFFFF_FFFF: no `wal` file. Records are plain: not whitened, any checksums
///     u8   header present        then the 8192-byte `header` as one `PageCodec` page of that size
struct DatabaseImage {
    /// Bits of the flags byte.
    enum Flag {
        /// Keep the page checksums of the input (do not reseal).
        static let keepPageChecksums: UInt8 = 1 << 0
        /// Keep the WAL header checksum of the input.
        static let keepWALHeaderChecksum: UInt8 = 1 << 1
        /// Keep the WAL record checksums of the input.
        static let keepRecordChecksums: UInt8 = 1 << 2
        /// Write the WAL records without whitening.
        static let unwhitenedRecords: UInt8 = 1 << 3
        /// Keep the shared header's checksum word of the input.
        static let keepHeaderChecksum: UInt8 = 1 << 4
        /// After opening read-write, run a write transaction and a checkpoint.
        static let write: UInt8 = 1 << 5
        /// After opening read-write, compact the database.
        static let compact: UInt8 = 1 << 6
        /// Skip the read-only open.
        static let skipReadOnly: UInt8 = 1 << 7
    }

    static let maxPages = 256
    static let pageSize = 4096

    var flags: UInt8 = 0
    var pages: [[UInt8]] = []
    var tail: [UInt8] = []
    /// The WAL: its 32-byte header then plain records (nil: no file).
    var wal: [UInt8]?
    /// The shared header file (nil: no file).
    var header: [UInt8]?

    init() {}

    /// Parses a fuzz input.
    init(parsing bytes: UnsafeRawBufferPointer) {
        var input = FuzzInput(bytes)
        self.init(reading: &input)
    }

    init(reading input: inout FuzzInput) {
        flags = input.u8()
        let pageCount = min(input.u16(), DatabaseImage.maxPages)
        for _ in 0..<pageCount {
            if input.isAtEnd { break }
            pages.append(PageCodec.decode(&input, size: DatabaseImage.pageSize))
        }
        tail = input.take(min(input.u16(), DatabaseImage.pageSize - 1))
        let walLength = input.u32()
        if walLength != UInt32.max { wal = input.take(Int(walLength)) }
        if input.u8() != 0 { header = PageCodec.decode(&input, size: FuzzingSupport.sharedHeaderSize) }
    }

    /// The fuzz input for this image.
    func serialized() -> [UInt8] {
        var out: [UInt8] = [flags]
        out.appendLE(UInt16(pages.count))
        for page in pages { out += PageCodec.encode(page) }
        out.appendLE(UInt16(tail.count))
        out += tail
        if let wal {
            out.appendLE(UInt32(wal.count))
            out += wal
        } else {
            out.appendLE(UInt32.max)
        }
        if let header {
            out.append(1)
            out += PageCodec.encode(header)
        } else {
            out.append(0)
        }
        return out
    }

    /// Captures the files of the database directory `path` (the WAL records un-whitened).
    static func capture(_ path: String) throws -> DatabaseImage {
        var image = DatabaseImage()
        let data = try ScratchFiles.read(path + "/data") ?? []
        var offset = 0
        while offset + pageSize <= data.count {
            image.pages.append(Array(data[offset..<offset + pageSize]))
            offset += pageSize
        }
        image.tail = Array(data[offset...])
        if var wal = try ScratchFiles.read(path + "/wal") {
            WALCodec.unwhiten(&wal)
            image.wal = wal
        }
        image.header = try ScratchFiles.read(path + "/header")
        return image
    }

    /// The files to write: `data`, and `wal` and `header` when present, with checksums fixed up as the flags say.
    func files() -> (data: [UInt8], wal: [UInt8]?, header: [UInt8]?) {
        var data: [UInt8] = []
        data.reserveCapacity(pages.count * DatabaseImage.pageSize + tail.count)
        for (number, page) in pages.enumerated() {
            var page = page
            if flags & Flag.keepPageChecksums == 0 {
                page.withUnsafeMutableBytes { FuzzingSupport.sealPage($0.baseAddress!, pageNumber: UInt64(number)) }
            }
            data += page
        }
        data += tail
        var walFile = wal
        if var bytes = walFile {
            WALCodec.seal(&bytes, fixHeader: flags & Flag.keepWALHeaderChecksum == 0,
                          fixRecords: flags & Flag.keepRecordChecksums == 0,
                          whiten: flags & Flag.unwhitenedRecords == 0)
            walFile = bytes
        }
        var headerFile = header
        if var bytes = headerFile, flags & Flag.keepHeaderChecksum == 0, bytes.count >= 72 {
            let checksum = FuzzingSupport.sharedHeaderChecksum(generation: bytes.loadLE64(24), walSalt: bytes.loadLE64(32),
                                                               version: bytes.loadLE64(40), walEnd: bytes.loadLE64(48),
                                                               masterClientId: bytes.loadLE64(56))
            bytes.storeLE64(checksum, at: 64)
            headerFile = bytes
        }
        return (data, walFile, headerFile)
    }
}

/// A page of `size` bytes stored as the bytes before and after its longest run of zeros (slotted pages keep
/// their slots at the start and their cells at the end, with zeros between).
enum PageCodec {
    static func encode(_ page: [UInt8]) -> [UInt8] {
        // The longest run of zeros.
        var bestStart = page.count, bestLength = 0
        var runStart = -1
        for i in 0...page.count {
            if i < page.count && page[i] == 0 {
                if runStart < 0 { runStart = i }
            } else if runStart >= 0 {
                if i - runStart > bestLength { bestStart = runStart; bestLength = i - runStart }
                runStart = -1
            }
        }
        let prefix = Array(page[..<bestStart])
        let suffix = Array(page[(bestStart + bestLength)...])
        var out: [UInt8] = []
        out.appendLE(UInt16(prefix.count))
        out += prefix
        out.appendLE(UInt16(suffix.count))
        out += suffix
        return out
    }

    static func decode(_ input: inout FuzzInput, size: Int) -> [UInt8] {
        var page = [UInt8](repeating: 0, count: size)
        let prefix = input.take(min(input.u16(), size))
        let suffix = input.take(min(input.u16(), size - prefix.count))
        for (i, b) in prefix.enumerated() { page[i] = b }
        for (i, b) in suffix.enumerated() { page[size - suffix.count + i] = b }
        return page
    }
}

/// The WAL's record framing: checksums and whitening (see docs/file-format.md, "WAL").
enum WALCodec {
    static var headerSize: Int { FuzzingSupport.walHeaderSize }

    /// A WAL header for `salt` (version `version`), with its checksum.
    static func header(salt: UInt64, version: UInt32) -> [UInt8] {
        var bytes = FuzzingSupport.walMagic
        bytes.appendLE(version)
        bytes.appendLE(UInt32(FuzzingSupport.pageSize))
        bytes.appendLE(salt)
        bytes.appendLE(bytes.withUnsafeBytes { FuzzingSupport.xxh64($0.baseAddress!, 24, seed: 0) })
        return bytes
    }

    /// A plain record: the 32-byte header (checksums left zero) and the payload.
    static func plainRecord(payload: [UInt8], operations: UInt32, sequence: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLE(UInt32(payload.count))
        bytes.appendLE(operations)
        bytes.appendLE(sequence)
        bytes += [UInt8](repeating: 0, count: 16)
        return bytes + payload
    }

    /// Turns a WAL with plain records into the file: fixes the header checksum, computes each record's
    /// checksums under the header's salt, and whitens each record at its offset.
    static func seal(_ wal: inout [UInt8], fixHeader: Bool, fixRecords: Bool, whiten: Bool) {
        let size = headerSize
        if fixHeader && wal.count >= size {
            let checksum = wal.withUnsafeBytes { FuzzingSupport.xxh64($0.baseAddress!, 24, seed: 0) }
            wal.storeLE64(checksum, at: 24)
        }
        let salt = wal.loadLE64(16)
        var offset = size
        wal.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            while offset < raw.count {
                let available = raw.count - offset
                let h = base + offset
                if available < size {
                    // A header cut short by the end of the file.
                    if whiten { FuzzingSupport.whitenWALRecord(h, count: available, salt: salt, recordOffset: UInt64(offset)) }
                    return
                }
                let length = Int(h.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian)
                let payloadAvailable = min(length, available - size)
                if fixRecords {
                    let seed = FuzzingSupport.xxh64(h, 16, seed: salt)
                    let payloadChecksum = FuzzingSupport.xxh64(h + size, payloadAvailable, seed: seed)
                    h.storeBytes(of: payloadChecksum.littleEndian, toByteOffset: 16, as: UInt64.self)
                    h.storeBytes(of: FuzzingSupport.xxh64(h, 24, seed: salt).littleEndian, toByteOffset: 24, as: UInt64.self)
                }
                if whiten {
                    FuzzingSupport.whitenWALRecord(h, count: size + payloadAvailable, salt: salt, recordOffset: UInt64(offset))
                }
                offset += size + payloadAvailable
            }
        }
    }

    /// The inverse of the whitening part of ``seal`` for a WAL file written by the engine.
    static func unwhiten(_ wal: inout [UInt8]) {
        let size = headerSize
        guard wal.count >= size else { return }
        let salt = wal.loadLE64(16)
        var offset = size
        wal.withUnsafeMutableBytes { raw in
            let base = raw.baseAddress!
            while offset + size <= raw.count {
                let h = base + offset
                FuzzingSupport.whitenWALRecord(h, count: size, salt: salt, recordOffset: UInt64(offset))
                let length = Int(h.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian)
                let payload = min(length, raw.count - offset - size)
                FuzzingSupport.whitenWALRecord(h + size, count: payload, salt: salt, recordOffset: UInt64(offset), streamStart: size)
                offset += size + payload
            }
        }
    }

    /// The plain records of an un-whitened WAL: (operations word, payload) of each.
    static func records(_ wal: [UInt8]) -> [(operations: UInt32, payload: [UInt8])] {
        var result: [(UInt32, [UInt8])] = []
        var offset = headerSize
        while offset + headerSize <= wal.count {
            let length = Int(wal.loadLE32(offset))
            let end = min(wal.count, offset + headerSize + length)
            result.append((wal.loadLE32(offset + 4), Array(wal[(offset + headerSize)..<end])))
            offset += headerSize + length
        }
        return result
    }
}
