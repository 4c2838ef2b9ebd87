/// What ``ValueBox/updateLastEntry(_:atOrBelow:prefixLength:_:)`` does with the entry it lent.
public enum LastEntryUpdate {
    /// Nothing changes.
    case keep
    /// The lent entry's key gets this value (ignored when no entry was lent).
    case replace(value: [UInt8])
    /// `key` is set to `value`. Meant for a key after the lent entry and at most the bound (then it is written
    /// through the same descent); any other key is set like ``ValueBox/set(_:key:bytes:)`` does.
    case insert(key: ValueBoxKey, value: [UInt8])
}

/// A read-modify-write of the last entry below a key in ONE B+tree descent: the append path of a list kept in
/// blocks (the full-text index's posting lists) reads its last block and writes it back, which as a reverse range
/// seek and a `set` costs two descents.
///
/// Invariants kept here:
/// - The change is exactly a `set`: the WAL record gets the same `.set` operation (the key in its internal form and
///   the value's bytes), the cell is made by `LeafValue.makeCell` with the box's compression settings, a value large
///   enough to be written once goes through `perform` (so through `setWrittenOnce`), and the table's entry and byte
///   counts change as `putCell` changes them. Replay, recovery, checkpoints and other processes cannot tell the two apart.
/// - The descent's path is used only when the entry written is in the leaf the descent reached: the lent entry is in
///   that leaf (its index is above 0, or it is the bound itself), and an inserted key lies between the lent entry
///   (or the leaf's previous key) and the bound, so no separator above the leaf can be on its other side. Every
///   other case (the entry is the last of the previous leaf, the tree is empty, a key elsewhere) takes the general
///   path: a cursor seek, then `perform(.set)`.
/// - The lent bytes are valid only during `body`: they may be in the leaf the write rewrites or in an overflow chain
///   it frees. The update is made from `body`'s own arrays after it returned.
extension ValueBox {
    /// Finds the last entry of `table` whose key is at most `bound` and whose first `prefixLength` bytes are
    /// `bound`'s, lends its key (public form) and value to `body` (nil, nil when there is none), and applies
    /// what `body` returns — all in one B+tree descent when the entry written is in the leaf the descent reached
    /// (the common case; see the extension's comment). Needs a write transaction, like ``set(_:key:bytes:)``,
    /// and changes the box exactly as the equivalent `set` would (the same WAL operation). `body` must not use the
    /// value box; an error it throws is rethrown with nothing changed.
    public func updateLastEntry(_ table: ValueBoxTable, atOrBelow bound: ValueBoxKey, prefixLength: Int,
                                _ body: (_ key: UnsafeRawBufferPointer?, _ value: UnsafeRawBufferPointer?) throws(BoxwoodError) -> LastEntryUpdate) throws(BoxwoodError) {
        try checkWritable()
        try table.requireWritableId()
        _ = try existingTable(table)
        let prefixLength = max(0, min(prefixLength, bound.length))
        try withInternalKey(table.keyType, bound) { (b, bn) throws(BoxwoodError) in
            try updateLast(table, bound: b, bn, prefixLength: prefixLength, body)
        }
    }

