import ArgumentParser
import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `boxwood watch DB [--interval S] [--count N] [--json]`: follows the commits other processes make to the
/// database and prints each change. Opens the database read-only, as a reader: it never takes the write lock
/// and never delays a writer. Every `--interval` seconds it reads the TransactionStateVersion from the shared
/// header (one atomic load, no I/O); when it moved, it catches up with the newest commit and compares the
/// per-table figures with the last ones printed. Several commits between two looks are one change.
///
/// Text output: a first line `watching DB: version V, 3 tables, 120 entries (Ctrl-C to stop)`, then per change
///
///     version 14 (+2 commits) at 17:00:01
///       table 1	binary	entries 12 (+2)	bytes 345 (+50)
///       table 2	int64	entries 3	bytes 40
///       changed: table 1 +2 entries, +50 bytes
///
/// (every table as `stat` lists it, deltas where they changed, local time). `changed: no table sizes` when
/// the commits left every count and size as it was (values rewritten in place). With `--json`, one JSON
/// object per line: `{"event": "start", "version", "tables"}` and per change `{"event": "change", "version",
/// "previous_version", "commits", "time", "tables": [{"id", "key_type", "entries", "bytes"}], "changes":
/// [{"id", "kind": "changed"|"new"|"removed", "entries_delta", "bytes_delta"}]}`.
///
/// Runs until SIGINT or SIGTERM (exit 0) or until `--count` changes were printed (exit 0).
struct Watch: ParsableCommand, JSONOutput {
    static let configuration = CommandConfiguration(
        abstract: "Follow other processes' commits and print what each changed.",
        discussion: "A reader: it never blocks a writer. Ctrl-C (SIGINT) or SIGTERM stops it with exit code 0."
    )

    @Argument(help: "The database directory.") var db: String
    @OptionGroup var encryption: EncryptionOptions
    @Option(help: "Seconds between looks at the shared header.") var interval: Double = 0.2
    @Option(help: "Exit after printing N changes.") var count: Int?
    @Flag(help: "Print one JSON object per line.") var json = false

    func validate() throws {
        if !(interval > 0 && interval <= 3600) { throw ValidationError("--interval must be more than 0 and at most 3600 seconds") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() throws {
        let stop = StopSignals()
        let box = try openReadOnly(db, encryption: encryption)
        defer { try? box.close() }
        // Without write access to the shared header a reader cannot see other processes' commits.
        if access(db + "/header", R_OK | W_OK) != 0 {
            throw CommandFailure(status: ExitStatus.failure, "the shared header file 'header' is not writable by this user (read-only directory?); "
                + "watch needs it to follow other processes' commits", place: db)
        }
        var last = try engine(db) { () throws(BoxwoodError) in try box.statistics() }
        var seen = box.transactionStateVersion
        try emit(start: last)
        var printed = 0
        while count.map({ printed < $0 }) ?? true, stop.sleep(interval) {
            let published = box.transactionStateVersion
            if published == seen { continue }
            seen = published
            let now = try engine(db) { () throws(BoxwoodError) in try box.statistics() }
            if now.transactionStateVersion == last.transactionStateVersion { continue }
            try emit(change: last, now)
            last = now
            printed += 1
        }
    }

    private func emit(start s: DatabaseStatistics) throws {
        if json {
            var object = JSONObject()
            object.add("event", "start")
            object.add("version", s.transactionStateVersion)
            object.add("tables", s.tables.map(tableJSON))
            print(object.text)
        } else {
            let entries = s.tables.reduce(0) { $0 + $1.entries }
            print("watching \(db): version \(s.transactionStateVersion), \(counted(s.tables.count, "table")), \(counted(entries, "entry")) (Ctrl-C to stop)")
        }
        try flushOrFail()
    }

    private func emit(change old: DatabaseStatistics, _ new: DatabaseStatistics) throws {
        let changes = TableChange.between(old.tables, new.tables)
        let commits = Int64(bitPattern: new.transactionStateVersion &- old.transactionStateVersion)
        if json {
            var object = JSONObject()
            object.add("event", "change")
            object.add("version", new.transactionStateVersion)
            object.add("previous_version", old.transactionStateVersion)
            object.add("commits", commits)
            object.add("time", Int64(time(nil)))
            object.add("tables", new.tables.map(tableJSON))
            object.add("changes", changes.map { change in
                var item = JSONObject()
                item.add("id", change.id)
                item.add("kind", change.kind.rawValue)
                item.add("entries_delta", change.entriesDelta)
                item.add("bytes_delta", change.bytesDelta)
                return item
            })
            print(object.text)
        } else {
            print("version \(new.transactionStateVersion) (+\(counted(Int(commits), "commit"))) at \(clockTime())")
            let byId = Dictionary(changes.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            for t in new.tables {
                let change = byId[t.id]
                let entries = change.map { $0.entriesDelta != 0 ? " (\(signed($0.entriesDelta)))" : "" } ?? ""
                let bytes = change.map { $0.bytesDelta != 0 ? " (\(signed($0.bytesDelta)))" : "" } ?? ""
                print("  table \(t.id)\t\(t.keyType)\tentries \(t.entries)\(entries)\tbytes \(t.bytes)\(bytes)")
            }
            print("  changed: " + (changes.isEmpty ? "no table sizes" : changes.map(\.text).joined(separator: "; ")))
        }
        try flushOrFail()
    }

    private func tableJSON(_ t: TableStatistics) -> JSONObject {
        var item = JSONObject()
        item.add("id", t.id)
        item.add("key_type", "\(t.keyType)")
        item.add("entries", t.entries)
        item.add("bytes", t.bytes)
        return item
    }

    /// Each change is written out at once (stdout may be a pipe); a failed write ends the command.
    private func flushOrFail() throws {
        if fflush(nil) != 0 {
            throw CommandFailure(status: ExitStatus.failure, "writing to stdout failed: \(String(cString: strerror(errno))) (errno \(errno))", place: "stdout")
        }
    }

    /// The local time as `HH:MM:SS`.
    private func clockTime() -> String {
        var now = time(nil)
        var parts = tm()
        guard localtime_r(&now, &parts) != nil else { return "\(now)" }
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }
}
