import ArgumentParser
import BoxwoodStore

/// `boxwood tables DB [--json]`: one line per table, by ascending id (the engine's own, negative ids, too):
/// `<id>\t<key type>\t<entries>\t<bytes>`, key type `binary` or `int64`, bytes the sum of key and uncompressed
/// value lengths (the figures of `stat`). With `--json`, one object: `{"tables": [{"id", "key_type",
/// "entries", "bytes"}]}`. Opens the database read-only.
///
/// Exit codes: 0 listed (a database with no tables prints nothing, or `{"tables": []}`); 1 the database cannot
/// be opened; 3 database damaged; 4 no free reader slot.
struct Tables: ParsableCommand, JSONOutput {
    static let configuration = CommandConfiguration(
        abstract: "List the tables: id, key type, entries, bytes.",
        discussion: "One tab-separated line per table: '<id>\\t<binary|int64>\\t<entries>\\t<bytes>'. Exit codes: 0 ok, 1 failure, 3 database damaged, 4 locked."
    )

    @Argument(help: "The database directory.") var db: String
    @OptionGroup var encryption: EncryptionOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let box = try openReadOnly(db, encryption: encryption)
        defer { try? box.close() }
        let tables = try engine(db) { () throws(BoxwoodError) in try box.tableStatistics() }
        if json {
            print("{\"tables\": [" + tables.map(\.json).joined(separator: ", ") + "]}")
        } else {
            for t in tables { print("\(t.id)\t\(t.keyType)\t\(t.entries)\t\(t.bytes)") }
        }
    }
}

extension TableStatistics {
    /// `{"id": 1, "key_type": "binary", "entries": 3, "bytes": 120}`: a table in the `--json` outputs.
    var json: String {
        "{\"id\": \(id), \"key_type\": \"\(keyType)\", \"entries\": \(entries), \"bytes\": \(bytes)}"
    }
}
