import ArgumentParser
import BoxwoodStore

/// `boxwood stat DB [--json]`: the file's format version and the one this tool supports, page size, pages
/// used/free, WAL bytes, TransactionStateVersion, and per table its id, key type, entry count and bytes (keys +
/// uncompressed values). Opens the database read-only (a file of another format version does not open: the
/// message names its version and the supported one).
///
/// JSON keys: `format_version` (the file's), `tool_format_version` (``BoxwoodFormat/dataVersion``), `page_size`,
/// `pages_total`, `pages_free`, `wal_bytes`, `transaction_state_version`, `tables` (an array of `{"id",
/// "key_type", "entries", "bytes"}`, key_type `"binary"` or `"int64"`).
struct Stat: ParsableCommand, JSONOutput {
    static let configuration = CommandConfiguration(abstract: "Show format, page, WAL and per-table figures.")

    @Argument(help: "The database directory.") var db: String
    @OptionGroup var encryption: EncryptionOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let box = try openReadOnly(db, encryption: encryption)
        defer { try? box.close() }
        let s = try engine(db) { () throws(BoxwoodError) in try box.statistics() }
        if json {
            let tables = s.tables.map(\.json).joined(separator: ", ")
            print("{\"format_version\": \(s.formatVersion), \"tool_format_version\": \(BoxwoodFormat.dataVersion), \"page_size\": \(s.pageSize), \"pages_total\": \(s.pagesTotal), "
                + "\"pages_free\": \(s.pagesFree), \"encrypted\": \(s.isEncrypted), \"file_bytes\": \(s.fileBytes), \"wal_bytes\": \(s.walBytes), \"transaction_state_version\": \(s.transactionStateVersion), "
                + "\"tables\": [\(tables)]}")
        } else {
            print("file format version:       \(s.formatVersion)")
            print("tool format version:       \(BoxwoodFormat.dataVersion)")
            print("page size:                 \(s.pageSize)")
            print("pages total:               \(s.pagesTotal)")
            print("pages used:                \(s.pagesTotal - min(s.pagesFree, s.pagesTotal))")
            print("pages free:                \(s.pagesFree)")
            print("encrypted:                 \(s.isEncrypted ? "yes (AES-256-GCM)" : "no")")
            print("file bytes:                \(s.fileBytes)")
            print("wal bytes:                 \(s.walBytes)")
            print("transaction state version: \(s.transactionStateVersion)")
            print("checkpoint generation:     \(s.checkpointGeneration)")
            print("tables:                    \(s.tables.count)")
            for t in s.tables {
                print("  table \(t.id)\t\(t.keyType)\tentries \(t.entries)\tbytes \(t.bytes)")
            }
        }
    }
}
