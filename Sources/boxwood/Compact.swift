import ArgumentParser
import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `boxwood compact DB [--json] [--lock-timeout S]`: rewrites the database into a minimal data file and swaps
/// it in atomically (``ValueBox/compact(progress:)``). Readers in other processes keep working; writers wait.
///
/// Shows a progress bar on stderr when stderr is a terminal. Prints the sizes before and after (with `--json`:
/// `{"bytes_before": N, "bytes_after": N, "free_pages_before": N, "entries": N}`). Exit 0 on success, 1 when
/// the database cannot be opened or compacted (nothing is lost: the old file stays until the swap).
struct Compact: ParsableCommand, JSONOutput {
    static let configuration = CommandConfiguration(
        abstract: "Rewrite the database into a minimal file and swap it in atomically.",
        discussion: "Readers keep working meanwhile; writers wait for the writer lock. A crash or kill leaves either the old or the new file, both complete."
    )

    @Argument(help: "The database directory.") var db: String
    @OptionGroup var encryption: EncryptionOptions
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "No progress bar, even on a terminal.") var quiet = false
    @Option(help: "Seconds to wait for another process that is writing to the database.") var lockTimeout: Double = 10

    func run() throws {
        // A writable open creates a missing database: compacting one that does not exist is a mistake.
        try requireExistingDatabase(db)
        var options = ValueBoxOptions()
        options.encryption = try encryption.parameters()
        options.lockTimeout = lockTimeout
        let box = try openWritable(db, options: options)
        defer { try? box.close() }
        let bar = ProgressBar.onTerminal(unit: .entries, quiet: quiet)
        let result: CompactionResult
        do {
            result = try box.compact { progress in bar?.show(done: progress.entriesCopied, total: progress.entriesTotal) }
        } catch {
            bar?.clear()
            throw CommandFailure(error, database: db)
        }
        bar?.finish()
        if json {
            print("{\"bytes_before\": \(result.bytesBefore), \"bytes_after\": \(result.bytesAfter), \"free_pages_before\": \(result.freePagesBefore), \"entries\": \(result.entries)}")
        } else {
            print("compacted \(db): \(formatBytes(result.bytesBefore)) -> \(formatBytes(result.bytesAfter)) (\(result.entries) entries, \(result.freePagesBefore) free pages before)")
        }
    }
}

/// `bytes` in the largest binary unit that keeps a number >= 1, with one decimal.
func formatBytes(_ bytes: UInt64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
    if unit == 0 { return "\(bytes) B" }
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) \(units[unit])"
}
