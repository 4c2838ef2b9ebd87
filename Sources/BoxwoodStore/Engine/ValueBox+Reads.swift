/// Reads: point lookups over the mapped pages (no syscalls) and ordered iteration with Postbox's bounds rules.
extension ValueBox {
    /// A copy of the value of `key`, or nil when the key or the table is absent.
    public func get(_ table: ValueBoxTable, key: ValueBoxKey) throws(BoxwoodError) -> ReadBuffer? {
        let pinned = try enterRead()
        defer { exitRead(pinned) }
        guard let state = try existingTable(table), state.root != 0 else { return nil }
        return try withInternalKey(table.keyType, key) { (k, n) throws(BoxwoodError) -> ReadBuffer? in
            guard let (page, off) = try BTree.find(pager, root: state.root, k, n) else { return nil }
            return try LeafValue.read(pager, page, off).makeReadBuffer(path: pager.file.path)
        }
    }

    /// Runs `body` with the bytes of the value of `key` and returns what it returns; nil (and `body` is not run)
    /// when the key or the table is absent. The borrowing read: nothing is copied when the stored bytes are the value.
    ///
    /// - The bytes are lent in place — from the read-only mapping of the data file (an encrypted file: from the page's
    ///   decrypted copy), or from the memory of a commit not yet checkpointed — when the value is stored uncompressed
    ///   in one contiguous run: inline in its leaf (a cell of at most 1000 bytes), in a single overflow page (up to
    ///   4064 bytes), or not yet checkpointed (any length).
    /// - Otherwise `body` sees a temporary buffer, made once and freed when `body` returns: the value decompressed
    ///   (LZ4), or, for an uncompressed value of more than one overflow page, the pages' payloads joined (every
    ///   overflow page carries its own header, so such a value is never contiguous in the file).
    ///
    /// The pointer is valid only inside `body`: do not keep it or let it escape (copy what must outlive the call).
    /// `body` may read this value box (a nested read never frees or reuses the page the outer bytes are in: see
    /// `lendingDepth`) but must not modify it (a write may move or free that page). Commits of other value boxes or
    /// processes do not change what `body` sees: the read pins its snapshot in the shared header for the whole call,
    /// and no checkpoint writes over a page a pinned snapshot can still reach. An error `body` throws is rethrown
    /// unchanged.
    public func withValue<R>(_ table: ValueBoxTable, key: ValueBoxKey,
                             _ body: (UnsafeRawBufferPointer) throws(BoxwoodError) -> R) throws(BoxwoodError) -> R? {
        let pinned = try enterRead()
        defer { exitRead(pinned) }
        guard let state = try existingTable(table), state.root != 0 else { return nil }
        return try withInternalKey(table.keyType, key) { (k, n) throws(BoxwoodError) -> R? in
            guard let (page, off) = try BTree.find(pager, root: state.root, k, n) else { return nil }
            let value = try LeafValue.read(pager, page, off)
            lendingDepth += 1
            defer {
                lendingDepth -= 1
                value.release()
            }
            return try body(UnsafeRawBufferPointer(start: value.pointer, count: value.count))
        }
    }

    /// True when `key` is present.
    public func exists(_ table: ValueBoxTable, key: ValueBoxKey) throws(BoxwoodError) -> Bool {
        let pinned = try enterRead()
        defer { exitRead(pinned) }
        guard let state = try existingTable(table), state.root != 0 else { return false }
        return try withInternalKey(table.keyType, key) { (k, n) throws(BoxwoodError) -> Bool in
            try BTree.find(pager, root: state.root, k, n) != nil
        }
    }

    /// Partial read: `process` gets the value length and a reader `(buffer, offset, length)`. Out-of-range
    /// reads are not performed and are reported as `.outOfBounds`. Nothing happens when the key is absent.
    public func read(_ table: ValueBoxTable, key: ValueBoxKey, _ process: (Int, (UnsafeMutableRawPointer, Int, Int) -> Void) -> Void) throws(BoxwoodError) {
        var rangeError: BoxwoodError? = nil
        _ = try withValue(table, key: key) { bytes in
            process(bytes.count) { buffer, offset, count in
                guard ValueBox.rangeFits(offset, count, bytes.count) else {
                    rangeError = rangeError ?? .outOfBounds(offset: offset, length: count, valueLength: bytes.count); return
                }
                // `count > 0` fits in `bytes`, which is then not empty and has an address.
                if count > 0 { buffer.copyMemory(from: bytes.baseAddress! + offset, byteCount: count) }
            }
        }
        if let rangeError { throw rangeError }
    }

    // MARK: Ranges