    private func updateLast(_ table: ValueBoxTable, bound: UnsafeRawPointer, _ boundLength: Int, prefixLength: Int,
                            _ body: (UnsafeRawBufferPointer?, UnsafeRawBufferPointer?) throws(BoxwoodError) -> LastEntryUpdate) throws(BoxwoodError) {
        let id = table.id
        let root = state.tables[id]?.root ?? 0
        // The lent key is copied here in its internal form (the WAL operation needs it after the leaf changed).
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: ValueBox.maxKeySize + 8, alignment: 8)
        defer { scratch.deallocate() }
        if root == 0 {
            let update = try lend(table, nil, 0, nil, body)
            try applyGeneral(table, update, lentKey: nil, 0)
            return
        }
        let path = path_
        let (index, found) = try BTree.descend(pager, root: root, bound, boundLength, path: path)
        let target = found ? index : index - 1
        guard target >= 0 else {
            // The entry below the bound, if any, is the last of an earlier leaf.
            try updateLastGeneral(table, root: root, bound: bound, boundLength, prefixLength: prefixLength, scratch: scratch, body)
            return
        }
        let leaf = try pager.page(path.refs[path.refs.count - 1])
        let (k, kn) = LeafPage(leaf).key(target)
        guard kn >= prefixLength, compareKeys(k, prefixLength, bound, prefixLength) == 0 else {
            // No entry with the prefix is at most the bound: an insert lands after `target`, in this leaf.
            let update = try lend(table, nil, 0, nil, body)
            try applyInLeaf(table, update, lentKey: nil, 0, after: (k, kn), insertIndex: target + 1, bound: bound, boundLength)
            return
        }
        scratch.copyMemory(from: k, byteCount: kn)
        let value = try LeafValue.read(pager, leaf, LeafPage(leaf).slot(target))
        let update: LastEntryUpdate
        do {
            update = try lend(table, scratch, kn, value, body)
        } catch {
            value.release()
            throw error
        }
        value.release()
        try applyInLeaf(table, update, lentKey: scratch, kn, after: (UnsafeRawPointer(scratch), kn), insertIndex: target + 1, bound: bound, boundLength,
                        replaceIndex: target)
    }

    /// The rare path: the entry is found with a cursor, and the update is applied as a `set`.
    private func updateLastGeneral(_ table: ValueBoxTable, root: PageRef, bound: UnsafeRawPointer, _ boundLength: Int, prefixLength: Int,
                                   scratch: UnsafeMutableRawPointer,
                                   _ body: (UnsafeRawBufferPointer?, UnsafeRawBufferPointer?) throws(BoxwoodError) -> LastEntryUpdate) throws(BoxwoodError) {
        var cursor = Cursor(pager: pager, root: root)
        if try !cursor.seek(atOrAfter: bound, boundLength) {
            if cursor.isValid { try cursor.previous() } else { try cursor.seekLast() }
        }
        if cursor.isValid {
            let (k, kn) = cursor.key
            if kn >= prefixLength, compareKeys(k, prefixLength, bound, prefixLength) == 0 {
                scratch.copyMemory(from: k, byteCount: kn)
                let (page, off) = cursor.cell
                let value = try LeafValue.read(pager, page, off)
                let update: LastEntryUpdate
                do {
                    update = try lend(table, scratch, kn, value, body)
                } catch {
                    value.release()
                    throw error
                }
                value.release()
                try applyGeneral(table, update, lentKey: scratch, kn)
                return
            }
        }
        let update = try lend(table, nil, 0, nil, body)
        try applyGeneral(table, update, lentKey: nil, 0)
    }

    /// Runs `body` with the entry (key in `scratch`, internal form; lent in public form) or with nothing.
    private func lend(_ table: ValueBoxTable, _ key: UnsafeMutableRawPointer?, _ keyLength: Int, _ value: ValueBytes?,
                      _ body: (UnsafeRawBufferPointer?, UnsafeRawBufferPointer?) throws(BoxwoodError) -> LastEntryUpdate) throws(BoxwoodError) -> LastEntryUpdate {
        guard let key, let value else { return try body(nil, nil) }
        let flip = table.keyType == .int64 && keyLength > 0
        if flip { key.storeBytes(of: key.load(as: UInt8.self) ^ 0x80, as: UInt8.self) }
        defer { if flip { key.storeBytes(of: key.load(as: UInt8.self) ^ 0x80, as: UInt8.self) } }
        lendingDepth += 1
        defer { lendingDepth -= 1 }
        return try body(UnsafeRawBufferPointer(start: key, count: keyLength), UnsafeRawBufferPointer(start: value.pointer, count: value.count))
    }

    /// Applies `update` through the descent in `path_`: a replacement of the cell at `replaceIndex`, or an insert at
    /// `insertIndex` of a key above `after` and at most the bound. Anything else goes to `applyGeneral`.
    private func applyInLeaf(_ table: ValueBoxTable, _ update: LastEntryUpdate, lentKey: UnsafeRawPointer?, _ lentKeyLength: Int,
                             after: (UnsafeRawPointer, Int), insertIndex: Int, bound: UnsafeRawPointer, _ boundLength: Int,
                             replaceIndex: Int? = nil) throws(BoxwoodError) {
        switch update {
        case .keep:
            return
        case let .replace(value):
            guard let lentKey, let replaceIndex else { return }
            try withArrayBytes(value) { (v) throws(BoxwoodError) in
                if large(v.count) {
                    try perform(.set(table: table.id, keyType: table.keyType, key: UnsafeRawBufferPointer(start: lentKey, count: lentKeyLength), value: v))
                    return
                }
                try putThroughPath(table, key: lentKey, lentKeyLength, value: v, index: replaceIndex, replacing: true)
            }
        case let .insert(key, value):
            try withInternalKey(table.keyType, key) { (k, kn) throws(BoxwoodError) in
                try withArrayBytes(value) { (v) throws(BoxwoodError) in
                    let operation = WALOperation.set(table: table.id, keyType: table.keyType, key: UnsafeRawBufferPointer(start: k, count: kn), value: v)
                    // `after` may be a key in the leaf: compare before anything changes it.
                    let fits = compareKeys(after.0, after.1, k, kn) < 0 && compareKeys(k, kn, bound, boundLength) <= 0
                    if !fits || large(v.count) {
                        try perform(operation)
                        return
                    }
                    try putThroughPath(table, key: k, kn, value: v, index: insertIndex, replacing: false)
                }
            }
        }
    }

    /// Applies `update` as the equivalent `set` (its own descent).
    private func applyGeneral(_ table: ValueBoxTable, _ update: LastEntryUpdate, lentKey: UnsafeRawPointer?, _ lentKeyLength: Int) throws(BoxwoodError) {
        switch update {
        case .keep:
            return
        case let .replace(value):
            guard let lentKey else { return }
            try withArrayBytes(value) { (v) throws(BoxwoodError) in
                try perform(.set(table: table.id, keyType: table.keyType, key: UnsafeRawBufferPointer(start: lentKey, count: lentKeyLength), value: v))
            }
        case let .insert(key, value):
            try withArrayBytes(value) { (v) throws(BoxwoodError) in try set(table, key: key, bytes: v) }
        }
    }

    /// True when a value of `count` bytes may be written once (`perform` decides; its own descent is then the cost).
    private func large(_ count: Int) -> Bool {
        count > PageLayout.overflowPayload && writesOnce(count)
    }

    /// `putCell` through the path `path_` holds: the cell for `key` replaces the one at `index` of the path's leaf
    /// (`replacing`) or is inserted there; then the operation is logged as `perform` logs a set.
    private func putThroughPath(_ table: ValueBoxTable, key: UnsafeRawPointer, _ keyLength: Int, value: UnsafeRawBufferPointer,
                                index: Int, replacing: Bool) throws(BoxwoodError) {
        let id = table.id
        let valuePointer = value.baseAddress ?? UnsafeRawPointer(cellBuffer)
        let cellSize = LeafValue.makeCell(pager, into: cellBuffer, key: key, keyLength: keyLength, value: valuePointer,
                                          valueLength: value.count, compressionThreshold: options.compressionThreshold,
                                          compressionLimit: options.compressionLimit)
        // The tree exists: the descent reached a leaf of it.
        var state = self.state.tables[id].unsafelyUnwrapped
        let path = path_
        try BTree.touchPath(pager, root: &state.root, path: path)
        let leaf = pager.dirtyMemory(path.refs[path.refs.count - 1])
        var placed = false
        if replacing {
            let off = LeafPage(leaf).slot(index)
            state.bytes &-= keyLength + LeafValue.rawLength(leaf, off)   // wrapping: see `putCell`
            state.entries -= 1
            if let overflow = LeafValue.overflowReference(leaf, off) { try pager.freeOverflow(overflow) }
            placed = LeafPage.replaceCellInPlace(leaf, at: off, cellBuffer, cellSize)
            if !placed { LeafPage.removeCell(leaf, at: index) }
        }
        if !placed {
            try BTree.insertIntoLeaf(pager, root: &state.root, path: path, index: index, cell: cellBuffer, size: cellSize)
        }
        state.entries += 1
        state.bytes &+= keyLength + value.count
        self.state.tables[id] = state
        pager.modificationCount &+= 1
        record.append(.set(table: id, keyType: table.keyType, key: UnsafeRawBufferPointer(start: key, count: keyLength), value: value))
    }
}

/// `array.withUnsafeBytes` for a body with typed throws (`withUnsafeBytes` only rethrows untyped errors).
@inline(__always)
private func withArrayBytes<R>(_ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(BoxwoodError) -> R) throws(BoxwoodError) -> R {
    try array.withUnsafeBytes { bytes in Result { () throws(BoxwoodError) -> R in try body(bytes) } }.get()
}
