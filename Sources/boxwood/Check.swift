import ArgumentParser
import BoxwoodStore

/// `boxwood check DB [--json]`: runs ``ValueBox/check()`` on a read-only open (every checksum, key order,
/// tree shape, per-table counts and page accounting).
///
/// Sound: prints `ok` and exits 0. Otherwise prints every problem found, each on its own line, and exits 3 (damaged).
/// With `--json` prints `{"ok": true|false, "problems": [...], "pages_checked": N, "entries_checked": N,
/// "wal_torn_tail_bytes": N}`. A torn tail at the end of the WAL (an interrupted append, which the next writer cuts)
/// is not a problem; it is noted on stderr. A database that cannot even be opened is reported by the error contract
/// (``CommandFailure``: exit 1 missing, 2 not a database, 3 damaged beyond opening, 4 locked). A progress bar (pages)
/// shows on stderr when it is a terminal and the check takes more than a moment.
struct Check: ParsableCommand, JSONOutput {
    static let configuration = CommandConfiguration(
        abstract: "Verify every checksum, key order, tree shape and free-space accounting.",
        discussion: "Lists every problem found. Exit code 0 when the database is sound, 3 when it is damaged, 1 when it is missing, 2 when it is not a database, 4 when it is locked."
    )

    @Argument(help: "The database directory.") var db: String
    @OptionGroup var encryption: EncryptionOptions
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "No progress bar, even on a terminal.") var quiet = false

    func run() throws {
        let box = try openReadOnly(db, encryption: encryption)
        defer { try? box.close() }
        let bar = ProgressBar.onTerminal(unit: .pages, quiet: quiet)
        let report: CheckReport
        do {
            report = try box.check { progress in bar?.show(done: progress.pagesChecked, total: max(progress.pagesTotal, progress.pagesChecked)) }
        } catch {
            bar?.clear()
            throw CommandFailure(error, database: db)
        }
        bar?.finish()
        let torn = box.lastRecovery?.tornTailBytes ?? 0
        if let recovery = box.lastRecovery, let offset = recovery.tornTailOffset {
            printNote("note: \(db)/wal ends in a torn tail of \(recovery.tornTailBytes) bytes at offset \(offset) after "
                       + "\(recovery.replayedCommits) commit(s): an append that never finished; the next writer cuts it")
        }
        if json {
            let problems = report.problems.map(jsonString).joined(separator: ", ")
            print("{\"ok\": \(report.isOK), \"problems\": [\(problems)], \"pages_checked\": \(report.pagesChecked), \"entries_checked\": \(report.entriesChecked), \"wal_torn_tail_bytes\": \(torn)}")
        } else if report.isOK {
            print("ok")
        } else {
            for problem in report.problems { print(problem) }
        }
        if !report.isOK {
            // The problems are the output; the exit code says the database is damaged.
            if !json { printNote("\(db): check found \(counted(report.problems.count, "problem"))") }
            throw ExitCode(ExitStatus.damaged)
        }
    }
}
