/// Mutations. Each public mutation validates its input and hands one logical operation to `perform`, which applies
/// it to the copy-on-write trees (`apply`) and, when it changed something, logs it in the transaction's WAL record.
/// WAL replay and catching up call `apply` with operations read from the log: they have no record to log to.
extension ValueBox {
    // MARK: Keys

    /// Runs `body` with the internal (on-page) form of a key: binary keys as given, int64 keys with the sign
    /// bit flipped so that byte order is numeric order.
    @inline(__always)
    func withInternalKey<R>(_ keyType: ValueBoxKeyType, _ key: ValueBoxKey, _ body: (UnsafeRawPointer, Int) throws(BoxwoodError) -> R) throws(BoxwoodError) -> R {
        try withInternalKey(keyType, UnsafeRawPointer(key.storage.memory), key.length, body)
    }

    /// `withInternalKey` of a key given as raw bytes (`key` is readable for `length` bytes).
    @inline(__always)
    func withInternalKey<R>(_ keyType: ValueBoxKeyType, _ key: UnsafeRawPointer, _ length: Int, _ body: (UnsafeRawPointer, Int) throws(BoxwoodError) -> R) throws(BoxwoodError) -> R {
        switch keyType {
        case .binary:
            if length > ValueBox.maxKeySize { throw .keyTooLarge(length: length, limit: ValueBox.maxKeySize) }
            return try body(key, length)
        case .int64:
            if length != 8 { throw .invalidInt64Key(length: length) }
            var flipped = key.loadUnaligned(as: UInt64.self) ^ (UInt64(0x80).littleEndian)
            // The bytes of a variable always have an address.
            return try withUnsafeBytes(of: &flipped) { (raw) throws(BoxwoodError) -> R in try body(raw.baseAddress!, 8) }
        }
    }

    /// The public form of an internal key.
    @inline(__always)
    func publicKey(_ keyType: ValueBoxKeyType, _ key: UnsafeRawPointer, _ length: Int) -> ValueBoxKey {
        let result = ValueBoxKey(bytes: UnsafeRawBufferPointer(start: key, count: length))
        if keyType == .int64 && length > 0 {
            result.storage.memory.storeBytes(of: result.storage.memory.load(as: UInt8.self) ^ 0x80, as: UInt8.self)
        }
        return result
    }

    func existingTable(_ table: ValueBoxTable) throws(BoxwoodError) -> TableState? {
        guard let state = state.tables[table.id] else { return nil }
        if state.keyType != table.keyType {
            throw .keyTypeMismatch(table: table.id, existing: state.keyType.description, requested: table.keyType.description)
        }
        return state
    }

    // MARK: Public mutations
    //
    // Every mutation checks `requireWritableId()`: negative table ids belong to the engine (the full-text index),
    // and only descriptors the engine made for them may write there.

    /// Inserts or replaces the value of `key` (creating the table on first use). Zero-length values are fine.
    public func set(_ table: ValueBoxTable, key: ValueBoxKey, value: MemoryBuffer) throws(BoxwoodError) {
        try set(table, key: key, bytes: UnsafeRawBufferPointer(start: value.memory, count: value.length))
    }

    /// Inserts or replaces the value of `key` with raw bytes.
    public func set(_ table: ValueBoxTable, key: ValueBoxKey, bytes: UnsafeRawBufferPointer) throws(BoxwoodError) {
        try checkWritable()
        try table.requireWritableId()
        _ = try existingTable(table)
        try withInternalKey(table.keyType, key) { (k, n) throws(BoxwoodError) in
            try perform(.set(table: table.id, keyType: table.keyType, key: UnsafeRawBufferPointer(start: k, count: n), value: bytes))
        }
    }

    /// Inserts or replaces the value of a key given as raw bytes (the bytes a ``ValueBoxKey`` would hold), without
    /// making a ``ValueBoxKey``: for callers that write many keys built in one scratch buffer.
    public func set(_ table: ValueBoxTable, keyBytes: UnsafeRawBufferPointer, bytes: UnsafeRawBufferPointer) throws(BoxwoodError) {
        try checkWritable()
        try table.requireWritableId()
        _ = try existingTable(table)
        try withInternalKey(table.keyType, keyBytes.baseAddress ?? UnsafeRawPointer(cellBuffer), keyBytes.count) { (k, n) throws(BoxwoodError) in
            try perform(.set(table: table.id, keyType: table.keyType, key: UnsafeRawBufferPointer(start: k, count: n), value: bytes))
        }
    }

