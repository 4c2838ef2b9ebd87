/// The write-ahead log: file `wal` beside `data`. A commit appends one record holding the transaction's
/// logical operations; a checkpoint writes the pages, flips the meta, and then resets the log with a new salt.
///
/// File header (32 bytes, not whitened):
///
///     0   8  magic       "BXWDWAL\0"
///     8   4  version     6 (versions 2 to 5 are read too: 2 and 3 carry no record flags, before 5 no record is
///                        followed by an end marker, and before 6 no record names a value written once
///                        (`setExtent`, see `WALOperation`); a build appends to such a log in that version's
///                        record form, and the next checkpoint's reset makes it 6)
///     12  4  pageSize    4096 (of the data file it belongs to)
///     16  8  salt        must equal the meta's walSalt, otherwise the log is stale and ignored
///     24  8  checksum    XXH64 of bytes 0..<24, seed 0
///
/// In an encrypted database (`keys` set) the header is the same, and each record's payload is sealed by
/// `RecordCipher` instead of whitened and checksummed: bytes 16..<24 of the record header hold the nonce's random
/// part, and the payload's 16-byte tag follows the payload. The header checksum and whitening work as below.
///
/// Record (32-byte header, then the payload of operations — see `WALOperation`), whitened as a whole with
/// `RecordWhitening` keyed by (salt, offset of the record):
///
///     0   4  payloadLength
///     4   4  operations      bits 0..<30: operationCount; bit 30 `synced`: the record was synced before its
///                            commit returned (`full`); bit 31 `earlierRecordsDurable`: every earlier record of
///                            the log was durable before this one was written (version 4; 0 in older logs)
///     8   8  sequence        the TransactionStateVersion this commit produced (previous + 1)
///     16  8  payloadChecksum XXH64(payload, seed: XXH64(bytes 0..<16, seed: salt))
///     24  8  headerChecksum  XXH64(bytes 0..<24, seed: salt)
///
/// **End marker** (version 5): every append writes its record and, in the same write, an end marker right after it:
/// a record header with payloadLength 0 and operations 0 (no commit has zero operations) and the next sequence,
/// sealed like a record (in an encrypted log, followed by the empty payload's tag). The next append starts where the
/// marker is and overwrites it. The log's file is extended ahead of the records in chunks of zeros
/// (``preallocationChunk``), so that most appends overwrite bytes the file already has: a `full` commit's
/// `fdatasync` then has no size change to write. Replay ends cleanly at the marker (or at the end of the file) and
/// leaves the zeros after it; a marker is never taken for a commit, nor for a record that follows damage.
///
/// Recovery replays records in order while each is complete, both checksums match and its sequence is the
/// next one. The first record that fails ends the replay, and what follows it decides what the failure is:
///
/// - **Mid-log damage**: an intact record of this log (header checksum valid under the salt at its own offset)
///   starts after the failing one, and that record proves the failing one was complete before it: either it
///   carries `earlierRecordsDurable`, or the machine has not restarted since a writer last found the log intact
///   (`sameBoot`: within one boot every write that returned is visible, whatever reached the disk). The records
///   after the damage are then acknowledged commits that dropping (and letting the next writer truncate the
///   log) would lose for good: replay throws `.corrupted` naming both offsets and the log is left untouched.
/// - **Torn tail**: anything else. That is what a crash during an append leaves — the record cut short by the
///   end of the file, or parts that never reached the disk (zeros, holes, or old bytes when a power-loss file
///   system tears a write in the middle) — and, after a power cut in `normal` mode, whatever unsynced records
///   the disk lost in any order: `normal` promises the prefix before the first loss. It is cut off, and the
///   recovery report counts its bytes.
final class WriteAheadLog {
    static let headerSize = 32
    static let recordHeaderSize = 32
    static let magic: [UInt8] = Array("BXWDWAL\0".utf8)
    static let version: UInt32 = 6
    /// Versions whose records this build replays.
    static let readableVersions: ClosedRange<UInt32> = 2...6
    /// The bytes of zeros the log's file is extended by when an append would pass its end (at least the append).
    static let preallocationChunk: UInt64 = 1 << 20
    /// Record flags, in the top bits of the operations word (version 4).
    static let earlierRecordsDurableFlag: UInt32 = 1 << 31
    static let syncedFlag: UInt32 = 1 << 30
    /// The operation count's bits. A payload within ``maxPayloadLength`` holds fewer than 2^30 operations (the
    /// smallest operation is 5 bytes), so a count never reaches the flags.
    static let operationCountMask: UInt32 = (1 << 30) - 1

