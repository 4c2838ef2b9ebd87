/// The write-ahead log: file `wal` beside `data`. A commit appends one record holding the transaction's
/// logical operations; a checkpoint writes the pages, flips the meta, and then resets the log with a new salt.
///
/// File header (32 bytes, not whitened):
///
///     0   8  magic       "BXWDWAL\0"
///     8   4  version     3 (version 2 logs, which cannot hold `setMasterClientId`, are read too)
///     12  4  pageSize    4096 (of the data file it belongs to)
///     16  8  salt        must equal the meta's walSalt, otherwise the log is stale and ignored
///     24  8  checksum    XXH64 of bytes 0..<24, seed 0
///
/// Record (32-byte header, then the payload of operations — see `WALOperation`), whitened as a whole with
/// `RecordWhitening` keyed by (salt, offset of the record):
///
///     0   4  payloadLength
///     4   4  operationCount
///     8   8  sequence        the TransactionStateVersion this commit produced (previous + 1)
///     16  8  payloadChecksum XXH64(payload, seed: XXH64(bytes 0..<16, seed: salt))
///     24  8  headerChecksum  XXH64(bytes 0..<24, seed: salt)
///
/// Recovery replays records in order while each is complete, both checksums match and its sequence is the
/// next one. The log is truncated durably before reuse, so a sector that never reached the disk reads as
/// zeros (or lies past the end of the file). The first record that fails therefore ends the log — a torn
/// tail, truncated away — when it is cut short by the end of the file or contains an all-zero sector;
/// a failing record with no such sign is bit rot or an overwrite, and open refuses with `checksumMismatch`
/// naming its offset instead of silently dropping acknowledged commits.
final class WriteAheadLog {
    static let headerSize = 32
    static let recordHeaderSize = 32
    static let magic: [UInt8] = Array("BXWDWAL\0".utf8)
    static let version: UInt32 = 3
    /// Versions whose records this build replays.
    static let readableVersions: ClosedRange<UInt32> = 2...3

    let file: StorageFile
    private(set) var salt: UInt64 = 0
    /// Where the next record goes (end of the last valid record).
    private(set) var endOffset: UInt64 = 0

    init(file: StorageFile) {
        self.file = file
    }

    /// Empties the log and writes a header with `salt`.
    func reset(salt: UInt64, sync: Bool) throws(BoxwoodError) {
        let p = UnsafeMutableRawPointer.allocate(byteCount: WriteAheadLog.headerSize, alignment: 8)
        defer { p.deallocate() }
        p.initializeMemory(as: UInt8.self, repeating: 0, count: WriteAheadLog.headerSize)
        do { // header fields
            for (i, b) in WriteAheadLog.magic.enumerated() { p.storeBytes(of: b, toByteOffset: i, as: UInt8.self) }
            store32(p, 8, WriteAheadLog.version)
            store32(p, 12, UInt32(PageLayout.pageSize))
            store64(p, 16, salt)
            store64(p, 24, XXH64.hash(p, 24))
        }
        // The truncation is made durable before anything new is written, so that a sector of a later
        // record that never reaches the disk reads back as zeros, not as a stale record.
        try file.truncate(to: 0)
        if sync { try file.sync() }
        try file.write(p, count: WriteAheadLog.headerSize, offset: 0)
        if sync { try file.sync() }
        self.salt = salt
        endOffset = UInt64(WriteAheadLog.headerSize)
    }

    /// Appends a record. `record` holds `recordHeaderSize` reserved bytes followed by the payload; the header
    /// is filled in here so the record goes to the file in one write.
    func append(sequence: UInt64, record: ByteBuffer, operationCount: UInt32, sync: Bool) throws(BoxwoodError) {
        let p = record.memory
        let payloadLength = record.count - WriteAheadLog.recordHeaderSize
        store32(p, 0, UInt32(payloadLength))
        store32(p, 4, operationCount)
        store64(p, 8, sequence)
        let seed = XXH64.hash(p, 16, seed: salt)
        store64(p, 16, XXH64.hash(p + WriteAheadLog.recordHeaderSize, payloadLength, seed: seed))
        store64(p, 24, XXH64.hash(p, 24, seed: salt))
        RecordWhitening.apply(p, count: record.count, key: RecordWhitening.key(salt: salt, offset: endOffset))
        try file.write(p, count: record.count, offset: endOffset)
        if sync { try file.dataSync() }
        endOffset += UInt64(record.count)
    }

    /// Cuts the log back to `offset` (the end of the last record that is known to have committed) and makes
    /// that durable, so that a record whose commit failed can never be replayed.
    func rollBack(to offset: UInt64, sync: Bool) throws(BoxwoodError) {
        try file.truncate(to: offset)
        if sync { try file.sync() }
        endOffset = offset
    }

    /// Points the log at the start of a log with `salt` (its header is written by whoever resets it).
    func restart(salt: UInt64) {
        self.salt = salt
        endOffset = UInt64(WriteAheadLog.headerSize)
    }

