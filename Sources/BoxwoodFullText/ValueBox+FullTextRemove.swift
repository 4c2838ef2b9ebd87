@_spi(EngineTables) import BoxwoodStore
/// Removing an item.
extension ValueBox {
    /// Removes item `itemId` from a full-text table: its document record, its item entry, its collection and
    /// tag entries and every posting of its tokens. Nothing happens when the item is not indexed.
    ///
    /// `secure` is passed to every engine ``remove(_:key:secure:)`` this makes (the engine scrubs the bytes of
    /// securely removed entries at the next checkpoint). No live table keeps anything of the item's text
    /// afterwards: its text exists only in its own record and in posting keys that carry its document id.
    ///
    /// Requires an open transaction (``begin()``).
    public func fullTextRemove(_ table: ValueBoxFullTextTable, itemId: String, secure: Bool) throws(BoxwoodError) {
        let tables = try FullTextTables(table)
        try checkWritable()
        let item = Array(itemId.utf8)
        guard item.count <= ValueBox.maxKeySize else { return }  // fullTextSet never indexes such an item
        let itemKey = ValueBoxKey(item)
        guard let docId = try fullTextDocId(tables, itemKey) else { return }
        try removeFullTextDocument(tables, docId, itemKey: itemKey, secure: secure)
    }

    /// Removes every entry of document `docId`, and the item entry `itemKey`.
    func removeFullTextDocument(_ tables: FullTextTables, _ docId: UInt64, itemKey: ValueBoxKey, secure: Bool) throws(BoxwoodError) {
        let docKey = FullTextKeys.document(docId)
        var keys: [(ValueBoxTable, ValueBoxKey)] = []
        let parsed = try withValue(tables.documents, key: docKey) { bytes -> Bool in
            guard let view = FullTextDocumentView(bytes, needTerms: true) else { return false }
            keys.reserveCapacity(view.terms.count + view.tags.count + 1)
            for term in view.terms { keys.append((tables.postings, FullTextKeys.token(term.token, docId))) }
            for tag in view.tags { keys.append((tables.tags, FullTextKeys.token(tag, docId))) }
            keys.append((tables.collections, FullTextKeys.collection(Array(view.collection), docId)))
            return true
        }
        if parsed == false {
            throw .corrupted(file: path, page: nil, reason: "full-text document \(docId) of table \(tables.documents.id) is malformed")
        }
        for (table, key) in keys { try remove(table, key: key, secure: secure) }
        try remove(tables.documents, key: docKey, secure: secure)
        try remove(tables.items, key: itemKey, secure: secure)
    }
}
