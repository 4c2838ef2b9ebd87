import ArgumentParser
import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `boxwood recover DB DEST [--json]`: salvages a damaged database into a new one (``ValueBox/salvage(from:to:progress:)``).
///
/// Reads DB without opening it as a database and without writing to it: every page that passes its checksum is used
/// where the rules in docs/file-format.md ("Salvage") allow — the trees from their roots, skipping only the subtree
/// of a damaged page; orphan pages under a damaged page when they can be attributed to exactly one table; overflow
/// values only whole; then the intact prefix of the WAL. Writes everything recovered to the new database DEST (which
/// must not exist: exit 2, nothing written) through a temporary sibling directory renamed to DEST at the end.
///
/// Prints, per table, the entries recovered, lost and the pages lost, then what could not be attributed and what
/// the WAL replay did (`--json`: one object). Exit 0 when nothing was lost, 1 when something was lost (DEST holds
/// the rest) or the salvage failed, 2 for bad usage or an existing DEST, 3 when nothing could be recovered (no meta
/// page, or a catalog whose trees could not be attributed; DEST then holds no entries). Errors follow the error
/// contract (``CommandFailure``). A progress bar (pages) shows on stderr when it is a terminal, unless `--quiet`.
struct Recover: ParsableCommand, JSONOutput {
    static let configuration = CommandConfiguration(
        abstract: "Salvage every readable entry of a damaged database into a new database.",
        discussion: """
            DB is only read. Every page that passes its checksum is used: each table's tree is walked from its root, \
            skipping only what hangs below a damaged page; pages orphaned by a damaged branch are recovered when their \
            keys fit the lost range of exactly one table (free pages, which may hold old versions, are never used); \
            overflow values are taken only whole; then the intact prefix of the WAL is replayed. When the newest \
            checkpoint's meta page is lost, the previous checkpoint is recovered instead (and reported). The rules are \
            in docs/file-format.md, "Salvage". DEST must not exist; it is written beside it and renamed at the end. \
            Exit codes: 0 nothing lost, 1 something lost (reported) or failure, 2 bad usage or DEST exists, \
            3 nothing could be recovered.
            """
    )

    @Argument(help: "The damaged database directory (read only).") var db: String
    @Argument(help: "The new database directory to write (must not exist).") var dest: String
    @Flag(help: "Print the report as JSON.") var json = false
    @Flag(help: "No progress bar, even on a terminal.") var quiet = false

    static let nothingRecovered: Int32 = 3

    func run() throws {
        var info = stat()
        if lstat(dest, &info) == 0 {
            throw CommandFailure(status: ExitStatus.badInput, "exists; recover writes a new database and never writes into an existing path", place: dest)
        }
        let bar = ProgressBar.onTerminal(unit: .pages, quiet: quiet)
        let report: SalvageReport
        do {
            report = try engine(db) { () throws(BoxwoodError) in
                try ValueBox.salvage(from: db, to: dest) { progress in
                    bar?.show(done: progress.pagesRead, total: max(progress.pagesTotal, progress.pagesRead),
                              detail: "\(progress.entriesRecovered) entries")
                }
            }
        } catch {
            bar?.clear()
            throw error
        }
        bar?.finish()
        print(json ? jsonReport(report) : textReport(report), terminator: json ? "\n" : "")
        if report.isComplete { return }
        // The report is the output; the exit code says how it went (a note on stderr unless the output is JSON).
        if report.recoveredNothing {
            if !json { printNote("\(db): nothing could be recovered; \(dest) holds no entries") }
            throw ExitCode(Recover.nothingRecovered)
        }
        if !json { printNote("\(db): some entries were lost; \(dest) holds everything that could be recovered") }
        throw ExitCode(ExitStatus.failure)
    }

    private func pageList(_ pages: [UInt64]) -> String {
        let shown = pages.prefix(20).map(String.init).joined(separator: ", ")
        return pages.count > 20 ? shown + ", … (\(pages.count) in all)" : shown
    }

