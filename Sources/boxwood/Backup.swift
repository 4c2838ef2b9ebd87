import ArgumentParser
import BoxwoodStore

/// `boxwood backup DB DEST [--json]`: a hot backup (``ValueBox/backup(to:progress:)``): a consistent copy of one
/// snapshot of `DB`, written while other processes keep committing (no writer lock is taken), into the new
/// directory `DEST`.
///
/// The copy is written under a temporary name beside `DEST` (`DEST.partial-<random>`), synced and renamed, so a
/// kill or a failure never leaves a half backup under `DEST`. It is compact (packed pages, no free pages). Prints
/// the snapshot's version and what was copied (with `--json`:
/// `{"path": "...", "version": N, "tables": N, "entries": N, "bytes": N}`). A progress bar shows on stderr when it
/// is a terminal. Exit 0 on success; 1 when `DB` is missing or the copy cannot be written (nothing is left under
/// `DEST`); 2 when `DEST` already exists or `DB` is not a database; 3 when `DB` is damaged; 4 when it is locked.
struct Backup: ParsableCommand, JSONOutput {
    static let configuration = CommandConfiguration(
        abstract: "Copy a consistent snapshot of a database to a new directory while others keep writing.",
        discussion: "The copy is compact, written under a temporary name, synced, and renamed to DEST: a kill never leaves a half backup under DEST. DEST must not exist."
    )

    @Argument(help: "The database directory.") var db: String
    @OptionGroup var encryption: EncryptionOptions
    @Argument(help: "The new directory for the copy (must not exist).") var dest: String
    @Option(name: .customLong("new-key-file"), help: "Encrypt the copy under this key and salt instead (same format as --key-file).")
    var newKeyFile: String?
    @Flag(help: "Write the copy in the clear, whatever the database's encryption.") var decrypt = false
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "No progress bar, even on a terminal.") var quiet = false

    func run() throws {
        if newKeyFile != nil && decrypt {
            throw CommandFailure(status: ExitStatus.badInput, "give at most one of --new-key-file and --decrypt", place: nil)
        }
        let copyKey = try newKeyFile.map { path throws(CommandFailure) in try EncryptionOptions.readKeyFile(path, option: "--new-key-file") }
        let box = try openReadOnly(db, encryption: encryption)
        defer { try? box.close() }
        let bar = ProgressBar.onTerminal(unit: .entries, quiet: quiet)
        let result: BackupResult
        do {
            let show = { (progress: BackupProgress) -> Void in bar?.show(done: progress.entriesCopied, total: progress.entriesTotal) }
            if newKeyFile != nil || decrypt {
                result = try box.exportEncrypted(to: dest, encryptionParameters: copyKey, progress: show)
            } else {
                result = try box.backup(to: dest, progress: show)
            }
        } catch {
            bar?.clear()
            throw CommandFailure(error, database: db)
        }
        bar?.finish()
        if json {
            print("{\"path\": \(jsonString(dest)), \"version\": \(result.version), \"tables\": \(result.tables), \"entries\": \(result.entries), \"bytes\": \(result.bytes)}")
        } else {
            print("backed up \(db) at version \(result.version) to \(dest): \(counted(result.tables, "table")), \(counted(result.entries, "entry")), \(formatBytes(result.bytes))")
        }
    }
}
