import ArgumentParser
import BoxwoodStore

/// `boxwood del DB TABLE KEY [--hex | --int64] [--lock-timeout S]`: removes one key, in one transaction. Key
/// forms: see ``EntryAddress``. The database must exist; the table is kept when its last key goes.
///
/// Exit codes: 0 removed; 1 the key or the table was not there (a message on stderr; nothing changed), the
/// database is missing, or the write failed; 2 bad input (key, table id, key form vs the table's key type);
/// 3 database damaged; 4 another process held the write lock longer than `--lock-timeout`.
struct Del: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove one key.",
        discussion: """
            KEY is UTF-8 text, or hex bytes with --hex, or a signed 64-bit integer with --int64 (for an int64 table). \
            A TABLE or KEY starting with '-' goes after '--': boxwood del --int64 DB 1 -- -5. \
            Exit codes: 0 removed, 1 key or table not there, 2 bad input or a key form that does not match the \
            table's key type, 3 database damaged, 4 locked.
            """
    )

    @OptionGroup var entry: EntryAddress
    @OptionGroup var encryption: EncryptionOptions
    @Option(help: "Seconds to wait for another process that is writing to the database.") var lockTimeout: Double = 10

    func validate() throws {
        if !(lockTimeout >= 0) { throw ValidationError("--lock-timeout must be 0 or more seconds") }
    }

    func run() throws {
        let (table, key) = try entry.resolved()
        try requireExistingDatabase(entry.db)
        var options = ValueBoxOptions()
        options.encryption = try encryption.parameters()
        options.lockTimeout = lockTimeout
        let box = try openWritable(entry.db, options: options)
        do {
            try engine(entry.db) { () throws(BoxwoodError) in try box.begin() }
            let tableExists = try engine(entry.db) { () throws(BoxwoodError) in try box.allTables().contains { $0.id == table.id } }
            if !tableExists {
                throw CommandFailure(status: ExitStatus.failure, "no table \(table.id)", place: entry.db)
            }
            let present = try engine(entry.db) { () throws(BoxwoodError) in try box.exists(table, key: key) }
            if !present {
                throw CommandFailure(status: ExitStatus.failure, "table \(table.id) has no key \(entry.keyDescription)", place: entry.db)
            }
            try engine(entry.db) { () throws(BoxwoodError) in
                try box.remove(table, key: key)
                try box.commit()
            }
        } catch {
            box.abort()
            try? box.close()
            throw error
        }
        try engine(entry.db) { () throws(BoxwoodError) in try box.close() }
    }
}