    func textReport(_ report: SalvageReport) -> String {
        var out = "recovered \(db) into \(dest): \(counted(report.entriesRecovered, "entry")) in \(counted(report.tables.count, "table"))\n"
        let slots = report.metaSlots.enumerated().map { "page \($0.offset) \($0.element)" }.joined(separator: "; ")
        out += "meta: \(slots)\n"
        if let generation = report.checkpointGeneration {
            out += "salvaged checkpoint generation \(generation)"
            if report.usedOlderCheckpoint { out += " (OLDER: the newest checkpoint's meta page is lost; later changes are lost)" }
            out += "\n"
        }
        if !report.catalogComplete { out += "catalog: damaged" + (report.catalogPagesLost.isEmpty ? "" : ", pages lost: \(pageList(report.catalogPagesLost))") + "\n" }
        if !report.freelistUsable && report.checkpointGeneration != nil { out += "freelist: not readable (orphan pages cannot be used)\n" }
        for table in report.tables {
            var line = "table \(table.id) \(table.keyType): \(counted(table.entries, "entry"))"
            var parts = ["\(table.entriesFromPages) from pages"]
            if table.entriesFromOrphanPages > 0 {
                parts.append("\(table.entriesFromOrphanPages) of them from \(counted(table.orphanLeafPages.count, "orphan leaf page"))")
            }
            if let expected = table.entriesExpected { parts.append("the catalog counted \(expected)") }
            switch table.attribution {
            case .catalog: break
            case .previousCatalog: parts.append("found through the previous checkpoint's catalog")
            case .wal: parts.append("created by the WAL")
            }
            line += " (" + parts.joined(separator: "; ") + ")"
            if !table.isComplete {
                var lost: [String] = []
                if !table.pagesLost.isEmpty { lost.append("\(counted(table.pagesLost.count, "page")) (\(pageList(table.pagesLost)))") }
                if table.entriesLost > 0 { lost.append(counted(table.entriesLost, "entry") + " with a damaged value") }
                line += "; LOST " + lost.joined(separator: ", ")
            }
            out += line + "\n"
        }
        if !report.unattributedLeafPages.isEmpty {
            out += "unattributed: \(counted(report.unattributedLeafPages.count, "leaf page")) (\(pageList(report.unattributedLeafPages))) "
                + "holding \(counted(report.unattributedEntries, "entry")), not recovered\n"
        }
        if !report.unattributedDamagedPages.isEmpty {
            out += "damaged pages of unknown tables: \(pageList(report.unattributedDamagedPages))\n"
        }
        out += "wal: \(counted(report.wal.commitsReplayed, "commit")) replayed"
        if report.wal.bytesNotReplayed > 0 { out += ", \(report.wal.bytesNotReplayed) bytes not replayed" }
        if let note = report.wal.note { out += " (\(note))" }
        out += "\n"
        for note in report.notes.prefix(50) { out += "note: \(note)\n" }
        if report.notes.count > 50 { out += "note: … \(report.notes.count - 50) more\n" }
        out += report.isComplete ? "complete: nothing was lost\n" : "INCOMPLETE: some entries were lost (see above)\n"
        return out
    }

    func jsonReport(_ report: SalvageReport) -> String {
        var object = JSONObject()
        object.add("complete", report.isComplete)
        object.add("nothing_recovered", report.recoveredNothing)
        object.add("source", db)
        object.add("destination", dest)
        object.add("entries", report.entriesRecovered)
        object.add("meta_slots", report.metaSlots.map(\.description))
        object.add("checkpoint_generation", report.checkpointGeneration)
        object.add("used_older_checkpoint", report.usedOlderCheckpoint)
        object.add("catalog_complete", report.catalogComplete)
        object.add("catalog_pages_lost", report.catalogPagesLost)
        object.add("freelist_usable", report.freelistUsable)
        object.add("tables", report.tables.map { table in
            var t = JSONObject()
            t.add("id", table.id)
            t.add("key_type", table.keyType.description)
            t.add("attribution", table.attribution.rawValue)
            t.add("entries", table.entries)
            t.add("entries_expected", table.entriesExpected)
            t.add("entries_from_pages", table.entriesFromPages)
            t.add("entries_from_orphan_pages", table.entriesFromOrphanPages)
            t.add("orphan_leaf_pages", table.orphanLeafPages)
            t.add("entries_lost", table.entriesLost)
            t.add("pages_lost", table.pagesLost)
            return t
        })
        object.add("unattributed_leaf_pages", report.unattributedLeafPages)
        object.add("unattributed_entries", report.unattributedEntries)
        object.add("unattributed_damaged_pages", report.unattributedDamagedPages)
        var wal = JSONObject()
        wal.add("commits_replayed", report.wal.commitsReplayed)
        wal.add("bytes_not_replayed", report.wal.bytesNotReplayed)
        wal.add("commits_lost", report.wal.commitsLost)
        wal.add("note", report.wal.note)
        object.add("wal", wal)
        object.add("pages_in_file", report.pagesInFile)
        object.add("pages_read", report.pagesRead)
        object.add("notes", report.notes)
        return object.text
    }
}
