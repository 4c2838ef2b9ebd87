import ArgumentParser
import BoxwoodPlatform
import BoxwoodStore

/// `boxwood readers DB [--json] [--clear-stale]`: the reader table (``ValueBox/readers(ofDatabaseAt:fileSystem:)``):
/// every process that has the database open, the checkpoint generation its snapshot pins (pages of older generations
/// cannot be reused while it does), how long ago it opened the database, and whether it is still running.
/// `--clear-stale` first frees the slots of processes that died (``ValueBox/clearStaleReaders(ofDatabaseAt:fileSystem:)``).
///
/// Text: one line per slot, `slot <i>  pid <pid>  pinned <generation|->  age <seconds|?>s  <alive|DEAD>`, then a
/// summary line. With `--json`: `{"readers": [{"slot", "pid", "pinned_generation" (null when none), "age_seconds"
/// (null when unknown), "alive"}], "cleared": N}`. Reads only the shared header, never takes the writer lock.
struct Readers: ParsableCommand, JSONOutput {
    static let configuration = CommandConfiguration(
        abstract: "List the processes that have a database open, and what each pins.",
        discussion: "--clear-stale frees the reader slots of processes that died first. Never blocks or waits for a writer."
    )

    @Argument(help: "The database directory.") var db: String
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "Free the slots of processes that are no longer running first.") var clearStale = false

    func run() throws {
        let cleared = clearStale ? try engine(db) { () throws(BoxwoodError) in try ValueBox.clearStaleReaders(ofDatabaseAt: db) } : 0
        let readers = try engine(db) { () throws(BoxwoodError) in try ValueBox.readers(ofDatabaseAt: db) }
        let now = WallClock.secondsSinceEpoch()
        func age(_ reader: ReaderInfo) -> UInt64? { reader.claimedAt.map { now >= $0 ? now - $0 : 0 } }
        if json {
            let rows = readers.map { r in
                "{\"slot\": \(r.slot), \"pid\": \(r.processId), \"pinned_generation\": \(r.pinnedGeneration.map(String.init) ?? "null"), "
                    + "\"age_seconds\": \(age(r).map(String.init) ?? "null"), \"alive\": \(r.isAlive)}"
            }
            print("{\"readers\": [\(rows.joined(separator: ", "))], \"cleared\": \(cleared)}")
            return
        }
        for r in readers {
            print("slot \(r.slot)\tpid \(r.processId)\tpinned \(r.pinnedGeneration.map(String.init) ?? "-")\t"
                + "age \(age(r).map(String.init) ?? "?")s\t\(r.isAlive ? "alive" : "DEAD")")
        }
        let dead = readers.filter { !$0.isAlive }.count
        var summary = "\(counted(readers.count, "reader"))"
        if dead > 0 { summary += ", \(dead) of them dead (free their slots with --clear-stale)" }
        if clearStale { summary += "; cleared \(counted(cleared, "stale slot"))" }
        print(summary)
    }
}