    /// Entries strictly between `start` and `end`: ascending when `start < end`, descending when `start > end`,
    /// nothing when equal. `limit <= 0` means no limit; the callback returns false to stop. The key and buffer
    /// passed to the callback are copies the callback may keep.
    public func range(_ table: ValueBoxTable, start: ValueBoxKey, end: ValueBoxKey,
                      values: (ValueBoxKey, ReadBuffer) -> Bool, limit: Int) throws(BoxwoodError) {
        // With `needValue` every entry comes with its value (here and in the `value!` below).
        try walk(table, start: start, end: end, limit: limit, needValue: true) { key, value in
            values(key, value!) ? .accept : .stop
        }
    }

    /// Like `range(_:start:end:values:limit:)`, but the key (public form) and value bytes are lent, not copied:
    /// valid only during `body`. Nothing is allocated per entry unless a value is compressed or spans
    /// overflow pages. `body` returns false to stop; it should not modify the value box (if it does, the
    /// walk re-seeks after the last key it lent).
    public func withRange(_ table: ValueBoxTable, start: ValueBoxKey, end: ValueBoxKey, limit: Int,
                          _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool) throws(BoxwoodError) {
        let int64 = table.keyType == .int64
        try rangeWalk(table, start: start, end: end, limit: limit, needValue: false, lendValue: true) { key, value, _ in
            if int64 && key.1 > 0 {
                // The internal form has the sign bit flipped; the buffer is the walk's own copy.
                let p = UnsafeMutableRawPointer(mutating: key.0)
                p.storeBytes(of: p.load(as: UInt8.self) ^ 0x80, as: UInt8.self)
                defer { p.storeBytes(of: p.load(as: UInt8.self) ^ 0x80, as: UInt8.self) }
                return body(UnsafeRawBufferPointer(start: key.0, count: key.1), value) ? .accept : .stop
            }
            return body(UnsafeRawBufferPointer(start: key.0, count: key.1), value) ? .accept : .stop
        }
    }

    /// Keys strictly between `start` and `end` (see `range(_:start:end:values:limit:)`).
    public func range(_ table: ValueBoxTable, start: ValueBoxKey, end: ValueBoxKey,
                      keys: (ValueBoxKey) -> Bool, limit: Int) throws(BoxwoodError) {
        try walk(table, start: start, end: end, limit: limit, needValue: false) { key, _ in
            keys(key) ? .accept : .stop
        }
    }

    /// Like `range`, but the callback decides per entry: `.accept` counts towards `limit`, `.skip` does not,
    /// `.stop` ends the scan.
    public func filteredRange(_ table: ValueBoxTable, start: ValueBoxKey, end: ValueBoxKey,
                              values: (ValueBoxKey, ReadBuffer) -> ValueBoxFilterResult, limit: Int) throws(BoxwoodError) {
        try walk(table, start: start, end: end, limit: limit, needValue: true) { key, value in values(key, value!) }  // see `range`
    }

    /// Keys-only variant of `filteredRange`.
    public func filteredRange(_ table: ValueBoxTable, start: ValueBoxKey, end: ValueBoxKey,
                              keys: (ValueBoxKey) -> ValueBoxFilterResult, limit: Int) throws(BoxwoodError) {
        try walk(table, start: start, end: end, limit: limit, needValue: false) { key, _ in keys(key) }
    }

    /// Every entry in ascending key order; the callback returns false to stop.
    public func scan(_ table: ValueBoxTable, values: (ValueBoxKey, ReadBuffer) -> Bool) throws(BoxwoodError) {
        try walkAll(table, needValue: true) { key, value in values(publicKey(table.keyType, key.0, key.1), value!) }  // see `range`
    }

    /// Every key in ascending order; the callback returns false to stop.
    public func scan(_ table: ValueBoxTable, keys: (ValueBoxKey) -> Bool) throws(BoxwoodError) {
        try walkAll(table, needValue: false) { key, _ in keys(publicKey(table.keyType, key.0, key.1)) }
    }

    /// Every entry of an int64 table in ascending numeric order, with the integer key.
    public func scanInt64(_ table: ValueBoxTable, values: (Int64, ReadBuffer) -> Bool) throws(BoxwoodError) {
        guard table.keyType == .int64 else { throw .keyTypeMismatch(table: table.id, existing: "int64", requested: table.keyType.description) }
        try walkAll(table, needValue: true) { key, value in values(int64Key(key.0, key.1), value!) }  // see `range`
    }

    /// Every key of an int64 table in ascending numeric order.
    public func scanInt64(_ table: ValueBoxTable, keys: (Int64) -> Bool) throws(BoxwoodError) {
        guard table.keyType == .int64 else { throw .keyTypeMismatch(table: table.id, existing: "int64", requested: table.keyType.description) }
        try walkAll(table, needValue: false) { key, _ in keys(int64Key(key.0, key.1)) }
    }

