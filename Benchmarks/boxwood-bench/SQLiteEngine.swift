import BoxwoodStore
import CSQLite

/// The prepared statements of one table `t<id>`.
private struct SQLiteTable {
    let get: OpaquePointer
    let put: OpaquePointer
    let remove: OpaquePointer
    let range: OpaquePointer

    var all: [OpaquePointer] { [get, put, remove, range] }
}

/// SQLite configured as Telegram's Postbox configures it (`SqliteValueBox`): `journal_mode=WAL`,
/// `synchronous=NORMAL` (FULL for `.full`, OFF for `.off`), `mmap_size=0`, `temp_store=MEMORY`, the default page
/// cache and auto-checkpoint; one table `t<id> (key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID` per table id;
/// Postbox's statements (`INSERT … ON CONFLICT(key) DO UPDATE`, `DELETE … WHERE key=?`,
/// `SELECT key, value … WHERE key > ? AND key < ? ORDER BY key ASC LIMIT ?`), each prepared once with
/// `SQLITE_PREPARE_PERSISTENT` and reused (`reset` + `clear_bindings`); one `BEGIN IMMEDIATE`/`COMMIT` per batch.
/// Blobs are bound with SQLITE_STATIC (no copy): the harness's buffers outlive each statement execution.
final class SQLiteEngine: DatabaseEngine {
    static let kind = EngineKind.sqlite
    static let fileName = "db.sqlite"
    static let logFileName: String? = "db.sqlite-wal"