    /// Deletes `key` if present. `secure` (Postbox's secure delete request) is recorded in the WAL operation.
    public func remove(_ table: ValueBoxTable, key: ValueBoxKey, secure: Bool = false) throws(BoxwoodError) {
        try checkWritable()
        try table.requireWritableId()
        guard try existingTable(table) != nil else { return }
        try withInternalKey(table.keyType, key) { (k, n) throws(BoxwoodError) in
            try perform(.remove(table: table.id, key: UnsafeRawBufferPointer(start: k, count: n), secure: secure))
        }
    }

    /// Deletes every key between `start` and `end`, **both inclusive**, in either order.
    public func removeRange(_ table: ValueBoxTable, start: ValueBoxKey, end: ValueBoxKey) throws(BoxwoodError) {
        try checkWritable()
        try table.requireWritableId()
        guard try existingTable(table) != nil else { return }
        try withInternalKey(table.keyType, start) { (s, sn) throws(BoxwoodError) in
            try withInternalKey(table.keyType, end) { (e, en) throws(BoxwoodError) in
                let start = UnsafeRawBufferPointer(start: s, count: sn), end = UnsafeRawBufferPointer(start: e, count: en)
                let inOrder = compareKeys(s, sn, e, en) <= 0
                try perform(.removeRange(table: table.id, low: inOrder ? start : end, high: inOrder ? end : start))
            }
        }
    }

    /// Moves the value at `from` to `to` (replacing any value there); nothing happens when `from` is absent.
    public func move(_ table: ValueBoxTable, from: ValueBoxKey, to: ValueBoxKey) throws(BoxwoodError) {
        try checkWritable()
        guard try existingTable(table) != nil, from != to else { return }
        guard let value = try get(table, key: from) else { return }
        try set(table, key: to, value: value)
        try remove(table, key: from, secure: false)
    }

    /// Copies the value at `fromKey` to `toKey` in `toTable`. As in Postbox, an existing destination is left
    /// unchanged; nothing happens when the source is absent.
    public func copy(fromTable: ValueBoxTable, fromKey: ValueBoxKey, toTable: ValueBoxTable, toKey: ValueBoxKey) throws(BoxwoodError) {
        try checkWritable()
        if try exists(toTable, key: toKey) { return }
        guard let value = try get(fromTable, key: fromKey) else { return }
        try set(toTable, key: toKey, value: value)
    }

    /// Deletes every entry of a table; the table (and its key type) remains.
    public func removeAllFromTable(_ table: ValueBoxTable) throws(BoxwoodError) {
        try checkWritable()
        try table.requireWritableId()
        guard try existingTable(table) != nil else { return }
        try perform(.removeAll(table: table.id))
    }

    /// Deletes a table.
    public func removeTable(_ table: ValueBoxTable) throws(BoxwoodError) {
        try checkWritable()
        try table.requireWritableId()
        guard try existingTable(table) != nil else { return }
        try perform(.removeTable(table: table.id))
    }

    /// Gives a table a new id, keeping its key type and contents. A table already at the new id is replaced.
    public func renameTable(_ table: ValueBoxTable, to newTable: ValueBoxTable) throws(BoxwoodError) {
        try checkWritable()
        try table.requireWritableId()
        try newTable.requireWritableId()
        guard try existingTable(table) != nil, table.id != newTable.id else { return }
        try perform(.renameTable(from: table.id, to: newTable.id))
    }

