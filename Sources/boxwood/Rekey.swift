import ArgumentParser
import BoxwoodStore

/// `boxwood rekey DB [--key-file OLD] (--new-key-file NEW | --decrypt) [--json] [--lock-timeout S]`: moves the
/// database to another key (``ValueBox/rekey(to:)``), encrypts a plain one (no `--key-file`), or with `--decrypt`
/// stores it in the clear. Crash-safe: the contents are written into a new file that a rename swaps in, so a kill
/// leaves the database complete under either the old or the new key.
///
/// Prints what it did (with `--json`: `{"encrypted": true|false, "bytes": N}`). Exit 0 on success; 1 when the
/// database is missing or cannot be rewritten; 2 for a wrong key, an unreadable or malformed key file, or neither
/// or both of `--new-key-file` and `--decrypt`; 4 when another process holds the write lock.
struct Rekey: ParsableCommand, JSONOutput {
    static let configuration = CommandConfiguration(
        abstract: "Encrypt a database, change its key, or decrypt it.",
        discussion: "Other processes must reopen the database with the new key. A crash or kill leaves the database complete under the old or the new key."
    )

    @Argument(help: "The database directory.") var db: String
    @OptionGroup var encryption: EncryptionOptions
    @Option(name: .customLong("new-key-file"), help: "The new key and salt (same format as --key-file).") var newKeyFile: String?
    @Flag(help: "Store the database in the clear.") var decrypt = false
    @Flag(help: "Print JSON.") var json = false
    @Option(help: "Seconds to wait for another process that is writing to the database.") var lockTimeout: Double = 10

    func run() throws {
        if (newKeyFile == nil) == !decrypt {
            throw CommandFailure(status: ExitStatus.badInput, "give exactly one of --new-key-file and --decrypt", place: nil)
        }
        let target = try newKeyFile.map { path throws(CommandFailure) in try EncryptionOptions.readKeyFile(path, option: "--new-key-file") }
        try requireExistingDatabase(db)
        var options = ValueBoxOptions()
        options.lockTimeout = lockTimeout
        options.encryption = try encryption.parameters()
        let box = try openWritable(db, options: options)
        defer { try? box.close() }
        do {
            try box.rekey(to: target)
        } catch {
            throw CommandFailure(error, database: db)
        }
        let bytes = (try? box.statistics().fileBytes) ?? 0
        if json {
            print("{\"encrypted\": \(box.isEncrypted), \"bytes\": \(bytes)}")
        } else {
            print(box.isEncrypted ? "\(db) is encrypted under the new key (\(formatBytes(bytes)))" : "\(db) is decrypted (\(formatBytes(bytes)))")
        }
    }
}
