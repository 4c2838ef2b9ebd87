import ArgumentParser
import BoxwoodStore

/// `boxwood put DB TABLE KEY [VALUE] [--hex | --int64] [--hex-value] [--create] [--lock-timeout S]`: sets the
/// value of one key, in one transaction. VALUE is the argument's UTF-8 bytes, or stdin's bytes when VALUE is
/// omitted or `-` (read to the end, any size and any bytes); with `--hex-value` either is hex text (stdin's
/// trailing whitespace ignored). Key forms: see ``EntryAddress``.
///
/// The database must exist (a mistyped path is not turned into a new database), and so must the table unless
/// `--create` is given; a created table's key type follows the key form (`--int64`: int64, else binary).
///
/// Exit codes: 0 written; 1 the database or the table is missing, stdin cannot be read, or the write failed;
/// 2 bad input (key, value, table id, key form vs the table's key type); 3 database damaged; 4 another process
/// held the write lock longer than `--lock-timeout`. Nothing is written unless the exit code is 0.
struct Put: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set the value of one key (from the argument or stdin).",
        discussion: """
            KEY is UTF-8 text, or hex bytes with --hex, or a signed 64-bit integer with --int64 (for an int64 table). \
            VALUE is UTF-8 text, or hex with --hex-value; without VALUE (or with '-') the value is stdin, read to the \
            end. A TABLE or KEY starting with '-' goes after '--': boxwood put --int64 DB 1 -- -5 value. \
            Exit codes: 0 written, 1 database or table missing (see --create) or write failed, 2 bad input or a key \
            form that does not match the table's key type, 3 database damaged, 4 locked.
            """
    )

    @OptionGroup var entry: EntryAddress
    @OptionGroup var encryption: EncryptionOptions
    @Argument(help: "The value: UTF-8 text (hex with --hex-value). Omitted or '-': read stdin to the end.") var value: String?
    @Flag(help: "VALUE (or stdin) is hex text; whitespace at the end of stdin is ignored.") var hexValue = false
    @Flag(help: "Create the table when it does not exist: an int64 table with --int64, else a binary one.") var create = false
    @Option(help: "Seconds to wait for another process that is writing to the database.") var lockTimeout: Double = 10

    func validate() throws {
        if !(lockTimeout >= 0) { throw ValidationError("--lock-timeout must be 0 or more seconds") }
    }

    func run() throws {
        let (table, key) = try entry.resolved()
        try requireExistingDatabase(entry.db)
        let bytes = try valueBytes()
        var options = ValueBoxOptions()
        options.encryption = try encryption.parameters()
        options.lockTimeout = lockTimeout
        let box = try openWritable(entry.db, options: options)
        do {
            try engine(entry.db) { () throws(BoxwoodError) in try box.begin() }
            let exists = try engine(entry.db) { () throws(BoxwoodError) in try box.allTables().contains { $0.id == table.id } }
            if !exists && !create {
                throw CommandFailure(status: ExitStatus.failure, "no table \(table.id); pass --create to create it (key type \(table.keyType))",
                                     place: entry.db)
            }
            try engine(entry.db) { () throws(BoxwoodError) in
                try box.set(table, key: key, array: bytes)
                try box.commit()
            }
        } catch {
            box.abort()
            try? box.close()
            throw error
        }
        try engine(entry.db) { () throws(BoxwoodError) in try box.close() }
    }

    /// The value's bytes: VALUE, or stdin when it is omitted or `-`; decoded from hex with `--hex-value`. A read
    /// error is exit 1, bad hex exit 2 (``CommandFailure``s).
    private func valueBytes() throws -> [UInt8] {
        var raw: [UInt8]
        if let value, value != "-" {
            raw = Array(value.utf8)
        } else {
            do throws(InputError) {
                raw = try readAllInput()
            } catch {
                throw CommandFailure(status: ExitStatus.failure, error.message, place: "stdin")
            }
            if hexValue {
                while let last = raw.last, last == 0x0A || last == 0x0D || last == 0x20 || last == 0x09 { raw.removeLast() }
            }
        }
        guard hexValue else { return raw }
        var decoded: [UInt8] = []
        let problem = raw.withUnsafeBytes { DumpText.decodeHex($0, into: &decoded) }
        if let problem {
            throw CommandFailure(status: ExitStatus.badInput, "bad hex value: \(problem)", place: value == nil || value == "-" ? "stdin" : nil)
        }
        return decoded
    }
}
