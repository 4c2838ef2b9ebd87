/// The write-ahead log: file `wal` beside `data`. A commit appends one record holding the transaction's
/// logical operations; a checkpoint writes the pages, flips the meta, and then resets the log with a new salt.
///
/// File header (32 bytes):
///
///     0   8  magic       "BXWDWAL\0"
///     8   4  version     1
///     12  4  pageSize    4096 (of the data file it belongs to)
///     16  8  salt        must equal the meta's walSalt, otherwise the log is stale and ignored
///     24  8  checksum    XXH64 of bytes 0..<24, seed 0
///
/// Record (32-byte header, then the payload of operations — see `WALOperation`):
///
///     0   4  payloadLength
///     4   4  operationCount
///     8   8  sequence    the TransactionStateVersion this commit produced (previous + 1)
///     16  8  checksum    XXH64(payload, seed: XXH64(bytes 0..<16, seed: salt))
///     24  8  reserved    0
///
/// Recovery replays records in order while each is complete, its checksum (with the current salt) matches
/// and its sequence is exactly the next one; the first record that fails ends the log (a torn tail), which
/// is truncated away. Records from before the last reset carry the old salt and can never match.
final class WriteAheadLog {
    static let headerSize = 32
    static let recordHeaderSize = 32
    static let magic: [UInt8] = Array("BXWDWAL\0".utf8)
    static let version: UInt32 = 1

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
        try file.truncate(to: 0)
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
        store64(p, 24, 0)
        try file.write(p, count: record.count, offset: endOffset)
        if sync { try file.dataSync() }
        endOffset += UInt64(record.count)
    }

    /// Bytes in the log, header included.
    var size: UInt64 { endOffset }

    /// Reads the header; returns its salt, or nil when the file is too short or the header is not valid.
    func readHeaderSalt() throws(BoxwoodError) -> UInt64? {
        let p = UnsafeMutableRawPointer.allocate(byteCount: WriteAheadLog.headerSize, alignment: 8)
        defer { p.deallocate() }
        let n = try file.read(into: p, count: WriteAheadLog.headerSize, offset: 0)
        guard n == WriteAheadLog.headerSize else { return nil }
        for (i, b) in WriteAheadLog.magic.enumerated() where p.load(fromByteOffset: i, as: UInt8.self) != b { return nil }
        guard load32(p, 8) == WriteAheadLog.version, load32(p, 12) == UInt32(PageLayout.pageSize),
              load64(p, 24) == XXH64.hash(p, 24) else { return nil }
        return load64(p, 16)
    }

    /// Replays the records after `afterSequence`. Returns the number of records applied. Sets `endOffset` to
    /// the end of the last valid record; `tornBytes` reports how many bytes follow it.
    func replay(salt: UInt64, afterSequence: UInt64,
                apply: (UInt64, UInt32, UnsafeRawBufferPointer) throws(BoxwoodError) -> Void) throws(BoxwoodError) -> (applied: Int, tornBytes: UInt64) {
        self.salt = salt
        let fileSize = try file.size()
        var offset = UInt64(WriteAheadLog.headerSize)
        var expected = afterSequence + 1
        var applied = 0
        let buffer = ByteBuffer(capacity: 64 << 10)
        let header = UnsafeMutableRawPointer.allocate(byteCount: WriteAheadLog.recordHeaderSize, alignment: 16)
        defer { header.deallocate() }
        while offset + UInt64(WriteAheadLog.recordHeaderSize) <= fileSize {
            let n = try file.read(into: header, count: WriteAheadLog.recordHeaderSize, offset: offset)
            if n < WriteAheadLog.recordHeaderSize { break }
            let length = UInt64(load32(header, 0))
            let operations = load32(header, 4)
            let sequence = load64(header, 8)
            let checksum = load64(header, 16)
            let start = offset + UInt64(WriteAheadLog.recordHeaderSize)
            if start + length > fileSize { break }
            buffer.reset()
            buffer.reserve(Int(length))
            let got = try file.read(into: buffer.memory, count: Int(length), offset: start)
            if got < Int(length) { break }
            let seed = XXH64.hash(header, 16, seed: salt)
            if XXH64.hash(buffer.memory, Int(length), seed: seed) != checksum { break }
            if sequence < expected {
                // Already included in the pages (cannot happen with a fresh salt, harmless if it does).
                offset = start + length
                continue
            }
            if sequence != expected { break }
            try apply(sequence, operations, UnsafeRawBufferPointer(start: buffer.memory, count: Int(length)))
            applied += 1
            expected += 1
            offset = start + length
        }
        endOffset = offset
        return (applied, fileSize - offset)
    }
}
