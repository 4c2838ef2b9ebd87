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
    /// Where the record starts in its log.
    private let offset: UInt64

    /// The operation count without the flags.
    var operationCount: UInt32 { operations & WriteAheadLog.operationCountMask }

    /// True for an end marker (`WriteAheadLog`, version 5): no payload and no operations, which no commit has.
    var isEndMarker: Bool { payloadLength == 0 && operations == 0 }

    /// Unwhitens the `WriteAheadLog.recordHeaderSize` bytes at `h` — read from offset `offset` of a log salted
    /// `salt` — in place, and returns the header when its checksum holds (nil: damaged, torn, or not a record
    /// of this log at this offset).
    static func open(_ h: UnsafeMutableRawPointer, offset: UInt64, salt: UInt64) -> WALRecordHeader? {
        let key = RecordWhitening.key(salt: salt, offset: offset)
        RecordWhitening.apply(h, count: WriteAheadLog.recordHeaderSize, key: key)
        guard load64(h, 24) == XXH64.hash(h, 24, seed: salt) else { return nil }
        return WALRecordHeader(payloadLength: Int(load32(h, 0)), operations: load32(h, 4), sequence: load64(h, 8),
                               payloadChecksum: load64(h, 16), payloadSeed: XXH64.hash(h, 16, seed: salt), key: key, offset: offset)
    }

    /// Bytes that follow the payload in a log sealed by `cipher`: its tag (none in a plain log).
    static func trailerSize(_ cipher: RecordCipher?) -> Int { cipher == nil ? 0 : RecordCipher.tagSize }

    /// Opens the record's payload (`payloadLength` bytes at `payload`, followed by `trailerSize(cipher)` bytes) in
    /// place: unwhitens and checks the checksum in a plain log, decrypts and authenticates in an encrypted one
    /// (`cipher`). True when it holds.
    func openPayload(_ payload: UnsafeMutableRawPointer, cipher: RecordCipher?) -> Bool {
        if let cipher {
            return withUnsafeTemporaryAllocation(byteCount: 16, alignment: 8) { fields in
                let header = fields.baseAddress.unsafelyUnwrapped  // a 16-byte allocation has an address
                store32(header, 0, UInt32(payloadLength))
                store32(header, 4, operations)
                store64(header, 8, sequence)
                return cipher.open(header: header, nonceField: payloadChecksum, offset: offset, payload: payload,
                                   payloadLength: payloadLength)
            }
        }
        RecordWhitening.apply(payload, count: payloadLength, key: key, start: WriteAheadLog.recordHeaderSize)
        return XXH64.hash(payload, payloadLength, seed: payloadSeed) == payloadChecksum
    }

    /// Fills in the header of a record — `recordHeaderSize` reserved bytes at `record`, then `payloadLength` bytes
    /// of payload, then `trailerSize(cipher)` bytes of room — to be written at `offset` of a log salted `salt`, and
    /// whitens the whole record in place; in an encrypted log (`cipher`) it encrypts the payload, writes its tag
    /// after it and whitens the header only.
    static func seal(_ record: UnsafeMutableRawPointer, payloadLength: Int, operations: UInt32, sequence: UInt64,
                     offset: UInt64, salt: UInt64, cipher: RecordCipher?) throws(BoxwoodError) {
        store32(record, 0, UInt32(payloadLength))
        store32(record, 4, operations)
        store64(record, 8, sequence)
        if let cipher {
            let nonceField = RecordCipher.randomNonceField()
            try cipher.seal(header: record, nonceField: nonceField, offset: offset,
                            payload: record + WriteAheadLog.recordHeaderSize, payloadLength: payloadLength)
            store64(record, 16, nonceField)
            store64(record, 24, XXH64.hash(record, 24, seed: salt))
            RecordWhitening.apply(record, count: WriteAheadLog.recordHeaderSize, key: RecordWhitening.key(salt: salt, offset: offset))
            return
        }
        let seed = XXH64.hash(record, 16, seed: salt)
        store64(record, 16, XXH64.hash(record + WriteAheadLog.recordHeaderSize, payloadLength, seed: seed))
        store64(record, 24, XXH64.hash(record, 24, seed: salt))
        RecordWhitening.apply(record, count: WriteAheadLog.recordHeaderSize + payloadLength, key: RecordWhitening.key(salt: salt, offset: offset))
    }
}
