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
        let pending = try fullTextPending(tables)
        guard let docId = try fullTextDocId(tables, itemKey) else { return }
        try pending.flush(into: self)  // the lists must hold every entry of the document
        try removeFullTextDocument(tables, docId, itemKey: itemKey, secure: secure)
    }

    /// Removes every entry of document `docId` (its lists' entries must all be in their blocks, not buffered),
    /// and the item entry `itemKey`.
    func removeFullTextDocument(_ tables: FullTextTables, _ docId: UInt64, itemKey: ValueBoxKey, secure: Bool) throws(BoxwoodError) {
        let docKey = FullTextKeys.document(docId)
        var lists: [(part: FullTextPart, prefix: [UInt8])] = []
        let parsed = try withValue(tables.documents, key: docKey) { bytes -> Bool in
            var terms = FullTextDocumentTerms()
            guard let view = FullTextDocumentView(bytes), terms.parse(view.rest) else { return false }
            let distinct = terms.distinctTokens()
            lists.reserveCapacity(distinct.terms.count + distinct.tags.count + 1)
            for term in distinct.terms { lists.append((.postings, term + [0])) }
            for tag in distinct.tags { lists.append((.tags, tag + [0])) }
            lists.append((.collections, FullTextKeys.collectionPrefix(Array(view.collection))))
            return true
        }
        if parsed == false {
            throw .corrupted(file: path, page: nil, reason: "full-text document \(docId) of table \(tables.documents.id) is malformed")
        }
        for list in lists {
            try withBytes(list.prefix) { (prefix) throws(BoxwoodError) in
                try removeFromFullTextList(tables.table(list.part), prefix: prefix, hasPositions: list.part == .postings, docId: docId, secure: secure)
            }
        }
        try remove(tables.documents, key: docKey, secure: secure)
        try remove(tables.items, key: itemKey, secure: secure)
    }
}
