/// The 32-byte header of a WAL record (layout in `WriteAheadLog`), and the one place records are sealed and
/// opened: the checksums, the whitening keyed by (salt, offset), and what a header must hold to be believed.
/// `WriteAheadLog.append` seals; replay, reading published records, and the searches for an intact record
/// after damage open.
struct WALRecordHeader {
    /// The payload's length in bytes.
    let payloadLength: Int
    /// The operations word: the operation count (`WriteAheadLog.operationCountMask`) and the record flags.
    let operations: UInt32
    /// The TransactionStateVersion the commit produced.
    let sequence: UInt64
    /// The payload's XXH64 and the seed it was hashed with.
    private let payloadChecksum: UInt64
    private let payloadSeed: UInt64
    /// The whitening key of the record (its salt and offset).
    private let key: UInt64

    /// The operation count without the flags.
    var operationCount: UInt32 { operations & WriteAheadLog.operationCountMask }

    /// Unwhitens the `WriteAheadLog.recordHeaderSize` bytes at `h` — read from offset `offset` of a log salted
    /// `salt` — in place, and returns the header when its checksum holds (nil: damaged, torn, or not a record
    /// of this log at this offset).
    static func open(_ h: UnsafeMutableRawPointer, offset: UInt64, salt: UInt64) -> WALRecordHeader? {
        let key = RecordWhitening.key(salt: salt, offset: offset)
        RecordWhitening.apply(h, count: WriteAheadLog.recordHeaderSize, key: key)
        guard load64(h, 24) == XXH64.hash(h, 24, seed: salt) else { return nil }
        return WALRecordHeader(payloadLength: Int(load32(h, 0)), operations: load32(h, 4), sequence: load64(h, 8),
                               payloadChecksum: load64(h, 16), payloadSeed: XXH64.hash(h, 16, seed: salt), key: key)
    }

    /// Unwhitens the record's payload (`payloadLength` bytes at `payload`) in place; true when its checksum holds.
    func openPayload(_ payload: UnsafeMutableRawPointer) -> Bool {
        RecordWhitening.apply(payload, count: payloadLength, key: key, start: WriteAheadLog.recordHeaderSize)
        return XXH64.hash(payload, payloadLength, seed: payloadSeed) == payloadChecksum
    }

    /// Fills in the header of a record — `recordHeaderSize` reserved bytes at `record`, then `payloadLength` bytes
    /// of payload — to be written at `offset` of a log salted `salt`, and whitens the whole record in place.
    static func seal(_ record: UnsafeMutableRawPointer, payloadLength: Int, operations: UInt32, sequence: UInt64,
                     offset: UInt64, salt: UInt64) {
        store32(record, 0, UInt32(payloadLength))
        store32(record, 4, operations)
        store64(record, 8, sequence)
        let seed = XXH64.hash(record, 16, seed: salt)
        store64(record, 16, XXH64.hash(record + WriteAheadLog.recordHeaderSize, payloadLength, seed: seed))
        store64(record, 24, XXH64.hash(record, 24, seed: salt))
        RecordWhitening.apply(record, count: WriteAheadLog.recordHeaderSize + payloadLength, key: RecordWhitening.key(salt: salt, offset: offset))
    }
}