    /// Reads the records in `endOffset..<end` — commits another value box published — and hands each to
    /// `apply`. Returns false, leaving `endOffset` after the last record applied, when a record is missing or
    /// fails its checks (a concurrent checkpoint reset the log); the caller re-reads the shared header.
    func readPublished(upTo end: UInt64, afterSequence: UInt64,
                       apply: (UInt64, UInt32, UnsafeRawBufferPointer) throws(BoxwoodError) -> Void) throws(BoxwoodError) -> Bool {
        guard end > endOffset else { return end == endOffset }
        let count = Int(end - endOffset)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
        defer { buffer.deallocate() }
        guard try file.read(into: buffer, count: count, offset: endOffset) == count else { return false }
        var position = 0
        var expected = afterSequence + 1
        let headerSize = WriteAheadLog.recordHeaderSize
        let start = endOffset
        defer { endOffset = start + UInt64(position) }
        while position < count {
            guard position + headerSize <= count else { return false }
            let h = buffer + position
            let key = RecordWhitening.key(salt: salt, offset: start + UInt64(position))
            RecordWhitening.apply(h, count: headerSize, key: key)
            guard load64(h, 24) == XXH64.hash(h, 24, seed: salt) else { return false }
            let length = Int(load32(h, 0))
            guard position + headerSize + length <= count, load64(h, 8) == expected else { return false }
            let payload = h + headerSize
            RecordWhitening.apply(payload, count: length, key: key, start: headerSize)
            guard XXH64.hash(payload, length, seed: XXH64.hash(h, 16, seed: salt)) == load64(h, 16) else { return false }
            try apply(expected, load32(h, 4), UnsafeRawBufferPointer(start: payload, count: length))
            position += headerSize + length
            expected += 1
        }
        return true
    }

    /// Bytes in the log, header included.
    var size: UInt64 { endOffset }

    /// What the file's header says.
    enum Header: Equatable {
        /// A valid header of this version, with its salt.
        case valid(salt: UInt64)
        /// An intact header (magic and checksum) of another version.
        case otherVersion(UInt32)
        /// Too short, or not a valid header.
        case invalid
    }

    /// Reads and validates the header.
    func readHeader() throws(BoxwoodError) -> Header {
        let p = UnsafeMutableRawPointer.allocate(byteCount: WriteAheadLog.headerSize, alignment: 8)
        defer { p.deallocate() }
        guard try file.read(into: p, count: WriteAheadLog.headerSize, offset: 0) == WriteAheadLog.headerSize else { return .invalid }
        for (i, b) in WriteAheadLog.magic.enumerated() where p.load(fromByteOffset: i, as: UInt8.self) != b { return .invalid }
        guard load64(p, 24) == XXH64.hash(p, 24) else { return .invalid }
        guard WriteAheadLog.readableVersions.contains(load32(p, 8)) else { return .otherVersion(load32(p, 8)) }
        guard load32(p, 12) == UInt32(PageLayout.pageSize) else { return .invalid }
        return .valid(salt: load64(p, 16))
    }

    /// Replays the records after `afterSequence`. Returns the number of records applied. Sets `endOffset` to
    /// the end of the last valid record; `tornBytes` reports how many bytes follow it. Throws
    /// `checksumMismatch` for a damaged record that cannot be a torn write (see the type's documentation).
    func replay(salt: UInt64, afterSequence: UInt64,
                apply: (UInt64, UInt32, UnsafeRawBufferPointer) throws(BoxwoodError) -> Void) throws(BoxwoodError) -> (applied: Int, tornBytes: UInt64) {
        self.salt = salt
        let fileSize = try file.size()
        var offset = UInt64(WriteAheadLog.headerSize)
        var expected = afterSequence + 1
        var applied = 0
        let buffer = ByteBuffer(capacity: 64 << 10)
        let headerSize = WriteAheadLog.recordHeaderSize
        while offset < fileSize {
            // A header cut short by the end of the file is a torn append.
            guard offset + UInt64(headerSize) <= fileSize else { break }
            buffer.reset()
            buffer.reserve(headerSize)
            let h = buffer.memory
            guard try file.read(into: h, count: headerSize, offset: offset) == headerSize else { break }
            let torn = Sectors.containsZeroSector(h, count: headerSize, offset: offset)
            let key = RecordWhitening.key(salt: salt, offset: offset)
            RecordWhitening.apply(h, count: headerSize, key: key)
            guard load64(h, 24) == XXH64.hash(h, 24, seed: salt) else {
                if torn { break }
                throw .checksumMismatch(file: file.path, page: nil, offset: offset)
            }
            let length = Int(load32(h, 0))
            let operations = load32(h, 4)
            let sequence = load64(h, 8)
            let checksum = load64(h, 16)
            let seed = XXH64.hash(h, 16, seed: salt)
            let start = offset + UInt64(headerSize)
            if start + UInt64(length) > fileSize { break }
            buffer.reserve(headerSize + length)
            let payload = buffer.memory + headerSize
            guard try file.read(into: payload, count: length, offset: start) == length else { break }
            let payloadTorn = Sectors.containsZeroSector(payload, count: length, offset: start)
            RecordWhitening.apply(payload, count: length, key: key, start: headerSize)
            guard XXH64.hash(payload, length, seed: seed) == checksum else {
                if payloadTorn { break }
                throw .checksumMismatch(file: file.path, page: nil, offset: offset)
            }
            if sequence < expected {
                // Already included in the pages (cannot happen with a fresh salt, harmless if it does).
                offset = start + UInt64(length)
                continue
            }
            guard sequence == expected else {
                throw .corrupted(file: file.path, page: nil,
                                 reason: "WAL record at offset \(offset) has sequence \(sequence), expected \(expected)")
            }
            try apply(sequence, operations, UnsafeRawBufferPointer(start: payload, count: length))
            applied += 1
            expected += 1
            offset = start + UInt64(length)
        }
        endOffset = offset
        return (applied, fileSize - offset)
    }
}
