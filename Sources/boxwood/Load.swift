import ArgumentParser
@_spi(EngineTables) import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `--durability` choices of `load` (the engine's ``Durability``).
enum DurabilityOption: String, ExpressibleByArgument, CaseIterable {
    case full, normal, off

    var durability: Durability {
        switch self {
        case .full: return .full
        case .normal: return .normal
        case .off: return .off
        }
    }
}

/// `boxwood load DB [--batch N] [--durability full|normal|off]`: reads the `dump` format from stdin into the
/// database (created when missing; tables created as needed; a key given twice keeps the later value).
///
/// Commits every `--batch` entries and at the end, printing `committed <entries so far>` after each commit.
/// A table line with no entries still creates the (empty) table, so dump → load → dump is the identity.
///
/// Table ids below zero belong to the engine (the full-text index keeps its data there, and `dump` lists them):
/// a `table` line with one is malformed input unless `--engine-tables` asks to copy them verbatim, as when
/// restoring a dump of a whole Boxwood database. Writing them from anything else would corrupt an index.
/// On malformed input the message names the line, the open transaction is aborted (nothing after the
/// last `committed` line is applied) and the exit code is 2. When stderr is a terminal, a progress line shows
/// the bytes read (with a bar when stdin is a file) and the entries loaded.
struct Load: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read a dump (see `dump`) from stdin into a database.",
        discussion: "Exit code 2 on malformed input; everything up to the last 'committed N' line is kept."
    )

    @Argument(help: "The database directory (created when missing).") var db: String
    @OptionGroup var encryption: EncryptionOptions
    @Option(help: "Commit every N entries.") var batch = 1000
    @Option(help: "Commit durability: full, normal or off.") var durability: DurabilityOption = .normal
    @Option(help: "Seconds to wait for another process that is writing to the database.") var lockTimeout: Double = 10
    @Flag(help: "No progress bar, even on a terminal.") var quiet = false
    @Flag(help: "Also load tables with negative ids (the engine's own, such as full-text index data) verbatim, as dumped.")
    var engineTables = false

    func validate() throws {
        if batch < 1 { throw ValidationError("--batch must be at least 1") }
    }

    /// A load failure: a message and an exit code.
    func run() throws {
        // The header is checked before the database is opened (or created).
        let reader = LineReader()
        let headerOK = reader.nextLine { $0.elementsEqual(DumpText.header.utf8) }
        if headerOK != true {
            if let code = reader.readErrno {
                throw CommandFailure(status: ExitStatus.failure, "reading stdin failed: \(String(cString: strerror(code))) (errno \(code))", place: "stdin")
            }
            throw CommandFailure(status: ExitStatus.badInput, (headerOK == nil ? "empty input; " : "") + "expected the header line '\(DumpText.header)'",
                                 place: "stdin line 1")
        }
        var options = ValueBoxOptions(durability: durability.durability)
        options.lockTimeout = lockTimeout
        options.encryption = try encryption.parameters()
        let box = try openWritable(db, options: options)
        var loader = Loader(box: box, batch: batch)
        loader.engineTables = engineTables
        loader.bar = ProgressBar.onTerminal(unit: .bytes, quiet: quiet)
        loader.inputSize = reader.remainingFileSize.map { $0 + reader.bytesRead }
        var failure: CommandFailure? = nil
        do throws(CommandFailure) {
            try loader.run(reader)
        } catch {
            failure = error
        }
        if let failure {
            box.abort()
            try? box.close()
            throw failure
        }
        do {
            try box.close()
        } catch {
            let failure = CommandFailure(error, database: db)
            if case let .io(_, _, code) = error, code == ENOSPC {
                // The close checkpoint could not write the pages: the commits printed above are in the WAL.
                throw CommandFailure(status: failure.status, failure.message + ". Every committed entry is safe in the WAL; the next "
                                     + "command that writes to \(db) finishes the checkpoint", place: failure.place)
            }
            throw failure
        }
    }
}

/// The state of one `load` run.
struct Loader {
    let box: ValueBox
    let batch: Int
    /// Whether tables with negative (engine) ids may be loaded (`--engine-tables`).
    var engineTables = false
    /// Key types of the tables that exist (in the engine or created by this run).
    var existing: [Int32: ValueBoxKeyType] = [:]
    var table: ValueBoxTable? = nil
    var total = 0
    var sinceCommit = 0
    /// Whether the open transaction changed anything.
    var dirty = false
    var committedOnce = false
    var keyBytes: [UInt8] = []
    var valueBytes: [UInt8] = []
    /// Progress on a terminal's stderr: bytes of stdin read (of `inputSize` when stdin is a file).
    var bar: ProgressBar? = nil
    var inputSize: Int? = nil

    init(box: ValueBox, batch: Int) {
        self.box = box
        self.batch = batch
    }

    private func bad(_ line: Int, _ message: String) -> CommandFailure {
        CommandFailure(status: ExitStatus.badInput, message, place: "stdin line \(line)")
    }

    private func engineFailure(_ error: BoxwoodError, line: Int? = nil) -> CommandFailure {
        switch error {
        case .keyTooLarge, .invalidInt64Key, .keyTypeMismatch, .reservedTableId:
            return bad(line ?? 0, error.description)
        default:
            let failure = CommandFailure(error)
            return CommandFailure(status: failure.status, failure.message, place: line.map { "stdin line \($0)" } ?? failure.place)
        }
    }