    let directory: String
    let durability: Durability
    private let db: OpaquePointer
    private var tables: [Int32: SQLiteTable] = [:]
    private var beginStatement: OpaquePointer!
    private var commitStatement: OpaquePointer!
    private var isClosed = false
    /// The exclusive upper bound of every scan (Postbox's range statements take one): 16 bytes of 0xFF, above every
    /// key written. Heap memory with a stable address, as SQLITE_STATIC requires.
    private let endKey: UnsafeMutableRawPointer = {
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 8)
        bytes.initializeMemory(as: UInt8.self, repeating: 0xFF, count: 16)
        return bytes
    }()

    init(directory: String, durability: Durability) throws(BenchError) {
        try makeDirectory(directory)
        var handle: OpaquePointer?
        let path = directory + "/" + SQLiteEngine.fileName
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
              let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot allocate a connection"
            sqlite3_close(handle)
            throw .sqlite(operation: "open \(path)", message: message)
        }
        self.db = handle
        self.directory = directory
        self.durability = durability
        // From here on a failure releases everything through deinit.
        let synchronous = durability == .full ? "FULL" : durability == .normal ? "NORMAL" : "OFF"
        try execute("PRAGMA mmap_size=0")
        try execute("PRAGMA synchronous=\(synchronous)")
        try execute("PRAGMA temp_store=MEMORY")
        let journalMode = try queryText("PRAGMA journal_mode=WAL")
        guard journalMode == "wal" else {
            throw .sqlite(operation: "PRAGMA journal_mode=WAL", message: "journal mode is \(journalMode)")
        }
        beginStatement = try prepare("BEGIN IMMEDIATE")
        commitStatement = try prepare("COMMIT")
        for id in try existingTables() {
            tables[id] = try prepareTable(id)
        }
    }

    deinit {
        if !isClosed {
            finalizeStatements()
            sqlite3_close_v2(db)
        }
        endKey.deallocate()
    }

    func close() throws(BenchError) {
        finalizeStatements()
        isClosed = true
        let result = sqlite3_close(db)
        guard result == SQLITE_OK else { throw .sqlite(operation: "close", message: String(cString: sqlite3_errstr(result))) }
    }

    /// What Postbox's `optimizeStorage` runs: VACUUM, then a WAL checkpoint that truncates the log.
    func compactAndClose() throws(BenchError) {
        try execute("VACUUM")
        try execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try close()
    }

    func beginBatch() throws(BenchError) {
        try run(beginStatement, "BEGIN IMMEDIATE")
    }

    func commitBatch() throws(BenchError) {
        try run(commitStatement, "COMMIT")
    }

    func put(_ table: Int32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(BenchError) {
        let statement = try statements(creating: table).put
        defer { finish(statement) }
        bindKey(statement, 1, key)
        if value.count == 0 {
            sqlite3_bind_null(statement, 2)  // as Postbox stores an empty value
        } else {
            sqlite3_bind_blob(statement, 2, value.baseAddress, Int32(value.count), nil)  // nil is SQLITE_STATIC
        }
        guard sqlite3_step(statement) == SQLITE_DONE else { throw failure("put") }
    }

    func get<R>(_ table: Int32, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) throws(BenchError) -> R? {
        guard let statement = tables[table]?.get else { return nil }
        defer { finish(statement) }
        bindKey(statement, 1, key)
        switch sqlite3_step(statement) {
        case SQLITE_ROW:
            let value = UnsafeRawBufferPointer(start: sqlite3_column_blob(statement, 0), count: Int(sqlite3_column_bytes(statement, 0)))
            return body(value)
        case SQLITE_DONE:
            return nil
        default:
            throw failure("get")
        }
    }

    func remove(_ table: Int32, key: UnsafeRawBufferPointer) throws(BenchError) {
        guard let statement = tables[table]?.remove else { return }
        defer { finish(statement) }
        bindKey(statement, 1, key)
        guard sqlite3_step(statement) == SQLITE_DONE else { throw failure("remove") }
    }

    func scan(_ table: Int32, after key: UnsafeRawBufferPointer, count: Int,
              _ visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) throws(BenchError) -> Int {
        guard let statement = tables[table]?.range else { return 0 }
        defer { finish(statement) }
        bindKey(statement, 1, key)
        sqlite3_bind_blob(statement, 2, endKey, 16, nil)
        sqlite3_bind_int64(statement, 3, Int64(count))
        var visited = 0
        while true {
            let result = sqlite3_step(statement)
            if result == SQLITE_DONE { return visited }
            guard result == SQLITE_ROW else { throw failure("scan") }
            let key = UnsafeRawBufferPointer(start: sqlite3_column_blob(statement, 0), count: Int(sqlite3_column_bytes(statement, 0)))
            let value = UnsafeRawBufferPointer(start: sqlite3_column_blob(statement, 1), count: Int(sqlite3_column_bytes(statement, 1)))
            visit(key, value)
            visited += 1
        }
    }

    // MARK: Statements

    /// Binds a key blob; a zero-length key is bound as an empty blob (a nil pointer would bind NULL).
    @inline(__always)
    private func bindKey(_ statement: OpaquePointer, _ index: Int32, _ key: UnsafeRawBufferPointer) {
        if key.count == 0 {
            sqlite3_bind_zeroblob(statement, index, 0)
        } else {
            sqlite3_bind_blob(statement, index, key.baseAddress, Int32(key.count), nil)  // nil is SQLITE_STATIC
        }
    }

    @inline(__always)
    private func finish(_ statement: OpaquePointer) {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    private func run(_ statement: OpaquePointer, _ sql: String) throws(BenchError) {
        defer { sqlite3_reset(statement) }
        guard sqlite3_step(statement) == SQLITE_DONE else { throw failure(sql) }
    }

    /// The statements of a table, creating the table on first use (inside the open transaction, as Postbox does).
    @inline(__always)
    private func statements(creating table: Int32) throws(BenchError) -> SQLiteTable {
        if let statements = tables[table] { return statements }
        try execute("CREATE TABLE t\(table) (key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID")
        let statements = try prepareTable(table)
        tables[table] = statements
        return statements
    }

    private func prepareTable(_ id: Int32) throws(BenchError) -> SQLiteTable {
        let sql = [
            "SELECT value FROM t\(id) WHERE key=?",
            "INSERT INTO t\(id) (key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            "DELETE FROM t\(id) WHERE key=?",
            "SELECT key, value FROM t\(id) WHERE key > ? AND key < ? ORDER BY key ASC LIMIT ?",
        ]
        var prepared: [OpaquePointer] = []
        do {
            for text in sql { prepared.append(try prepare(text)) }
        } catch {
            for statement in prepared { sqlite3_finalize(statement) }
            throw error
        }
        return SQLiteTable(get: prepared[0], put: prepared[1], remove: prepared[2], range: prepared[3])
    }

    private func prepare(_ sql: String) throws(BenchError) -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
              let statement else {
            throw failure("prepare \(sql)")
        }
        return statement
    }

    private func finalizeStatements() {
        for statement in tables.values.flatMap(\.all) { sqlite3_finalize(statement) }
        tables = [:]
        if let beginStatement { sqlite3_finalize(beginStatement) }
        if let commitStatement { sqlite3_finalize(commitStatement) }
        beginStatement = nil
        commitStatement = nil
    }

    private func execute(_ sql: String) throws(BenchError) {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, sql, nil, nil, &message) == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(db))
            sqlite3_free(message)
            throw .sqlite(operation: sql, message: text)
        }
    }

    /// The first column of the first row of a query as text.
    private func queryText(_ sql: String) throws(BenchError) -> String {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { throw failure(sql) }
        return String(cString: text)
    }

    /// The ids of the `t<id>` tables already in the database.
    private func existingTables() throws(BenchError) -> [Int32] {
        let statement = try prepare("SELECT name FROM sqlite_master WHERE type='table'")
        defer { sqlite3_finalize(statement) }
        var ids: [Int32] = []
        while true {
            let result = sqlite3_step(statement)
            if result == SQLITE_DONE { return ids }
            guard result == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { throw failure("list tables") }
            let name = String(cString: text)
            if name.hasPrefix("t"), let id = Int32(name.dropFirst()) { ids.append(id) }
        }
    }

    private func failure(_ operation: String) -> BenchError {
        .sqlite(operation: operation, message: String(cString: sqlite3_errmsg(db)))
    }
}
