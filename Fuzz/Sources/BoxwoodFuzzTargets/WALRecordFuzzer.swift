@_spi(Fuzzing) import BoxwoodStore

/// `wal-record`: WAL records with valid checksums and whitening, replayed onto a fixed, sound database. The input
/// is a list of plain records; the harness numbers them after the database's last sequence, seals them under its
/// salt and writes them as its `wal`. Then the database is opened (replay), checked, read, optionally written, and
/// closed (a checkpoint of what was replayed); last, each payload also goes through the operation decoder directly.
///
/// Encoding (little-endian):
///
///     u8  flags     bits 0-1 WAL version (0: current, 1: 3, 2: 2, 3: 1 = unsupported); bit 2 keep the length
///                   fields as given (a record may run past the end: a torn tail); bit 3 each record carries its
///                   sequence; bit 4 break the first record's checksum; bit 5 open read-only too; bit 6 write and
///                   checkpoint after replay; bit 7 zero the last record's first whole 512-byte sector
///     then records until the end: u32 payload length | u32 operations word | [u64 sequence] | payload
enum WALRecordFuzzer {
    static let target = FuzzTarget(
        name: "wal-record",
        summary: "WAL records with valid checksums replayed onto a sound database (plus the operation decoder directly)",
        run: { fuzzOne($0) },
        seeds: { try seeds() },
        libFuzzerOptions: ["-max_len=16384", "-dict=Dictionaries/binary-formats.dict", "-use_value_profile=1"]
    )

    /// The database the records are replayed onto: `SeedDatabases.populate`, checkpointed and closed.
    struct Template {
        let data: [UInt8]
        let salt: UInt64
        let lastSequence: UInt64
    }

    nonisolated(unsafe) private static var cachedTemplate: Template?

    static func template() -> Template {
        if let cachedTemplate { return cachedTemplate }
        let made: Template
        do {
            let image = try SeedDatabases.capture(SeedDatabases.Build { box in try SeedDatabases.populate(box) })
            let data = image.files().data
            var best: (generation: UInt64, walSalt: UInt64, lastSequence: UInt64)?
            for slot in 0..<2 {
                let meta = data.withUnsafeBytes { FuzzingSupport.decodeMeta($0.baseAddress! + slot * FuzzingSupport.pageSize, slot: UInt64(slot)) }
                if let meta, best == nil || meta.generation > best!.generation { best = meta }
            }
            guard let best else { preconditionFailure("the template database has no valid meta page") }
            made = Template(data: data, salt: best.walSalt, lastSequence: best.lastSequence)
        } catch {
            preconditionFailure("cannot build the wal-record template database: \(error)")
        }
        cachedTemplate = made
        return made
    }

    static func fuzzOne(_ bytes: UnsafeRawBufferPointer) {
        let template = template()
        var input = FuzzInput(bytes)
        let flags = input.u8()
        let versions: [UInt32] = [FuzzingSupport.walVersion, 3, 2, 1]
        var wal = WALCodec.header(salt: template.salt, version: versions[Int(flags & 3)])
        let literalLengths = flags & (1 << 2) != 0
        let explicitSequences = flags & (1 << 3) != 0
        var sequence = template.lastSequence
        var recordOffsets: [Int] = []
        var payloads: [[UInt8]] = []
        while !input.isAtEnd {
            let length = Int(input.u32())
            let operations = input.u32()
            sequence += 1
            let recordSequence = explicitSequences ? input.u64() : sequence
            let payload = input.take(length)
            payloads.append(payload)
            recordOffsets.append(wal.count)
            var record = WALCodec.plainRecord(payload: payload, operations: operations, sequence: recordSequence)
            if literalLengths {
                for i in 0..<4 { record[i] = UInt8(truncatingIfNeeded: length >> (8 * i)) }
            }
            wal += record
        }
        WALCodec.seal(&wal, fixHeader: true, fixRecords: true, whiten: true)
        if flags & (1 << 4) != 0, let first = recordOffsets.first, first + 24 < wal.count {
            wal[first + 24] ^= 0x01
        }
        if flags & (1 << 7) != 0, let last = recordOffsets.last {
            let sector = (last + 511) / 512 * 512
            if sector + 512 <= wal.count { for i in sector..<sector + 512 { wal[i] = 0 } }
        }
        let path = ScratchFiles.databaseDirectory()
        ScratchFiles.install(path, data: template.data, wal: wal, header: nil)
        DatabaseExerciser.run(path, steps: DatabaseExerciser.Steps(readOnly: flags & (1 << 5) != 0, write: flags & (1 << 6) != 0))
        // The operation decoder on its own (after the engine, so that a crash shows the engine's own path first),
        // for the payloads replay did not reach (after a malformed or out-of-sequence record).
        for payload in payloads {
            do { _ = try payload.withUnsafeBytes { (bytes) throws(FuzzingSupport.Violation) in try FuzzingSupport.decodeWALPayload(bytes) } } catch {
                preconditionFailure("\(error)")   // a finding: libFuzzer reports the crash
            }
        }
    }

    /// The records of the `tables-and-wal` seed database (one transaction per kind of operation), all together
    /// and one by one.
    static func seeds() throws -> [(name: String, bytes: [UInt8])] {
        let image = try SeedDatabases.capture(SeedDatabases.all.first { $0.0 == "tables-and-wal" }!.1)
        let records = WALCodec.records(image.wal ?? [])
        func encode(_ records: [(operations: UInt32, payload: [UInt8])], flags: UInt8) -> [UInt8] {
            var out: [UInt8] = [flags]
            for record in records {
                out.appendLE(UInt32(record.payload.count))
                out.appendLE(record.operations)
                out += record.payload
            }
            return out
        }
        var result: [(String, [UInt8])] = [("seed-all-records", encode(records, flags: 1 << 5))]
        for (i, record) in records.enumerated() {
            result.append(("seed-record-\(i)", encode([record], flags: i == 0 ? 1 << 6 : 0)))
        }
        return result
    }
}