    /// Loads the lines after the header.
    mutating func run(_ reader: LineReader) throws(CommandFailure) {
        do {
            for t in try box.allTables() { existing[t.id] = t.keyType }
            try box.begin()
        } catch {
            throw engineFailure(error)
        }
        var failure: CommandFailure? = nil
        while failure == nil, let result = reader.nextLine({ line -> CommandFailure? in
            do throws(CommandFailure) { try handle(line, number: reader.lineNumber) } catch { return error }
            if let bar, reader.lineNumber & 1023 == 0 {
                bar.show(done: reader.bytesRead, total: inputSize, detail: "\(total) entries")
            }
            return nil
        }) {
            failure = result
        }
        if let failure { throw failure }
        if let code = reader.readErrno {
            throw CommandFailure(status: ExitStatus.failure, "reading stdin failed: \(String(cString: strerror(code))) (errno \(code))", place: "stdin")
        }
        if dirty || !committedOnce { try commit(line: nil, reopen: false) }
        bar?.clear()
        box.abort()
    }

    private mutating func handle(_ line: UnsafeRawBufferPointer, number: Int) throws(CommandFailure) {
        if line.starts(with: "table ".utf8) || line.elementsEqual("table".utf8) {
            try tableLine(line, number: number)
            return
        }
        guard let table else {
            throw bad(number, "entry before any 'table <id> <binary|int64>' line: '\(DumpText.excerpt(line))'")
        }
        guard let tab = line.firstIndex(of: 9) else {
            throw bad(number, "missing tab between key and value (expected '<key>\\t<value>'): '\(DumpText.excerpt(line))'")
        }
        let keyText = UnsafeRawBufferPointer(rebasing: line[..<tab])
        let valueText = UnsafeRawBufferPointer(rebasing: line[(tab + 1)...])
        let key: ValueBoxKey
        switch table.keyType {
        case .int64:
            guard let n = DumpText.parseInt64(keyText) else {
                throw bad(number, "bad int64 key '\(DumpText.excerpt(keyText))' (expected a signed decimal integer)")
            }
            key = ValueBoxKey(int64: n)
        case .binary:
            if let problem = DumpText.decodeHex(keyText, into: &keyBytes) { throw bad(number, "bad key: \(problem)") }
            if keyBytes.count > ValueBox.maxKeySize {
                throw bad(number, "key too large: \(keyBytes.count) bytes (limit \(ValueBox.maxKeySize))")
            }
            key = keyBytes.withUnsafeBytes { ValueBoxKey(bytes: $0) }
        }
        if let problem = DumpText.decodeHex(valueText, into: &valueBytes) { throw bad(number, "bad value: \(problem)") }
        do {
            try box.set(table, key: key, array: valueBytes)
        } catch {
            throw engineFailure(error, line: number)
        }
        dirty = true
        total += 1
        sinceCommit += 1
        if sinceCommit >= batch { try commit(line: number) }
    }

    /// `table <id> <binary|int64>`: switches to (and if needed creates) the table.
    private mutating func tableLine(_ line: UnsafeRawBufferPointer, number: Int) throws(CommandFailure) {
        let text = String(decoding: line, as: UTF8.self)
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw bad(number, "malformed table line '\(DumpText.excerpt(line))' (expected 'table <id> <binary|int64>')")
        }
        guard let id = Int32(parts[1]), parts[1].first != "+" else {
            throw bad(number, "bad table id '\(parts[1])' (expected a 32-bit signed integer)")
        }
        let keyType: ValueBoxKeyType
        switch parts[2] {
        case "binary": keyType = .binary
        case "int64": keyType = .int64
        default: throw bad(number, "unknown key type '\(parts[2])' (expected binary or int64)")
        }
        if id < 0 && !engineTables {
            throw bad(number, "table \(id) is reserved: negative table ids belong to the engine (full-text index data); "
                + "load tables with ids from 0 up, or pass --engine-tables to copy a dump of a whole database verbatim")
        }
        let t = id < 0 ? ValueBoxTable(engineTableId: id, keyType: keyType) : ValueBoxTable(id: id, keyType: keyType)
        if let existingType = existing[id] {
            if existingType != keyType {
                throw bad(number, "table \(id) already exists with key type \(existingType), the dump says \(keyType)")
            }
        } else {
            // The engine creates a table on its first write and keeps it when its last key is removed:
            // this makes a table that has no entries in the dump exist, as it did in the dumped database.
            let probe = keyType == .int64 ? ValueBoxKey(int64: 0) : ValueBoxKey([0])
            do {
                try box.set(t, key: probe, bytes: UnsafeRawBufferPointer(start: nil, count: 0))
                try box.remove(t, key: probe)
            } catch {
                throw engineFailure(error, line: number)
            }
            existing[id] = keyType
            dirty = true
        }
        table = t
    }

    /// Commits, prints `committed <total>` and (when `reopen`) begins the next transaction.
    private mutating func commit(line: Int?, reopen: Bool = true) throws(CommandFailure) {
        do {
            try box.commit()
        } catch {
            throw engineFailure(error, line: line)
        }
        committedOnce = true
        dirty = false
        sinceCommit = 0
        bar?.clear()
        print("committed \(total)")
        flushStdout()
        guard reopen else { return }
        do {
            try box.begin()
        } catch {
            throw engineFailure(error, line: line)
        }
    }
}