    /// Partial read-modify-write of an existing value: `process` gets the length, a reader
    /// `(buffer, offset, length)` and a writer `(bytes, offset, length)` that overwrites bytes in place (the
    /// length cannot change). Out-of-range accesses are not performed and are reported as `.outOfBounds`.
    public func readWrite(_ table: ValueBoxTable, key: ValueBoxKey,
                          _ process: (Int, (UnsafeMutableRawPointer, Int, Int) -> Void, (UnsafeRawPointer, Int, Int) -> Void) -> Void) throws(BoxwoodError) {
        try checkWritable()
        try table.requireWritableId()
        guard let value = try get(table, key: key) else { return }
        var changed = false
        var rangeError: BoxwoodError? = nil
        let length = value.length
        process(length, { buffer, offset, count in
            guard ValueBox.rangeFits(offset, count, length) else {
                rangeError = rangeError ?? .outOfBounds(offset: offset, length: count, valueLength: length); return
            }
            buffer.copyMemory(from: value.memory + offset, byteCount: count)
        }, { bytes, offset, count in
            guard ValueBox.rangeFits(offset, count, length) else {
                rangeError = rangeError ?? .outOfBounds(offset: offset, length: count, valueLength: length); return
            }
            (value.memory + offset).copyMemory(from: bytes, byteCount: count)
            changed = true
        })
        if let rangeError { throw rangeError }
        if changed { try set(table, key: key, value: value) }
    }

    /// True when `offset..<offset + count` lies inside a value of `length` bytes, computed without
    /// `offset + count` (which overflows for an offset near `Int.max`).
    @inline(__always)
    static func rangeFits(_ offset: Int, _ count: Int, _ length: Int) -> Bool {
        offset >= 0 && count >= 0 && offset <= length && count <= length - offset
    }

    // MARK: Applying operations

    /// The one way a transaction changes the state: applies `operation` and, when it changed something, appends it
    /// to the transaction's WAL record (so a commit replays to exactly this state). The caller validated it.
    @inline(__always)
    func perform(_ operation: WALOperation) throws(BoxwoodError) {
        // A large value goes straight into the data file (ValueBox+WrittenOnceValues.swift), unless that write fails.
        // (A buffer of more than `overflowPayload` bytes has a base address.)
        if case let .set(table, keyType, key, value) = operation, value.count > PageLayout.overflowPayload, writesOnce(value.count),
           try setWrittenOnce(table, keyType, key: key, value: value.baseAddress.unsafelyUnwrapped, count: value.count) {
            return
        }
        if try apply(operation) { record.append(operation) }
    }

    /// Applies one operation to the state and the trees without logging it; returns whether it changed anything
    /// (an operation that did not — removing an absent key, renaming a missing table — is not logged). Called by
    /// `perform` for the caller's operations and by replay for operations read from the WAL.
    @inline(__always)
    func apply(_ operation: WALOperation) throws(BoxwoodError) -> Bool {
        switch operation {
        case let .set(table, keyType, key, value):
            try put(table, keyType, key.baseAddress ?? UnsafeRawPointer(cellBuffer), key.count,
                    value.baseAddress ?? UnsafeRawPointer(cellBuffer), value.count)
            return true
        case let .remove(table, key, secure):
            return try removeKey(table, key.baseAddress ?? UnsafeRawPointer(cellBuffer), key.count, secure: secure)
        case let .removeRange(table, low, high):
            return try removeKeys(table, low: low.baseAddress ?? UnsafeRawPointer(cellBuffer), low.count,
                                  high: high.baseAddress ?? UnsafeRawPointer(cellBuffer), high.count)
        case let .removeAll(table):
            return try clearTable(table)
        case let .removeTable(table):
            return try dropTable(table)
        case let .renameTable(from, to):
            return try rename(from, to: to)
        case let .setMasterClientId(id):
            state.masterClientId = id
            return true
        case let .setExtent(table, keyType, key, extent):
            try adoptLoggedExtent(extent)
            try putExtent(table, keyType, key.baseAddress ?? UnsafeRawPointer(cellBuffer), key.count, extent)
            return true
        }
    }

