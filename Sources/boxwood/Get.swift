import ArgumentParser
import BoxwoodStore

/// `boxwood get DB TABLE KEY [--hex | --int64] [--hex-output]`: prints the value of one key to stdout, its raw
/// bytes as stored (no newline added), or with `--hex-output` lowercase hex and a newline. Key forms: see
/// ``EntryAddress``. Opens the database read-only.
///
/// Exit codes: 0 printed; 1 the key or the table is missing (nothing on stdout, a message on stderr), the
/// database cannot be opened, or stdout cannot be written; 2 bad input (key, table id, key form vs the table's
/// key type); 3 database damaged; 4 no free reader slot.
struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the value of one key (raw bytes, or hex with --hex-output).",
        discussion: """
            KEY is UTF-8 text, or hex bytes with --hex, or a signed 64-bit integer with --int64 (for an int64 table). \
            A TABLE or KEY starting with '-' goes after '--': boxwood get --int64 DB 1 -- -5. \
            Exit codes: 0 printed, 1 key or table missing (nothing on stdout), 2 bad input or a key form that does not \
            match the table's key type, 3 database damaged, 4 locked.
            """
    )

    @OptionGroup var entry: EntryAddress
    @OptionGroup var encryption: EncryptionOptions
    @Flag(help: "Print the value as lowercase hex and a newline instead of its raw bytes.") var hexOutput = false

    func run() throws {
        let (table, key) = try entry.resolved()
        let box = try openReadOnly(entry.db, encryption: encryption)
        defer { try? box.close() }
        let out = OutputBuffer()
        let hexOutput = hexOutput
        let found: Bool? = try engine(entry.db) { () throws(BoxwoodError) in
            try box.withValue(table, key: key) { value in
                if hexOutput {
                    out.writeHex(value)
                    out.writeByte(10)
                } else {
                    out.write(value)
                }
                out.flush()
                return true
            }
        }
        if found != true {
            let tableExists = try engine(entry.db) { () throws(BoxwoodError) in try box.allTables().contains { $0.id == table.id } }
            throw CommandFailure(status: ExitStatus.failure, tableExists ? "table \(table.id) has no key \(entry.keyDescription)" : "no table \(table.id)",
                                 place: entry.db)
        }
        if let error = out.error {
            throw CommandFailure(status: ExitStatus.failure, error.message, place: "stdout")
        }
    }
}