    /// The number of entries in a table (0 when it does not exist).
    public func count(_ table: ValueBoxTable) throws(BoxwoodError) -> Int {
        let pinned = try enterRead()
        defer { exitRead(pinned) }
        return try existingTable(table)?.entries ?? 0
    }

    /// The number of keys strictly between `start` and `end` (no direction swap: `start >= end` gives 0).
    public func count(_ table: ValueBoxTable, start: ValueBoxKey, end: ValueBoxKey) throws(BoxwoodError) -> Int {
        let pinned = try enterRead()
        defer { exitRead(pinned) }
        guard let state = try existingTable(table), state.root != 0 else { return 0 }
        return try withInternalKey(table.keyType, start) { (s, sn) throws(BoxwoodError) -> Int in
            try withInternalKey(table.keyType, end) { (e, en) throws(BoxwoodError) -> Int in
                if compareKeys(s, sn, e, en) >= 0 { return 0 }
                var cursor = Cursor(pager: pager, root: state.root)
                if try cursor.seek(atOrAfter: s, sn) { try cursor.next() }
                var n = 0
                while cursor.isValid {
                    let (k, kn) = cursor.key
                    if compareKeys(k, kn, e, en) >= 0 { break }
                    n += 1
                    try cursor.next()
                }
                return n
            }
        }
    }

    // MARK: Iteration machinery

    private func int64Key(_ p: UnsafeRawPointer, _ n: Int) -> Int64 {
        guard n == 8 else { return 0 }
        return Int64(bitPattern: UInt64(bigEndian: p.loadUnaligned(as: UInt64.self)) ^ (1 << 63))
    }

    /// Walks the whole table in ascending order.
    private func walkAll(_ table: ValueBoxTable, needValue: Bool,
                         _ visit: ((UnsafeRawPointer, Int), ReadBuffer?) -> Bool) throws(BoxwoodError) {
        let pinned = try enterRead()
        defer { exitRead(pinned) }
        guard let state = try existingTable(table), state.root != 0 else { return }
        var cursor = Cursor(pager: pager, root: state.root)
        try cursor.seekFirst()
        try iterate(&cursor, table: table, ascending: true, end: nil, limit: 0, needValue: needValue) { key, value in
            visit(key, value) ? .accept : .stop
        }
    }

    /// Every entry of `table` in ascending order, each key in its internal form and each value's bytes lent
    /// (valid only during the call, never copied); the callback returns false to stop. For copying a table
    /// whole (``backup(to:progress:)``).
    func walkEntriesLending(_ table: ValueBoxTable, _ visit: ((UnsafeRawPointer, Int), UnsafeRawBufferPointer) -> Bool) throws(BoxwoodError) {
        let pinned = try enterRead()
        defer { exitRead(pinned) }
        guard let state = try existingTable(table), state.root != 0 else { return }
        var cursor = Cursor(pager: pager, root: state.root)
        try cursor.seekFirst()
        try iterate(&cursor, table: table, ascending: true, end: nil, limit: 0, needValue: false, lendValue: true) { key, lent, _ in
            visit(key, lent) ? .accept : .stop
        }
    }

    /// Postbox's range rules over internal keys.
    private func walk(_ table: ValueBoxTable, start: ValueBoxKey, end: ValueBoxKey, limit: Int, needValue: Bool,
                      _ visit: (ValueBoxKey, ReadBuffer?) -> ValueBoxFilterResult) throws(BoxwoodError) {
        try rangeWalk(table, start: start, end: end, limit: limit, needValue: needValue, lendValue: false) { key, _, value in
            visit(publicKey(table.keyType, key.0, key.1), value)
        }
    }

    /// Positions a cursor by Postbox's range rules (exclusive bounds, direction from their order) and
    /// iterates to the exclusive end.
    private func rangeWalk(_ table: ValueBoxTable, start: ValueBoxKey, end: ValueBoxKey, limit: Int,
                           needValue: Bool, lendValue: Bool,
                           _ visit: ((UnsafeRawPointer, Int), UnsafeRawBufferPointer, ReadBuffer?) -> ValueBoxFilterResult) throws(BoxwoodError) {
        let pinned = try enterRead()
        defer { exitRead(pinned) }
        guard let state = try existingTable(table), state.root != 0 else { return }
        try withInternalKey(table.keyType, start) { (s, sn) throws(BoxwoodError) in
            try withInternalKey(table.keyType, end) { (e, en) throws(BoxwoodError) in
                let order = compareKeys(s, sn, e, en)
                if order == 0 { return }
                var cursor = Cursor(pager: pager, root: state.root)
                if order < 0 {
                    if try cursor.seek(atOrAfter: s, sn) { try cursor.next() }
                } else {
                    try cursor.seek(before: s, sn)
                }
                try iterate(&cursor, table: table, ascending: order < 0, end: (e, en), limit: limit,
                            needValue: needValue, lendValue: lendValue, visit)
            }
        }
    }