    /// Applies one operation read from the WAL. Its checksums held, but its keys are still checked against the
    /// limits every writer obeys (records are replayed into pages and buffers sized by them, so a forged or
    /// damaged record with a longer key would overrun memory), and a set must agree with its table's key type.
    /// `logging` also appends it to the open transaction's record (`perform`): for a salvage, which replays another
    /// database's log into this one's transactions.
    func applyLogged(_ operation: WALOperation, logging: Bool = false) throws(BoxwoodError) {
        switch operation {
        case let .set(table, keyType, key, _):
            if let existing = state.tables[table], existing.keyType != keyType {
                throw .corrupted(file: wal?.file.path ?? path, page: nil, reason: "WAL sets table \(table) with a different key type")
            }
            try checkLoggedKey(key, table: table, int64: keyType == .int64)
        case let .setExtent(table, keyType, key, _):
            if let existing = state.tables[table], existing.keyType != keyType {
                throw .corrupted(file: wal?.file.path ?? path, page: nil, reason: "WAL sets table \(table) with a different key type")
            }
            try checkLoggedKey(key, table: table, int64: keyType == .int64)
            // The extent is in another database's file: a salvage turns the operation into a plain set first.
            if logging {
                throw .corrupted(file: wal?.file.path ?? path, page: nil, reason: "a value written once cannot be logged again")
            }
        case let .remove(table, key, _):
            try checkLoggedKey(key, table: table, int64: false)
        case let .removeRange(table, low, high):
            try checkLoggedKey(low, table: table, int64: false)
            try checkLoggedKey(high, table: table, int64: false)
        case .removeAll, .removeTable, .renameTable, .setMasterClientId:
            break
        }
        if logging { try perform(operation) } else { _ = try apply(operation) }
    }

    private func checkLoggedKey(_ key: UnsafeRawBufferPointer, table: Int32, int64: Bool) throws(BoxwoodError) {
        if key.count > ValueBox.maxKeySize || (int64 && key.count != 8) {
            throw .corrupted(file: wal?.file.path ?? path, page: nil,
                             reason: "WAL record with a key of \(key.count) bytes in table \(table) (limit \(int64 ? 8 : ValueBox.maxKeySize))")
        }
    }

    func put(_ id: Int32, _ keyType: ValueBoxKeyType, _ key: UnsafeRawPointer, _ keyLength: Int,
             _ value: UnsafeRawPointer, _ valueLength: Int) throws(BoxwoodError) {
        let cellSize = LeafValue.makeCell(pager, into: cellBuffer, key: key, keyLength: keyLength, value: value,
                                          valueLength: valueLength, compressionThreshold: options.compressionThreshold,
                                          compressionLimit: options.compressionLimit)
        try putCell(id, keyType, key, keyLength, cellSize: cellSize, valueLength: valueLength)
    }

    /// Sets `key` to the value whose extent `extent` names (written once: by this transaction, or by the commit a
    /// replayed record is).
    func putExtent(_ id: Int32, _ keyType: ValueBoxKeyType, _ key: UnsafeRawPointer, _ keyLength: Int, _ extent: LoggedExtent) throws(BoxwoodError) {
        let cellSize = LeafValue.makeOverflowCell(into: cellBuffer, key: key, keyLength: keyLength, reference: extent.head,
                                                  codec: extent.codec, storedLength: extent.storedLength, rawLength: extent.rawLength)
        // `rawLength` is at most `LeafValue.maxValueLength` (checked with the extent, or written by this value box).
        try putCell(id, keyType, key, keyLength, cellSize: cellSize, valueLength: Int(extent.rawLength))
    }

    /// Inserts the cell `cellBuffer` holds (`cellSize` bytes, for a value of `valueLength` bytes), replacing the
    /// key's cell and freeing its overflow value if there is one.
    private func putCell(_ id: Int32, _ keyType: ValueBoxKeyType, _ key: UnsafeRawPointer, _ keyLength: Int,
                         cellSize: Int, valueLength: Int) throws(BoxwoodError) {
        var table = state.tables[id] ?? TableState(keyType: keyType, root: 0, entries: 0, bytes: 0)
        let pager: Pager = self.pager
        var root = table.root
        try BTree.upsert(pager, root: &root, key, keyLength, cell: cellBuffer, size: cellSize, path: path_) { (leaf, off) throws(BoxwoodError) in
            // Wrapping: each raw length is below 2^32 (validated with its page), but a forged file could hold enough
            // of them to run a total past Int's range; a wrong total is reported by `check`.
            table.bytes &-= keyLength + LeafValue.rawLength(leaf, off)
            table.entries -= 1
            if let overflow = LeafValue.overflowReference(leaf, off) { try pager.freeOverflow(overflow) }
        }
        table.root = root
        table.entries += 1
        table.bytes &+= keyLength + valueLength
        state.tables[id] = table
        pager.modificationCount &+= 1
    }

