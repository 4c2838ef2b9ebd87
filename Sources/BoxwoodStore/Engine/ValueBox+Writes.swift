/// Mutations. Each public mutation validates its input, appends a logical operation to the transaction's WAL
/// record and applies it to the copy-on-write trees. WAL replay runs the same internal functions.
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
        guard let state = tables[table.id] else { return nil }
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
            try put(table.id, table.keyType, k, n, bytes.baseAddress ?? UnsafeRawPointer(cellBuffer), bytes.count)
        }
    }

    /// Inserts or replaces the value of a key given as raw bytes (the bytes a ``ValueBoxKey`` would hold), without
    /// making a ``ValueBoxKey``: for callers that write many keys built in one scratch buffer.
    public func set(_ table: ValueBoxTable, keyBytes: UnsafeRawBufferPointer, bytes: UnsafeRawBufferPointer) throws(BoxwoodError) {
        try checkWritable()
        try table.requireWritableId()
        _ = try existingTable(table)
        let anyAddress = UnsafeRawPointer(cellBuffer)
        try withInternalKey(table.keyType, keyBytes.baseAddress ?? anyAddress, keyBytes.count) { (k, n) throws(BoxwoodError) in
            try put(table.id, table.keyType, k, n, bytes.baseAddress ?? anyAddress, bytes.count)
        }
    }

    /// Deletes `key` if present. `secure` (Postbox's secure delete request) is recorded in the WAL operation.
    public func remove(_ table: ValueBoxTable, key: ValueBoxKey, secure: Bool = false) throws(BoxwoodError) {
        try checkWritable()
        try table.requireWritableId()
        guard try existingTable(table) != nil else { return }
        try withInternalKey(table.keyType, key) { (k, n) throws(BoxwoodError) in
            _ = try removeKey(table.id, k, n, secure: secure)
        }
    }

    /// Deletes every key between `start` and `end`, **both inclusive**, in either order.
    public func removeRange(_ table: ValueBoxTable, start: ValueBoxKey, end: ValueBoxKey) throws(BoxwoodError) {
        try checkWritable()
        try table.requireWritableId()
        guard try existingTable(table) != nil else { return }
        try withInternalKey(table.keyType, start) { (s, sn) throws(BoxwoodError) in
            try withInternalKey(table.keyType, end) { (e, en) throws(BoxwoodError) in
                if compareKeys(s, sn, e, en) <= 0 { try removeKeys(table.id, low: s, sn, high: e, en) } else { try removeKeys(table.id, low: e, en, high: s, sn) }
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
        try clearTable(table.id)
    }

    /// Deletes a table.
    public func removeTable(_ table: ValueBoxTable) throws(BoxwoodError) {
        try checkWritable()
        try table.requireWritableId()
        guard try existingTable(table) != nil else { return }
        try dropTable(table.id)
    }

    /// Gives a table a new id, keeping its key type and contents. A table already at the new id is replaced.
    public func renameTable(_ table: ValueBoxTable, to newTable: ValueBoxTable) throws(BoxwoodError) {
        try checkWritable()
        try table.requireWritableId()
        try newTable.requireWritableId()
        guard try existingTable(table) != nil, table.id != newTable.id else { return }
        try rename(table.id, to: newTable.id)
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

    // MARK: Internal operations (shared with WAL replay)

    /// Applies one replayed WAL operation.
    func apply(_ operation: WALOperation) throws(BoxwoodError) {
        switch operation {
        case let .set(table, keyType, key, value):
            if let existing = tables[table], existing.keyType != keyType {
                throw .corrupted(file: wal?.file.path ?? path, page: nil, reason: "WAL sets table \(table) with a different key type")
            }
            try checkLoggedKey(key, table: table, int64: keyType == .int64)
            try put(table, keyType, key.baseAddress ?? UnsafeRawPointer(cellBuffer), key.count, value.baseAddress ?? UnsafeRawPointer(cellBuffer), value.count)
        case let .remove(table, key, secure):
            try checkLoggedKey(key, table: table, int64: false)
            _ = try removeKey(table, key.baseAddress ?? UnsafeRawPointer(cellBuffer), key.count, secure: secure)
        case let .removeRange(table, low, high):
            try checkLoggedKey(low, table: table, int64: false)
            try checkLoggedKey(high, table: table, int64: false)
            try removeKeys(table, low: low.baseAddress ?? UnsafeRawPointer(cellBuffer), low.count, high: high.baseAddress ?? UnsafeRawPointer(cellBuffer), high.count)
        case let .removeAll(table):
            try clearTable(table)
        case let .removeTable(table):
            try dropTable(table)
        case let .renameTable(from, to):
            try rename(from, to: to)
        case let .setMasterClientId(id):
            storedMasterClientId = id
        }
    }

    /// A key read from a WAL record (checksums and all) is still checked against the limits every writer obeys:
    /// records are replayed into pages and buffers sized by them, so a forged or damaged record with a longer key
    /// would overrun memory.
    private func checkLoggedKey(_ key: UnsafeRawBufferPointer, table: Int32, int64: Bool) throws(BoxwoodError) {
        if key.count > ValueBox.maxKeySize || (int64 && key.count != 8) {
            throw .corrupted(file: wal?.file.path ?? path, page: nil,
                             reason: "WAL record with a key of \(key.count) bytes in table \(table) (limit \(int64 ? 8 : ValueBox.maxKeySize))")
        }
    }

    func put(_ id: Int32, _ keyType: ValueBoxKeyType, _ key: UnsafeRawPointer, _ keyLength: Int,
             _ value: UnsafeRawPointer, _ valueLength: Int) throws(BoxwoodError) {
        var state = tables[id] ?? TableState(keyType: keyType, root: 0, entries: 0, bytes: 0)
        if !replaying {
            record.logSet(table: id, keyType: keyType, key: key, keyLength: keyLength, value: value, valueLength: valueLength)
            recordOperations += 1
        }
        let cellSize = LeafValue.makeCell(pager, into: cellBuffer, key: key, keyLength: keyLength, value: value,
                                          valueLength: valueLength, compressionThreshold: options.compressionThreshold)
        if state.root == 0 {
            let (ref, memory) = pager.allocateDirty()
            Node.initialize(memory, type: .leaf)
            _ = Node.insertCell(memory, at: 0, cellBuffer, cellSize, leaf: true)
            state.root = ref
        } else {
            let path = path_
            let (index, found) = try BTree.descend(pager, root: state.root, key, keyLength, path: path)
            try BTree.touchPath(pager, root: &state.root, path: path)
            let leaf = pager.dirtyMemory(path.refs[path.refs.count - 1])
            var replaced = false
            if found {
                let off = Node.slot(leaf, index)
                // Wrapping: each raw length is below 2^32 (validated with its page), but a forged file could
                // hold enough of them to run a total past Int's range; a wrong total is reported by `check`.
                state.bytes &-= keyLength + LeafValue.rawLength(leaf, off)
                state.entries -= 1
                if let overflow = LeafValue.overflowReference(leaf, off) { try pager.freeOverflow(overflow) }
                // An overwrite that fits in the old cell (the common case: same-size values) rewrites it
                // where it is, instead of removing the cell and inserting it again.
                replaced = Node.replaceLeafCellInPlace(leaf, at: off, cellBuffer, cellSize)
                if !replaced { Node.removeCell(leaf, at: index, leaf: true) }
            }
            if !replaced {
                try BTree.insertIntoLeaf(pager, root: &state.root, path: path, index: index, cell: cellBuffer, size: cellSize)
            }
        }
        state.entries += 1
        state.bytes &+= keyLength + valueLength
        tables[id] = state
        pager.modificationCount &+= 1
    }

    /// Removes one key; returns whether it was present.
    func removeKey(_ id: Int32, _ key: UnsafeRawPointer, _ keyLength: Int, secure: Bool) throws(BoxwoodError) -> Bool {
        guard var state = tables[id], state.root != 0 else { return false }
        let path = path_
        let (index, found) = try BTree.descend(pager, root: state.root, key, keyLength, path: path)
        guard found else { return false }
        if !replaying {
            record.logRemove(table: id, key: key, keyLength: keyLength, secure: secure)
            recordOperations += 1
        }
        try removeAt(&state, path: path, index: index, keyLength: keyLength)
        tables[id] = state
        if secure { secureDeletePending = true }
        return true
    }

    private func removeAt(_ state: inout TableState, path: TreePath, index: Int, keyLength: Int) throws(BoxwoodError) {
        try BTree.touchPath(pager, root: &state.root, path: path)
        let leaf = pager.dirtyMemory(path.refs[path.refs.count - 1])
        let off = Node.slot(leaf, index)
        state.bytes &-= keyLength + LeafValue.rawLength(leaf, off)   // wrapping: see `put`
        state.entries -= 1
        if let overflow = LeafValue.overflowReference(leaf, off) { try pager.freeOverflow(overflow) }
        Node.removeCell(leaf, at: index, leaf: true)
        try BTree.rebalance(pager, root: &state.root, path: path)
        pager.modificationCount &+= 1
    }

    /// Removes every key in `low...high` (internal keys, `low <= high`).
    func removeKeys(_ id: Int32, low: UnsafeRawPointer, _ lowLength: Int, high: UnsafeRawPointer, _ highLength: Int) throws(BoxwoodError) {
        guard var state = tables[id], state.root != 0 else { return }
        var keys: [[UInt8]] = []
        var cursor = Cursor(pager: pager, root: state.root)
        try cursor.seek(atOrAfter: low, lowLength)
        while cursor.isValid {
            let (k, n) = cursor.key
            if compareKeys(k, n, high, highLength) > 0 { break }
            keys.append(Array(UnsafeRawBufferPointer(start: k, count: n)))
            try cursor.next()
        }
        if keys.isEmpty { return }
        if !replaying {
            record.logRemoveRange(table: id, low: low, lowLength: lowLength, high: high, highLength: highLength)
            recordOperations += 1
        }
        let path = path_
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: ValueBox.maxKeySize + 8, alignment: 8)
        defer { scratch.deallocate() }
        for key in keys {
            for (i, b) in key.enumerated() { scratch.storeBytes(of: b, toByteOffset: i, as: UInt8.self) }
            let (index, found) = try BTree.descend(pager, root: state.root, scratch, key.count, path: path)
            if found { try removeAt(&state, path: path, index: index, keyLength: key.count) }
        }
        tables[id] = state
    }

    func clearTable(_ id: Int32) throws(BoxwoodError) {
        guard var state = tables[id] else { return }
        if !replaying {
            record.logTableOperation(.removeAll, table: id)
            recordOperations += 1
        }
        try BTree.freeTree(pager, root: state.root)
        state.root = 0
        state.entries = 0
        state.bytes = 0
        tables[id] = state
        pager.modificationCount &+= 1
    }

    func dropTable(_ id: Int32) throws(BoxwoodError) {
        guard let state = tables[id] else { return }
        if !replaying {
            record.logTableOperation(.removeTable, table: id)
            recordOperations += 1
        }
        try BTree.freeTree(pager, root: state.root)
        tables[id] = nil
        pager.modificationCount &+= 1
    }

    func rename(_ from: Int32, to: Int32) throws(BoxwoodError) {
        guard from != to, let state = tables[from] else { return }
        if !replaying {
            record.logRename(from: from, to: to)
            recordOperations += 1
        }
        if let existing = tables[to] { try BTree.freeTree(pager, root: existing.root) }
        tables[to] = state
        tables[from] = nil
        pager.modificationCount &+= 1
    }
}
