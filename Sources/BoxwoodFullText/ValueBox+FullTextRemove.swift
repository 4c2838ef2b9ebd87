@_spi(EngineTables) import BoxwoodStore
/// Removing an item.
extension ValueBox {
    /// Removes item `itemId` from a full-text table: its document record, its item entry, its collection and
    /// tag entries and every posting of its tokens. Nothing happens when the item is not indexed.
    ///
    /// `secure` is passed to every engine ``remove(_:key:secure:)`` this makes (the engine scrubs the bytes of
    /// securely removed entries at the next checkpoint). No live table keeps anything of the item's text
    /// afterwards: its text exists only in its own record and in posting keys that carry its document id.
    /// The record and item entry go at once; the list entries are removed when the transaction's list changes
    /// are written (at commit or before a query), one rewrite per touched block.
    ///
    /// Requires an open transaction (``begin()``).
    public func fullTextRemove(_ table: ValueBoxFullTextTable, itemId: String, secure: Bool) throws(BoxwoodError) {
        let tables = try FullTextTables(table)
        try checkWritable()
        let item = Array(itemId.utf8)
        guard item.count <= ValueBox.maxKeySize else { return }  // fullTextSet never indexes such an item
        let itemKey = ValueBoxKey(item)
        let pending = try fullTextPending(tables)
        guard let docId = try fullTextDocId(tables, itemKey) else { return }
        try removeFullTextDocument(tables, docId, itemKey: itemKey, secure: secure, pending: pending)
    }

    /// Removes document `docId`'s record and the item entry `itemKey`, and buffers the removal of its entry from
    /// every list its record names (`pending.edit`; the entries may be in the blocks or among the buffered appends).
    func removeFullTextDocument(_ tables: FullTextTables, _ docId: UInt64, itemKey: ValueBoxKey, secure: Bool,
                                pending: FullTextPendingLists) throws(BoxwoodError) {
        // The record may hold the largest docId: look the next one up before it goes (`FullTextPendingLists`).
        if pending.nextDocId == nil { pending.nextDocId = try nextFullTextDocId(tables) }
        let docKey = FullTextKeys.document(docId)
        let parsed = try withValue(tables.documents, key: docKey) { bytes -> Bool in
            var terms = FullTextDocumentTerms()
            guard let view = FullTextDocumentView(bytes), terms.parse(view.rest) else { return false }
            let distinct = terms.distinctTokens()
            for term in distinct.terms { removeEntry(pending, .postings, term + [0], docId, secure) }
            for tag in distinct.tags { removeEntry(pending, .tags, tag + [0], docId, secure) }
            removeEntry(pending, .collections, FullTextKeys.collectionPrefix(Array(view.collection)), docId, secure)
            return true
        }
        if parsed == false {
            throw .corrupted(file: path, page: nil, reason: "full-text document \(docId) of table \(tables.documents.id) is malformed")
        }
        try remove(tables.documents, key: docKey, secure: secure)
        try remove(tables.items, key: itemKey, secure: secure)
    }

    private func removeEntry(_ pending: FullTextPendingLists, _ part: FullTextPart, _ prefix: [UInt8], _ docId: UInt64, _ secure: Bool) {
        prefix.withUnsafeBytes { pending.edit(part, prefix: $0, docId: docId, present: false, secure: secure) }
    }
}