    /// Removes one key; returns whether it was present.
    func removeKey(_ id: Int32, _ key: UnsafeRawPointer, _ keyLength: Int, secure: Bool) throws(BoxwoodError) -> Bool {
        guard var table = state.tables[id], table.root != 0 else { return false }
        let path = path_
        let (index, found) = try BTree.descend(pager, root: table.root, key, keyLength, path: path)
        guard found else { return false }
        try removeAt(&table, path: path, index: index, keyLength: keyLength)
        state.tables[id] = table
        if secure { state.secureDeletePending = true }
        return true
    }

    private func removeAt(_ table: inout TableState, path: TreePath, index: Int, keyLength: Int) throws(BoxwoodError) {
        try BTree.touchPath(pager, root: &table.root, path: path)
        let leaf = pager.dirtyMemory(path.refs[path.refs.count - 1])
        let off = LeafPage(leaf).slot(index)
        table.bytes &-= keyLength + LeafValue.rawLength(leaf, off)   // wrapping: see `put`
        table.entries -= 1
        if let overflow = LeafValue.overflowReference(leaf, off) { try pager.freeOverflow(overflow) }
        LeafPage.removeCell(leaf, at: index)
        try BTree.rebalance(pager, root: &table.root, path: path)
        pager.modificationCount &+= 1
    }

    /// Removes every key in `low...high` (internal keys, `low <= high`); returns whether any was present.
    func removeKeys(_ id: Int32, low: UnsafeRawPointer, _ lowLength: Int, high: UnsafeRawPointer, _ highLength: Int) throws(BoxwoodError) -> Bool {
        guard var table = state.tables[id], table.root != 0 else { return false }
        var keys: [[UInt8]] = []
        var cursor = Cursor(pager: pager, root: table.root)
        try cursor.seek(atOrAfter: low, lowLength)
        while cursor.isValid {
            let (k, n) = cursor.key
            if compareKeys(k, n, high, highLength) > 0 { break }
            keys.append(Array(UnsafeRawBufferPointer(start: k, count: n)))
            try cursor.next()
        }
        if keys.isEmpty { return false }
        let path = path_
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: ValueBox.maxKeySize + 8, alignment: 8)
        defer { scratch.deallocate() }
        for key in keys {
            for (i, b) in key.enumerated() { scratch.storeBytes(of: b, toByteOffset: i, as: UInt8.self) }
            let (index, found) = try BTree.descend(pager, root: table.root, scratch, key.count, path: path)
            if found { try removeAt(&table, path: path, index: index, keyLength: key.count) }
        }
        state.tables[id] = table
        return true
    }

    /// Empties a table (it keeps its key type); returns whether the table exists.
    func clearTable(_ id: Int32) throws(BoxwoodError) -> Bool {
        guard var table = state.tables[id] else { return false }
        try BTree.freeTree(pager, root: table.root)
        table.root = 0
        table.entries = 0
        table.bytes = 0
        state.tables[id] = table
        pager.modificationCount &+= 1
        return true
    }

    /// Deletes a table; returns whether it existed.
    func dropTable(_ id: Int32) throws(BoxwoodError) -> Bool {
        guard let table = state.tables[id] else { return false }
        try BTree.freeTree(pager, root: table.root)
        state.tables[id] = nil
        pager.modificationCount &+= 1
        return true
    }

    /// Moves a table to another id, replacing any table there; returns whether anything moved.
    func rename(_ from: Int32, to: Int32) throws(BoxwoodError) -> Bool {
        guard from != to, let table = state.tables[from] else { return false }
        if let existing = state.tables[to] { try BTree.freeTree(pager, root: existing.root) }
        state.tables[to] = table
        state.tables[from] = nil
        pager.modificationCount &+= 1
        return true
    }
}
