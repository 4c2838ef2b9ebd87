import ArgumentParser
import BoxwoodStore

/// `boxwood dump DB [--table ID]`: writes the database as text, in the format that `load` reads:
///
///     boxwood-dump 1
///     table <id> <binary|int64>
///     <key>\t<value>
///     ...
///
/// Tables come in ascending id order, entries in key order. A binary key is lowercase hex, an int64 key a
/// signed decimal integer; the value is lowercase hex (empty for a zero-length value). Only tables that exist
/// in the engine are listed: a table exists from its first write on, and keeps existing (with a header line
/// and no entries) after all its keys are removed. The database is opened read-only. When stderr is a
/// terminal and stdout is not, a progress bar (entries) shows on stderr.
struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write every table as text (the format `load` reads).",
        discussion: "Format: a line 'boxwood-dump 1', then per table 'table <id> <binary|int64>' followed by one '<key>\\t<value>' line per entry (binary keys and values in lowercase hex, int64 keys in decimal)."
    )

    @Argument(help: "The database directory.") var db: String
    @OptionGroup var encryption: EncryptionOptions
    @Option(help: "Dump only the table with this id (negative ids: --table=-3).") var table: Int32?
    @Flag(help: "No progress bar, even on a terminal.") var quiet = false

    func run() throws {
        let box = try openReadOnly(db, encryption: encryption)
        defer { try? box.close() }
        let tables = try engine(db) { () throws(BoxwoodError) in try box.allTables() }
        if let table, !tables.contains(where: { $0.id == table }) {
            throw CommandFailure(status: ExitStatus.failure, "no table \(table)", place: db)
        }
        // Progress (entries) on a terminal's stderr, unless the dump itself scrolls on the terminal.
        let bar = ProgressBar.onTerminal(unit: .entries, unlessStdoutIsTerminal: true, quiet: quiet)
        let total = bar == nil ? 0 : try engine(db) { () throws(BoxwoodError) in
            try box.tableStatistics().filter { table == nil || $0.id == table }.reduce(0) { $0 + $1.entries }
        }
        var done = 0
        let out = OutputBuffer()
        out.write(DumpText.header + "\n")
        for t in tables where table == nil || t.id == table {
            out.write("table \(t.id) \(t.keyType)\n")
            if t.keyType == .int64 {
                try engine(db) { () throws(BoxwoodError) in
                    try box.scanInt64(t, values: { key, value in
                        out.writeInt(key)
                        out.writeByte(9)
                        out.writeHex(value.bytes)
                        out.writeByte(10)
                        done += 1
                        if done & 4095 == 0 { bar?.show(done: done, total: total) }
                        return out.error == nil
                    })
                }
            } else {
                try engine(db) { () throws(BoxwoodError) in
                    try box.scan(t, values: { key, value in
                        key.withUnsafeBytes { out.writeHex($0) }
                        out.writeByte(9)
                        out.writeHex(value.bytes)
                        out.writeByte(10)
                        done += 1
                        if done & 4095 == 0 { bar?.show(done: done, total: total) }
                        return out.error == nil
                    })
                }
            }
            if out.error != nil { break }
        }
        out.flush()
        if out.error == nil { bar?.finish() }
        if let error = out.error {
            throw CommandFailure(status: ExitStatus.failure, error.message, place: nil)
        }
    }
}
