import ArgumentParser
import BoxwoodStore

/// `boxwood check DB [--json]`: runs ``ValueBox/check()`` on a read-only open (every checksum, key order,
/// tree shape, per-table counts and page accounting).
///
/// Sound: prints `ok` and exits 0. Otherwise prints each problem on its own line and exits 1. With `--json`
/// prints `{"ok": true|false, "problems": [...], "pages_checked": N, "entries_checked": N, "wal_torn_tail_bytes": N}`.
/// A torn tail at the end of the WAL (an interrupted append, which the next writer cuts) is not a problem; it is
/// noted on stderr. A database
/// that cannot even be opened is a failure too (exit 1, message on stderr; with `--json` also a JSON
/// object with `ok: false` and the reason as its problem). A progress bar (pages) shows on stderr when it is
/// a terminal and the check takes more than a moment.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify every checksum, key order, tree shape and free-space accounting.",
        discussion: "Exit code 0 when the database is sound, 1 when a problem was found or it cannot be opened."
    )

    @Argument(help: "The database directory.") var db: String
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        noteIfLastWriterCrashed(db)
        let box: ValueBox
        do {
            box = try ValueBox(path: db, options: ValueBoxOptions(readOnly: true))
        } catch {
            if json {
                print("{\"ok\": false, \"problems\": [\(jsonString(explain(error)))], \"pages_checked\": 0, \"entries_checked\": 0}")
            }
            printError(explain(error))
            throw ExitCode(ExitStatus.failure)
        }
        defer { try? box.close() }
        let bar = ProgressBar.onTerminal(unit: .pages)
        let report: CheckReport
        do {
            report = try box.check { progress in bar?.show(done: progress.pagesChecked, total: max(progress.pagesTotal, progress.pagesChecked)) }
        } catch {
            bar?.clear()
            printError(explain(error))
            throw ExitCode(ExitStatus.failure)
        }
        bar?.finish()
        let torn = box.lastRecovery?.tornTailBytes ?? 0
        if let recovery = box.lastRecovery, let offset = recovery.tornTailOffset {
            printError("note: \(db)/wal ends in a torn tail of \(recovery.tornTailBytes) bytes at offset \(offset) after "
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
            printError("\(db): check found \(report.problems.count) problem(s)")
            throw ExitCode(ExitStatus.failure)
        }
    }
}