    /// The largest payload a record can hold: its length field is 32 bits.
    static let maxPayloadLength = Int(UInt32.max)

    let file: StorageFile
    /// The keys of an encrypted database (nil: a plain log). They follow the data file (a compaction or rekey in
    /// any process writes a new one) and are set before the log's salt is.
    var keys: DatabaseKeys? {
        didSet { deriveCipher() }
    }
    /// Seals and opens the records of the current log (nil in a plain database); follows `salt`.
    private(set) var cipher: RecordCipher?
    /// The payload limit `append` enforces (``maxPayloadLength``; lowered by tests, which cannot build a
    /// 4 GiB transaction).
    var payloadLimit = WriteAheadLog.maxPayloadLength
    private(set) var salt: UInt64 = 0 {
        didSet { deriveCipher() }
    }
    /// True while every record up to ``endOffset`` is known to be durable, so that the next record may carry
    /// `earlierRecordsDurable`. False when unknown (records another value box appended unsynced, or not yet read).
    private var chainIsDurable = false
    /// Whether the log's header is version 4 or later, whose records carry flags; nil until known.
    private var recordsCarryFlags: Bool?
    /// Whether the log's header is version 5 or later, whose appends end with an end marker; nil until known.
    private var recordsEndWithMarker: Bool?
    /// Whether the log's header is version 6 or later, whose records may name values written once (`setExtent`);
    /// nil until known.
    private var recordsMayNameExtents: Bool?
    /// A size the file had (it only grows while this value box holds the writer lock, though another value box may
    /// cut it): an append that would pass it asks the file for its size before extending it with zeros.
    private var knownFileSize: UInt64 = 0
    /// Where the next record goes (end of the last valid record).
    private(set) var endOffset: UInt64 = 0
    /// ``preallocationChunk`` zero bytes for `extendWithZeros`, made at the first extension (never written after).
    private var zeroChunk: UnsafeMutableRawPointer?

    init(file: StorageFile, keys: DatabaseKeys? = nil) {
        self.file = file
        self.keys = keys
        deriveCipher()
    }

    deinit { zeroChunk?.deallocate() }

    /// The cipher of the log `keys` and `salt` name now (each log of an encrypted database has its own key).
    private func deriveCipher() {
        cipher = keys.map { RecordCipher(key: $0.walKey(walSalt: salt)) }
    }