    /// `iterate` with copied values (`ReadBuffer`, which the callback may keep) or none.
    private func iterate(_ cursor: inout Cursor, table: ValueBoxTable, ascending: Bool,
                         end: (UnsafeRawPointer, Int)?, limit: Int, needValue: Bool,
                         _ visit: ((UnsafeRawPointer, Int), ReadBuffer?) -> ValueBoxFilterResult) throws(BoxwoodError) {
        try iterate(&cursor, table: table, ascending: ascending, end: end, limit: limit, needValue: needValue,
                    lendValue: false) { key, _, copy in visit(key, copy) }
    }

    /// Drives a cursor until the exclusive `end`, the limit or a `.stop`, passing each key (a copy owned by
    /// the walk) and, as asked, a copy of the value or its lent bytes. If a callback modifies the value box,
    /// the cursor re-seeks after the last key it passed.
    private func iterate(_ cursor: inout Cursor, table: ValueBoxTable, ascending: Bool,
                         end: (UnsafeRawPointer, Int)?, limit: Int, needValue: Bool, lendValue: Bool,
                         _ visit: ((UnsafeRawPointer, Int), UnsafeRawBufferPointer, ReadBuffer?) -> ValueBoxFilterResult) throws(BoxwoodError) {
        try withUnsafeTemporaryAllocation(byteCount: ValueBox.maxKeySize + 8, alignment: 8) { (buffer) throws(BoxwoodError) in
            try iterate(&cursor, table: table, ascending: ascending, end: end, limit: limit, needValue: needValue,
                        lendValue: lendValue, lastKey: buffer.baseAddress!, visit)  // a non-empty allocation
        }
    }

    /// The loop of `iterate`, with `lastKey` (room for the longest key) to keep the key it lends.
    private func iterate(_ cursor: inout Cursor, table: ValueBoxTable, ascending: Bool,
                         end: (UnsafeRawPointer, Int)?, limit: Int, needValue: Bool, lendValue: Bool,
                         lastKey: UnsafeMutableRawPointer,
                         _ visit: ((UnsafeRawPointer, Int), UnsafeRawBufferPointer, ReadBuffer?) -> ValueBoxFilterResult) throws(BoxwoodError) {
        var accepted = 0
        var seen = pager.modificationCount
        var hintedLeaf: UnsafeRawPointer? = nil
        while cursor.isValid {
            if cursor.leaf != hintedLeaf {
                hintedLeaf = cursor.leaf
                cursor.prefetchRemainingCells(ascending: ascending)
            }
            let (k, n) = cursor.key
            if let (e, en) = end {
                let c = compareKeys(k, n, e, en)
                if ascending ? c >= 0 : c <= 0 { return }
            }
            var value: ReadBuffer? = nil
            var lent = UnsafeRawBufferPointer(start: nil, count: 0)
            var bytes: ValueBytes? = nil
            if needValue || lendValue {
                let (page, off) = cursor.cell
                let read = try LeafValue.read(pager, page, off)
                if needValue { value = try read.makeReadBuffer(path: pager.file.path) } else {
                    bytes = read
                    lent = UnsafeRawBufferPointer(start: read.pointer, count: read.count)
                }
            }
            lastKey.copyMemory(from: k, byteCount: n)
            lendingDepth += 1
            let verdict = visit((UnsafeRawPointer(lastKey), n), lent, value)
            lendingDepth -= 1
            bytes?.release()
            switch verdict {
            case .stop: return
            case .accept:
                accepted += 1
                if limit > 0 && accepted >= limit { return }
            case .skip: break
            }
            if pager == nil { throw .closed }
            if pager.modificationCount != seen {
                // The callback changed the box: page pointers may be stale. Re-seek from the table's new root.
                seen = pager.modificationCount
                guard let now = state.tables[table.id], now.root != 0 else { return }
                cursor = Cursor(pager: pager, root: now.root)
                if ascending {
                    if try cursor.seek(atOrAfter: lastKey, n) { try cursor.next() }
                } else {
                    try cursor.seek(before: lastKey, n)
                }
            } else if ascending {
                try cursor.next()
            } else {
                try cursor.previous()
            }
        }
    }
}
