import BoxwoodStore
import CSQLite

/// SQLite FTS5 as Postbox uses it for its text index, configured like `SQLiteEngine` (journal_mode=WAL,
/// synchronous=NORMAL, mmap_size=0, temp_store=MEMORY): one table
/// `ft41 USING fts5(collectionId, itemId, contents, tags, tokenize='unicode61 remove_diacritics 2')`, inserts with
/// a prepared `INSERT`, queries `SELECT itemId FROM ft41 WHERE contents MATCH ?` (global) and
/// `… WHERE ft41 MATCH 'collectionId:"<id>" AND contents:(<query>)'` (one collection), each prepared once.
final class SQLiteFullText: FullTextBenchEngine {
    static let kind = EngineKind.sqlite
    private let db: OpaquePointer
    private var insert: OpaquePointer!
    private var matchAll: OpaquePointer!
    private var matchCollection: OpaquePointer!
    private var begin: OpaquePointer!
    private var commit: OpaquePointer!
    private var isClosed = false

    init(directory: String) throws(BenchError) {
        try makeDirectory(directory)
        var handle: OpaquePointer?
        let path = directory + "/fts.sqlite"
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
              let handle else {
            sqlite3_close(handle)
            throw .sqlite(operation: "open \(path)", message: "cannot open")
        }
        db = handle
        for pragma in ["PRAGMA mmap_size=0", "PRAGMA synchronous=NORMAL", "PRAGMA temp_store=MEMORY", "PRAGMA journal_mode=WAL",
                       "CREATE VIRTUAL TABLE IF NOT EXISTS ft41 USING fts5(collectionId, itemId, contents, tags, tokenize='unicode61 remove_diacritics 2')"] {
            try execute(pragma)
        }
        insert = try prepare("INSERT INTO ft41 (collectionId, itemId, contents, tags) VALUES (?, ?, ?, ?)")
        matchAll = try prepare("SELECT itemId FROM ft41 WHERE contents MATCH ?")
        matchCollection = try prepare("SELECT itemId FROM ft41 WHERE ft41 MATCH ?")
        begin = try prepare("BEGIN IMMEDIATE")
        commit = try prepare("COMMIT")
    }

    deinit {
        if !isClosed { finalize(); sqlite3_close_v2(db) }
    }

    func close() throws(BenchError) {
        finalize()
        isClosed = true
        let result = sqlite3_close(db)
        guard result == SQLITE_OK else { throw .sqlite(operation: "close", message: String(cString: sqlite3_errstr(result))) }
    }

    func beginBatch() throws(BenchError) { try run(begin, "BEGIN IMMEDIATE") }

    func commitBatch() throws(BenchError) { try run(commit, "COMMIT") }

    func index(collectionId: String, itemId: String, contents: String, tags: String) throws(BenchError) {
        defer { sqlite3_reset(insert); sqlite3_clear_bindings(insert) }
        bind(insert, 1, collectionId)
        bind(insert, 2, itemId)
        bind(insert, 3, contents)
        bind(insert, 4, tags)
        guard sqlite3_step(insert) == SQLITE_DONE else { throw failure("insert") }
    }

    func match(collectionId: String?, query: String, _ visit: (String) -> Void) throws(BenchError) {
        let statement: OpaquePointer = collectionId == nil ? matchAll : matchCollection
        defer { sqlite3_reset(statement); sqlite3_clear_bindings(statement) }
        if let collectionId {
            bind(statement, 1, "collectionId:\"\(collectionId)\" AND contents:(\(query))")
        } else {
            bind(statement, 1, query)
        }
        while true {
            let result = sqlite3_step(statement)
            if result == SQLITE_DONE { return }
            guard result == SQLITE_ROW else { throw failure("match \(query)") }
            let length = Int(sqlite3_column_bytes(statement, 0))
            let text = sqlite3_column_text(statement, 0)
            visit(text.map { String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self) } ?? "")
        }
    }

    // MARK: Statements

    /// Binds a string as text (SQLITE_TRANSIENT: SQLite copies it).
    private func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String) {
        text.withCString { pointer in
            _ = sqlite3_bind_text(statement, index, pointer, Int32(text.utf8.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        }
    }

    private func run(_ statement: OpaquePointer, _ sql: String) throws(BenchError) {
        defer { sqlite3_reset(statement) }
        guard sqlite3_step(statement) == SQLITE_DONE else { throw failure(sql) }
    }

    private func prepare(_ sql: String) throws(BenchError) -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw failure("prepare \(sql)")
        }
        return statement
    }

    private func execute(_ sql: String) throws(BenchError) {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw failure(sql) }
    }

    private func finalize() {
        for statement in [insert, matchAll, matchCollection, begin, commit] { if let statement { sqlite3_finalize(statement) } }
        insert = nil; matchAll = nil; matchCollection = nil; begin = nil; commit = nil
    }

    private func failure(_ operation: String) -> BenchError {
        .sqlite(operation: operation, message: String(cString: sqlite3_errmsg(db)))
    }
}