    /// Bytes after each record's payload: its tag in an encrypted log, none in a plain one.
    var recordTrailerSize: Int { WALRecordHeader.trailerSize(cipher) }

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
        knownFileSize = endOffset
        chainIsDurable = sync
        recordsCarryFlags = true
        recordsEndWithMarker = true
        recordsMayNameExtents = true
    }

    /// True when this log's records may name values written once (`setExtent`, version 6): an older log, which a
    /// build of its version may still read, gets every value's bytes until the next reset makes it version 6.
    func acceptsValuesWrittenOnce() throws(BoxwoodError) -> Bool {
        if recordsMayNameExtents == nil { try learnVersion() }
        return recordsMayNameExtents == true
    }

    /// True while every record up to ``endOffset`` is known to be durable (see `chainIsDurable`).
    var earlierRecordsKnownDurable: Bool { chainIsDurable }

    /// Reads the header's version into the record-form flags.
    private func learnVersion() throws(BoxwoodError) {
        guard case let .valid(_, version) = try readHeader() else {
            throw .corrupted(file: file.path, page: nil, reason: "the WAL header does not validate")
        }
        noteVersion(version)
    }

    private func noteVersion(_ version: UInt32) {
        recordsCarryFlags = version >= 4
        recordsEndWithMarker = version >= 5
        recordsMayNameExtents = version >= 6
    }

    /// Appends a record. `record` holds `recordHeaderSize` reserved bytes followed by the payload; the header
    /// is filled in here so the record goes to the file in one write. A payload over ``payloadLimit`` throws
    /// `.transactionTooLarge` before anything is written.
    func append(sequence: UInt64, record: ByteBuffer, operationCount: UInt32, sync: Bool) throws(BoxwoodError) {
        let payloadLength = record.count - WriteAheadLog.recordHeaderSize
        guard payloadLength <= payloadLimit else { throw .transactionTooLarge(bytes: payloadLength, limit: payloadLimit) }
        if recordsCarryFlags == nil || recordsEndWithMarker == nil { try learnVersion() }
        var operations = operationCount
        if recordsCarryFlags == true {
            if chainIsDurable { operations |= WriteAheadLog.earlierRecordsDurableFlag }
            if sync { operations |= WriteAheadLog.syncedFlag }
        }
        let trailer = recordTrailerSize
        let markerSize = recordsEndWithMarker == true ? WriteAheadLog.recordHeaderSize + trailer : 0
        // Room for the tag and the marker (the record's bytes stay where `count` ends).
        record.reserve(trailer + markerSize)
        let p = record.memory
        let recordEnd = endOffset + UInt64(record.count + trailer)
        try WALRecordHeader.seal(p, payloadLength: payloadLength, operations: operations, sequence: sequence, offset: endOffset,
                                 salt: salt, cipher: cipher)
        if markerSize > 0 {
            try WALRecordHeader.seal(p + record.count + trailer, payloadLength: 0, operations: 0, sequence: sequence &+ 1,
                                     offset: recordEnd, salt: salt, cipher: cipher)
        }
        try file.write(p, count: record.count + trailer + markerSize, offset: endOffset)
        if markerSize > 0 { try extendWithZeros(after: recordEnd + UInt64(markerSize)) }
        if sync { try file.dataSync() } else { chainIsDurable = false }
        endOffset = recordEnd
    }

    /// After an append that ends at `end`: when that passed the file's end (the append extended the file), writes a
    /// ``preallocationChunk`` of zeros after it, so that the next appends overwrite bytes the file has. Zeros go only
    /// past the file's end: never over a record.
    private func extendWithZeros(after end: UInt64) throws(BoxwoodError) {
        guard end > knownFileSize else { return }
        knownFileSize = try file.size()
        guard end >= knownFileSize else { return }
        let count = Int(WriteAheadLog.preallocationChunk)
        let zeros: UnsafeMutableRawPointer
        if let zeroChunk {
            zeros = zeroChunk
        } else {
            zeros = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 4096)
            zeros.initializeMemory(as: UInt8.self, repeating: 0, count: count)
            zeroChunk = zeros
        }
        try file.write(zeros, count: count, offset: end)
        knownFileSize = end + UInt64(count)
    }

    /// Cuts the log back to `offset` (the end of the last record that is known to have committed) and makes
    /// that durable, so that a record whose commit failed can never be replayed.
    func rollBack(to offset: UInt64, sync: Bool) throws(BoxwoodError) {
        chainIsDurable = false
        try file.truncate(to: offset)
        if sync { try file.sync() }
        endOffset = offset
        knownFileSize = offset
    }

    /// Points the log at the start of a log with `salt` (its header is written by whoever resets it).
    func restart(salt: UInt64) {
        self.salt = salt
        endOffset = UInt64(WriteAheadLog.headerSize)
        chainIsDurable = false
        recordsCarryFlags = nil
        recordsEndWithMarker = nil
        recordsMayNameExtents = nil
        knownFileSize = 0
    }

    /// Cuts everything after ``endOffset`` off the file (a torn tail, or what follows an end marker after a restart)
    /// and makes that durable when `sync`.
    func cutAfterEnd(sync: Bool) throws(BoxwoodError) {
        try file.truncate(to: endOffset)
        if sync { try file.sync() }
        knownFileSize = endOffset
    }

    /// Reads the records in `endOffset..<end` — commits another value box published — and hands each to
    /// `apply`. Returns false, leaving `endOffset` after the last record applied, when a record is missing or
    /// fails its checks (a concurrent checkpoint reset the log); the caller re-reads the shared header.
    func readPublished(upTo end: UInt64, afterSequence: UInt64,
                       apply: (UInt64, UInt32, UnsafeRawBufferPointer) throws(BoxwoodError) -> Void) throws(BoxwoodError) -> Bool {
        guard end > endOffset else { return end == endOffset }
        // `end` comes from the shared header, another process's file: a value past the end of the log is a stale
        // or damaged header, never a size to allocate.
        guard end <= (try file.size()) else { return false }
        let count = Int(end - endOffset)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
        defer { buffer.deallocate() }
        guard try file.read(into: buffer, count: count, offset: endOffset) == count else { return false }
        var position = 0
        var expected = afterSequence + 1
        let headerSize = WriteAheadLog.recordHeaderSize
        let trailer = recordTrailerSize
        let start = endOffset
        defer { endOffset = start + UInt64(position) }
        while position < count {
            guard position + headerSize <= count else { return false }
            let h = buffer + position
            guard let header = WALRecordHeader.open(h, offset: start + UInt64(position), salt: salt), !header.isEndMarker else { return false }
            let length = header.payloadLength
            guard length <= count - position - headerSize - trailer, header.sequence <= expected else { return false }
            let payload = h + headerSize
            guard header.openPayload(payload, cipher: cipher) else { return false }
            if header.sequence < expected {
                // Already in the pages: a background checkpoint keeps the log's salt, so the records before its
                // meta's last sequence stay in the log (see `BackgroundCheckpoint`).
                position += headerSize + length + trailer
                continue
            }
            try apply(expected, header.operationCount, UnsafeRawBufferPointer(start: payload, count: length))
            chainIsDurable = recordsCarryFlags == true && WriteAheadLog.extendsDurableChain(header.operations)
            position += headerSize + length + trailer
            expected += 1
        }
        return true
    }

    /// True when an intact record header of this log (under the current salt) starts at `offset`; an end marker
    /// is not a record.
    func hasIntactRecord(at offset: UInt64) throws(BoxwoodError) -> Bool {
        guard let header = try recordHeader(at: offset, salt: salt).header else { return false }
        return !header.isEndMarker
    }

    /// What the file holds where a record header of the log salted `salt` would start at `offset`: the bytes read
    /// (at most a header's), whether they are all zeros, and the header when it validates there.
    private func recordHeader(at offset: UInt64, salt: UInt64) throws(BoxwoodError) -> (read: Int, zeros: Bool, header: WALRecordHeader?) {
        let headerSize = WriteAheadLog.recordHeaderSize
        let h = UnsafeMutableRawPointer.allocate(byteCount: headerSize, alignment: 16)
        defer { h.deallocate() }
        let read = try file.read(into: h, count: headerSize, offset: offset)
        let zeros = UnsafeRawBufferPointer(start: h, count: read).allSatisfy { $0 == 0 }
        return (read, zeros, read == headerSize ? WALRecordHeader.open(h, offset: offset, salt: salt) : nil)
    }

    /// Bytes in the log, header included.
    var size: UInt64 { endOffset }

    /// True when the log salted `salt` holds no record: nothing follows its header, or an end marker or zeros do
    /// (a salvage asks, to tell a log whose commits would be lost from an empty one).
    func holdsNoRecord(salt: UInt64) throws(BoxwoodError) -> Bool {
        let first = try recordHeader(at: UInt64(WriteAheadLog.headerSize), salt: salt)
        return first.zeros || first.header?.isEndMarker == true
    }

    /// True when a record with these flags leaves every record up to its end durable.
    static func extendsDurableChain(_ operations: UInt32) -> Bool {
        operations & (earlierRecordsDurableFlag | syncedFlag) == earlierRecordsDurableFlag | syncedFlag
    }

    /// What the file's header says.
    enum Header: Equatable {
        /// A valid header of a readable version, with its salt.
        case valid(salt: UInt64, version: UInt32)
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
        return .valid(salt: load64(p, 16), version: load32(p, 8))
    }

    /// How a replay ended.
    struct ReplayOutcome {
        /// Records applied.
        var applied: Int
        /// Bytes of a torn tail after the last valid record (0 when the log ended cleanly).
        var tornBytes: UInt64
        /// True when the log ended at an end marker (what follows it is preallocated zeros, or bytes of records a
        /// power cut left without the records before them, which only a cut makes sure are never replayed).
        var endedAtMarker: Bool
    }

    /// Replays the records after `afterSequence` of a log with header `version`. Sets `endOffset` to the end of the
    /// last valid record (where its end marker is). Throws `.corrupted` for mid-log damage; `sameBoot` says the
    /// machine has not restarted since a writer last found this log intact (see the type's documentation).
    ///
    /// `admit` sees each intact record's payload, and whether it carries `synced`, before `apply`, and may refuse it:
    /// the record names a value written once whose extent is not in the data file as it says
    /// (`ValueBox.admitsRecoveredRecord`). Such a record is treated as damaged — what follows it decides whether
    /// that is a torn tail (cut) or mid-log damage (thrown).
    func replay(salt: UInt64, version: UInt32, afterSequence: UInt64, sameBoot: Bool,
                admit: (UInt64, UnsafeRawBufferPointer, Bool) throws(BoxwoodError) -> Bool = { _, _, _ in true },
                apply: (UInt64, UInt32, UnsafeRawBufferPointer) throws(BoxwoodError) -> Void) throws(BoxwoodError) -> ReplayOutcome {
        self.salt = salt
        noteVersion(version)
        chainIsDurable = false
        guard afterSequence < UInt64.max else {
            throw .corrupted(file: file.path, page: nil, reason: "the meta's last sequence \(afterSequence) leaves no room for another commit")
        }
        let fileSize = try file.size()
        knownFileSize = fileSize
        var offset = UInt64(WriteAheadLog.headerSize)
        var expected = afterSequence + 1
        var applied = 0
        var endedAtMarker = false
        let buffer = ByteBuffer(capacity: 64 << 10)
        let headerSize = WriteAheadLog.recordHeaderSize
        let trailer = recordTrailerSize
        while offset < fileSize {
            // A header cut short by the end of the file is a torn append (no record fits after it).
            guard offset + UInt64(headerSize) <= fileSize else { break }
            buffer.reset()
            buffer.reserve(headerSize)
            let h = buffer.memory
            guard try file.read(into: h, count: headerSize, offset: offset) == headerSize else { break }
            guard let header = WALRecordHeader.open(h, offset: offset, salt: salt) else {
                // The length is not trustworthy: a later record could start anywhere after this offset.
                try refuseIfMidLogDamage(at: offset, searchFrom: offset + 1, fileSize: fileSize, sameBoot: sameBoot)
                break
            }
            let length = header.payloadLength
            let sequence = header.sequence
            let start = offset + UInt64(headerSize)
            let recordEnd = start + UInt64(length + trailer)
            // An intact header whose record runs past the end of the file: the append was cut short.
            if recordEnd > fileSize { break }
            buffer.reserve(headerSize + length + trailer)
            let payload = buffer.memory + headerSize
            guard try file.read(into: payload, count: length + trailer, offset: start) == length + trailer else { break }
            guard header.openPayload(payload, cipher: cipher) else {
                // The header is intact, so the next record would start exactly at `recordEnd` (or later, if it
                // is damaged too).
                try refuseIfMidLogDamage(at: offset, searchFrom: recordEnd, fileSize: fileSize, sameBoot: sameBoot)
                break
            }
            if header.isEndMarker {
                // The end of the log as its last append left it. Its sequence follows the last record's, which the
                // meta may already hold (a background checkpoint keeps the log).
                guard sequence <= expected else {
                    throw .corrupted(file: file.path, page: nil,
                                     reason: "WAL end marker at offset \(offset) has sequence \(sequence), expected at most \(expected)")
                }
                endedAtMarker = true
                break
            }
            chainIsDurable = recordsCarryFlags == true && WriteAheadLog.extendsDurableChain(header.operations)
            if sequence < expected {
                // Already included in the pages (cannot happen with a fresh salt, harmless if it does).
                offset = recordEnd
                continue
            }
            guard sequence == expected else {
                throw .corrupted(file: file.path, page: nil,
                                 reason: "WAL record at offset \(offset) has sequence \(sequence), expected \(expected)")
            }
            let synced = recordsCarryFlags == true && header.operations & WriteAheadLog.syncedFlag != 0
            guard try admit(sequence, UnsafeRawBufferPointer(start: payload, count: length), synced) else {
                chainIsDurable = false
                try refuseIfMidLogDamage(at: offset, searchFrom: recordEnd, fileSize: fileSize, sameBoot: sameBoot)
                break
            }
            try apply(sequence, header.operationCount, UnsafeRawBufferPointer(start: payload, count: length))
            applied += 1
            expected += 1
            offset = recordEnd
        }
        endOffset = offset
        return ReplayOutcome(applied: applied, tornBytes: endedAtMarker ? 0 : fileSize - offset, endedAtMarker: endedAtMarker)
    }

    /// Throws `.corrupted` when the damaged record at `damagedAt` is mid-log damage rather than a torn tail: an
    /// intact record of this log starts at or after `searchFrom`, and it carries `earlierRecordsDurable` or
    /// `sameBoot` holds. Reads the rest of the log in 1 MiB windows and tries every byte offset (a damaged header
    /// says nothing about where its record ends).
    private func refuseIfMidLogDamage(at damagedAt: UInt64, searchFrom: UInt64, fileSize: UInt64, sameBoot: Bool) throws(BoxwoodError) {
        guard let (found, sequence, operations) = try firstIntactRecord(from: searchFrom, fileSize: fileSize) else { return }
        let provenDurable = recordsCarryFlags == true && operations & WriteAheadLog.earlierRecordsDurableFlag != 0
        guard sameBoot || provenDurable else { return }
        let proof = provenDurable ? "it was written after the damaged record was synced" : "the machine has not restarted since they were written"
        throw .corrupted(file: file.path, page: nil,
                         reason: "WAL record at offset \(damagedAt) is damaged, but an intact record (sequence \(sequence)) follows at offset \(found) and \(proof): "
                            + "the commits after the damage were acknowledged, so the log is kept as it is and the database does not open")
    }

    /// The first offset at or after `from` where a record header of this log validates, with its sequence and
    /// operations word (also used by a salvage, to tell damage with commits after it from a torn tail). End markers
    /// are passed over: they are no commits.
    func firstIntactRecord(from: UInt64, fileSize: UInt64) throws(BoxwoodError) -> (UInt64, UInt64, UInt32)? {
        let headerSize = WriteAheadLog.recordHeaderSize
        let window = 1 << 20
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: window + headerSize, alignment: 16)
        let candidate = UnsafeMutableRawPointer.allocate(byteCount: headerSize, alignment: 16)
        defer { bytes.deallocate(); candidate.deallocate() }
        var base = from
        while base < fileSize, fileSize - base >= UInt64(headerSize) {
            // Each window holds `window` candidate offsets plus the header bytes the last of them needs.
            let count = Int(min(UInt64(window + headerSize - 1), fileSize - base))
            guard try file.read(into: bytes, count: count, offset: base) == count else { return nil }
            for i in 0...(count - headerSize) {
                candidate.copyMemory(from: bytes + i, byteCount: headerSize)
                let offset = base + UInt64(i)
                if let header = WALRecordHeader.open(candidate, offset: offset, salt: salt), !header.isEndMarker {
                    return (offset, header.sequence, header.operations)
                }
            }
            base += UInt64(window)
        }
        return nil
    }
}
