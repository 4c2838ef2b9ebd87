/// The destination of a salvage: a new database written through the public ``ValueBox`` API in transactions of
/// bounded size (engine tables — negative ids — through the descriptors the engine makes for them, as
/// `boxwood load --engine-tables` does), and the source's WAL operations replayed through the engine's own replay
/// path (`applyLogged`), one destination commit per source commit.
final class SalvageWriter {
    let box: ValueBox
    /// Commit after this many entries, or after this many value bytes, whichever comes first.
    static let batchEntries = 8_192
    static let batchBytes = 32 << 20

    private var tables: [Int32: ValueBoxTable] = [:]
    private var pendingEntries = 0
    private var pendingBytes = 0
    /// Entries written (sets from pages; WAL operations are not counted).
    private(set) var entriesWritten = 0
    /// The public form of an int64 key (the internal one has its sign bit flipped).
    private let keyScratch = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)

    init(path: String) throws(BoxwoodError) {
        box = try ValueBox(path: path, options: ValueBoxOptions(durability: .normal))
        do { try box.begin() } catch {
            try? box.close()
            throw error
        }
    }

    deinit { keyScratch.deallocate() }

    private func descriptor(_ id: Int32, _ keyType: ValueBoxKeyType) -> ValueBoxTable {
        id < 0 ? ValueBoxTable(engineTableId: id, keyType: keyType) : ValueBoxTable(id: id, keyType: keyType)
    }

    /// Creates table `id` (empty) unless it exists. False when it exists with another key type.
    func ensureTable(_ id: Int32, keyType: ValueBoxKeyType) throws(BoxwoodError) -> Bool {
        if let existing = tables[id] { return existing.keyType == keyType }
        if let state = box.state.tables[id] {
            tables[id] = descriptor(id, state.keyType)
            return state.keyType == keyType
        }
        let table = descriptor(id, keyType)
        // The engine creates a table on its first write and keeps it when its last key is removed (as `load` does).
        let probe = keyType == .int64 ? ValueBoxKey(int64: 0) : ValueBoxKey([0])
        try box.set(table, key: probe, bytes: UnsafeRawBufferPointer(start: nil, count: 0))
        try box.remove(table, key: probe)
        tables[id] = table
        return true
    }

    /// True when table `id` holds the key (internal form).
    func contains(_ id: Int32, key: UnsafeRawPointer, length: Int) throws(BoxwoodError) -> Bool {
        guard let state = box.state.tables[id], state.root != 0 else { return false }
        return try BTree.find(box.pager, root: state.root, key, length) != nil
    }

    /// Writes one entry (key in its internal form) to table `id`, which `ensureTable` created.
    func set(_ id: Int32, key: UnsafeRawPointer, length: Int, value: UnsafeRawPointer, count: Int) throws(BoxwoodError) {
        guard let table = tables[id] else {
            throw .corrupted(file: box.path, page: nil, reason: "salvage wrote to table \(id) before creating it")
        }
        var keyBytes = UnsafeRawBufferPointer(start: key, count: length)
        if table.keyType == .int64 && length == 8 {
            keyScratch.copyMemory(from: key, byteCount: 8)
            keyScratch.storeBytes(of: keyScratch.load(as: UInt8.self) ^ 0x80, as: UInt8.self)
            keyBytes = UnsafeRawBufferPointer(start: keyScratch, count: 8)
        }
        try box.set(table, keyBytes: keyBytes, bytes: UnsafeRawBufferPointer(start: value, count: count))
        entriesWritten += 1
        pendingEntries += 1
        pendingBytes += length + count
        if pendingEntries >= SalvageWriter.batchEntries || pendingBytes >= SalvageWriter.batchBytes { try commit() }
    }

    /// Sets the MasterClientId the source recorded.
    func setMasterClientId(_ id: Int64) throws(BoxwoodError) {
        try box.applyLogged(.setMasterClientId(id), logging: true)
    }

    /// Replays the operations of one source commit as one destination commit. When one is refused (it contradicts
    /// what the destination holds, such as a set with another key type), nothing of the commit is kept and the
    /// error is thrown.
    func applyCommit(_ operations: [WALOperation]) throws(BoxwoodError) {
        try commit()
        do {
            for operation in operations { try box.applyLogged(operation, logging: true) }
        } catch {
            box.abort()
            try box.begin()
            throw error
        }
        try commit()
        // A removeTable or renameTable may have changed which tables exist.
        tables = tables.filter { box.state.tables[$0.key]?.keyType == $0.value.keyType }
    }

    /// Commits what is pending and begins the next transaction.
    func commit() throws(BoxwoodError) {
        try box.commit()
        pendingEntries = 0
        pendingBytes = 0
        try box.begin()
    }

    /// Entries per table in the destination now.
    func tableEntries() throws(BoxwoodError) -> [Int32: (ValueBoxKeyType, Int)] {
        var out: [Int32: (ValueBoxKeyType, Int)] = [:]
        for (id, state) in box.state.tables { out[id] = (state.keyType, state.entries) }
        return out
    }

    /// Commits the rest and closes the database (its close checkpoints and syncs the files).
    func finish() throws(BoxwoodError) {
        try box.commit()
        try box.close()
    }

    /// Drops the open transaction and closes the database after a failure.
    func abandon() {
        box.abort()
        try? box.close()
    }
}
