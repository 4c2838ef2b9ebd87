import BoxwoodStore
import CLMDB
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// LMDB with its defaults (no MDB_WRITEMAP, no MDB_NORDAHEAD): one environment per directory with an 8 GiB map and
/// one named database per table id (`mdb_dbi_open` with MDB_CREATE, up to 64), one write transaction per batch,
/// `mdb_get` for reads (a pointer into the map) and a cursor (MDB_SET_RANGE, MDB_NEXT) for scans.
///
/// Durability (also printed in the output header): `.full` is the default (every commit syncs data and meta
/// pages); `.normal` is MDB_NOSYNC plus `mdb_env_sync(force)` once 8 MiB of keys and values were committed since the
/// last sync, and at close, which is Boxwood's checkpoint cadence (MDB_NOMETASYNC is implied by MDB_NOSYNC); `.off`
/// is MDB_NOSYNC alone.
final class LMDBEngine: DatabaseEngine {
    static let kind = EngineKind.lmdb
    static let logFileName: String? = nil
    static let mapSize = 8 << 30
    static let maxDatabases: MDB_dbi = 64
    /// Under `.normal`: sync once this many key and value bytes were committed since the last sync (Boxwood
    /// checkpoints after 8 MiB of WAL).
    static let syncInterval = 8 << 20

    let directory: String
    let durability: Durability
    private let env: OpaquePointer
    private var txn: OpaquePointer?
    private var databases: [Int32: MDB_dbi] = [:]
    private var unsyncedBytes = 0
    private var isClosed = false

    init(directory: String, durability: Durability) throws(BenchError) {
        try makeDirectory(directory)
        var handle: OpaquePointer?
        let created = mdb_env_create(&handle)
        guard created == MDB_SUCCESS, let handle else { throw .lmdb(operation: "mdb_env_create", code: created) }
        var result = mdb_env_set_mapsize(handle, LMDBEngine.mapSize)
        if result == MDB_SUCCESS { result = mdb_env_set_maxdbs(handle, LMDBEngine.maxDatabases) }
        if result == MDB_SUCCESS {
            let flags = durability == .full ? 0 : UInt32(MDB_NOSYNC)
            result = mdb_env_open(handle, directory, flags, 0o644)
        }
        guard result == MDB_SUCCESS else {
            mdb_env_close(handle)
            throw .lmdb(operation: "open \(directory)", code: result)
        }
        self.env = handle
        self.directory = directory
        self.durability = durability
    }

    deinit {
        if !isClosed {
            if let txn { mdb_txn_abort(txn) }
            mdb_env_close(env)
        }
    }

    func close() throws(BenchError) {
        if let txn { mdb_txn_abort(txn) }
        txn = nil
        defer {
            mdb_env_close(env)
            isClosed = true
        }
        if durability == .normal { try sync() }
    }

    /// LMDB compacts by copying (`mdb_env_copy2` with `MDB_CP_COMPACT`) into a new file; here the copy is
    /// then renamed over `data.mdb`, as an application would swap it in.
    func compactAndClose() throws(BenchError) {
        let copy = directory + ".compact"
        try makeDirectory(copy)
        let result = mdb_env_copy2(env, copy, UInt32(MDB_CP_COMPACT))
        guard result == MDB_SUCCESS else { throw .lmdb(operation: "mdb_env_copy2", code: result) }
        try close()
        guard rename(copy + "/data.mdb", directory + "/data.mdb") == 0 else {
            throw .io(operation: "rename", path: copy + "/data.mdb", errno: errno)
        }
        rmdir(copy)
    }

    func beginBatch() throws(BenchError) {
        var handle: OpaquePointer?
        let result = mdb_txn_begin(env, nil, 0, &handle)
        guard result == MDB_SUCCESS else { throw .lmdb(operation: "mdb_txn_begin", code: result) }
        txn = handle
    }

    func commitBatch() throws(BenchError) {
        let result = mdb_txn_commit(try transaction())
        txn = nil
        guard result == MDB_SUCCESS else { throw .lmdb(operation: "mdb_txn_commit", code: result) }
        if durability == .normal && unsyncedBytes >= LMDBEngine.syncInterval { try sync() }
    }

    func put(_ table: Int32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(BenchError) {
        let txn = try transaction()
        let dbi = try database(table, create: true)!
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let result = mdb_put(txn, dbi, &k, &v, 0)
        guard result == MDB_SUCCESS else { throw .lmdb(operation: "mdb_put", code: result) }
        unsyncedBytes += key.count + value.count
    }

    func get<R>(_ table: Int32, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) throws(BenchError) -> R? {
        let txn = try transaction()
        guard let dbi = try database(table, create: false) else { return nil }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let result = mdb_get(txn, dbi, &k, &v)
        if result == MDB_NOTFOUND { return nil }
        guard result == MDB_SUCCESS else { throw .lmdb(operation: "mdb_get", code: result) }
        return body(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    func remove(_ table: Int32, key: UnsafeRawBufferPointer) throws(BenchError) {
        let txn = try transaction()
        guard let dbi = try database(table, create: false) else { return }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let result = mdb_del(txn, dbi, &k, nil)
        guard result == MDB_SUCCESS || result == MDB_NOTFOUND else { throw .lmdb(operation: "mdb_del", code: result) }
        unsyncedBytes += key.count
    }

    func scan(_ table: Int32, after key: UnsafeRawBufferPointer, count: Int,
              _ visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) throws(BenchError) -> Int {
        let txn = try transaction()
        guard count > 0, let dbi = try database(table, create: false) else { return 0 }
        var cursor: OpaquePointer?
        let opened = mdb_cursor_open(txn, dbi, &cursor)
        guard opened == MDB_SUCCESS else { throw .lmdb(operation: "mdb_cursor_open", code: opened) }
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        var result: Int32
        if key.count == 0 {
            result = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
        } else {
            result = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE)
            if result == MDB_SUCCESS && k.mv_size == key.count && memcmp(k.mv_data, key.baseAddress!, key.count) == 0 {
                result = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
            }
        }
        var visited = 0
        while result == MDB_SUCCESS {
            visit(UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size), UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
            visited += 1
            if visited == count { return visited }
            result = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
        }
        guard result == MDB_NOTFOUND else { throw .lmdb(operation: "mdb_cursor_get", code: result) }
        return visited
    }

    // MARK: Helpers

    @inline(__always)
    private func transaction() throws(BenchError) -> OpaquePointer {
        guard let txn else { throw .unsupported(engine: .lmdb, operation: "an operation outside a batch") }
        return txn
    }

    /// The handle of a table's named database; nil when it does not exist and `create` is false.
    @inline(__always)
    private func database(_ table: Int32, create: Bool) throws(BenchError) -> MDB_dbi? {
        if let dbi = databases[table] { return dbi }
        var dbi: MDB_dbi = 0
        let result = mdb_dbi_open(try transaction(), "t\(table)", create ? UInt32(MDB_CREATE) : 0, &dbi)
        if result == MDB_NOTFOUND { return nil }
        guard result == MDB_SUCCESS else { throw .lmdb(operation: "mdb_dbi_open t\(table)", code: result) }
        databases[table] = dbi
        return dbi
    }

    private func sync() throws(BenchError) {
        let result = mdb_env_sync(env, 1)
        guard result == MDB_SUCCESS else { throw .lmdb(operation: "mdb_env_sync", code: result) }
        unsyncedBytes = 0
    }
}
