@_spi(EngineTables) import BoxwoodStore
/// Clearing an index.
extension ValueBox {
    /// Removes every entry of a full-text table, in any on-disk layout, leaving an empty index in the current
    /// layout: the way to rebuild an index that
    /// throws ``BoxwoodError/fullTextLayoutMismatch(path:id:found:supported:)`` (clear it, then index the items
    /// again). The removal is not a secure delete (the engine's range removal has no `secure` flag; remove
    /// items with ``fullTextRemove(_:itemId:secure:)`` first when their text must be scrubbed).
    ///
    /// Requires an open transaction (``begin()``).
    public func fullTextReset(_ table: ValueBoxFullTextTable) throws(BoxwoodError) {
        let tables = try FullTextTables(table)
        try checkWritable()
        if let pending = transactionBuffer(tables.bufferId) as? FullTextPendingLists { pending.discard() }
        // No key of these tables starts with 0xFF: tokens and item ids are UTF-8, collection keys start with a
        // small length, document keys with a docId far below 2^56, the meta key with `l`.
        for part in FullTextPart.allCases {
            try removeRange(tables.table(part), start: ValueBoxKey(length: 0), end: ValueBoxKey([UInt8](repeating: 0xFF, count: 9)))
        }
        // The index is now empty, in the current layout (a buffer of this transaction that checked the layout
        // before stays registered, so the entry must not wait for the next first write).
        try recordFullTextLayout(tables)
    }
}

extension ValueBox {
    /// Whether the index was written in another on-disk layout than this version reads (an older one: before
    /// posting blocks) and must be rebuilt: cleared with ``fullTextReset(_:)`` and its items indexed again. An empty
    /// index never needs it.
    ///
    /// Requires an open transaction (``begin()``, read-only is enough).
    public func fullTextNeedsRebuild(_ table: ValueBoxFullTextTable) throws(BoxwoodError) -> Bool {
        let tables = try FullTextTables(table)
        do {
            try checkFullTextLayout(tables, forWriting: false)
            return false
        } catch {
            if case .fullTextLayoutMismatch = error { return true }
            throw error
        }
    }
}
