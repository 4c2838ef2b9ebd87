@_spi(EngineTables) import BoxwoodStore
/// Changing an item's tags.
extension ValueBox {
    /// Replaces the tags of item `itemId` with `tags`, keeping its contents and its collection: only the tag
    /// lists the change touches are edited (the document leaves the lists of the tags it lost and joins those of
    /// the tags it gained) and its record rewritten; its content postings stay as they are. Unlike
    /// ``fullTextSet(_:collectionId:itemId:contents:tags:)``, the item keeps its document id, so its place in
    /// the result order (see ``fullTextMatch(_:collectionId:query:tags:values:)``) does not change. Nothing
    /// changes when the new tags have the same tokens as the old ones.
    ///
    /// Returns false, changing nothing, when the item is not indexed. Requires an open transaction
    /// (``begin()``); after an error the transaction should be aborted.
    public func fullTextUpdateTags(_ table: ValueBoxFullTextTable, itemId: String, tags: String) throws(BoxwoodError) -> Bool {
        let tables = try FullTextTables(table)
        try checkWritable()
        let item = Array(itemId.utf8)
        guard item.count <= ValueBox.maxKeySize else { return false }  // fullTextSet never indexes such an item
        let pending = try fullTextPending(tables)
        guard let docId = try fullTextDocId(tables, ValueBoxKey(item)) else { return false }
        if pending.nextDocId == nil { pending.nextDocId = try nextFullTextDocId(tables) }
        var tagTokens = TokenList()
        let asciiTags = FullTextTokenizer.tokenize(tags, into: &tagTokens)
        let distinctTags = tagTokens.distinctTokens()
        let newTags = distinctTags.map { Array(tagTokens.bytes[$0.token]) }
        let docKey = FullTextKeys.document(docId)
        let record = ByteBuffer(capacity: 256)
        var oldTags: [[UInt8]] = []
        let parsed = try withValue(tables.documents, key: docKey) { bytes -> Bool in
            var terms = FullTextDocumentTerms()
            guard let view = FullTextDocumentView(bytes), terms.parse(view.rest) else { return false }
            oldTags = terms.distinctTokens().tags
            if oldTags == newTags { return true }
            return FullTextDocument.encode(replacingTagsOf: view, tags: tags, asciiTags: asciiTags, tagTokens: tagTokens,
                                           distinctTags: distinctTags, into: record)
        }
        guard let parsed else { throw fullTextCorruption(tables.documents, "item \(itemId) names document \(docId), which is missing") }
        if !parsed { throw .corrupted(file: path, page: nil, reason: "full-text document \(docId) of table \(tables.documents.id) is malformed") }
        if oldTags == newTags { return true }
        try record.withBytes { (bytes) throws(BoxwoodError) in try set(tables.documents, key: docKey, bytes: bytes) }
        // Both ascending: walk them together.
        var o = 0, n = 0
        while o < oldTags.count || n < newTags.count {
            let order = o == oldTags.count ? 1 : n == newTags.count ? -1
                : oldTags[o] == newTags[n] ? 0 : oldTags[o].lexicographicallyPrecedes(newTags[n]) ? -1 : 1
            if order == 0 {
                o += 1
                n += 1
            } else if order < 0 {
                (oldTags[o] + [0]).withUnsafeBytes { pending.edit(.tags, prefix: $0, docId: docId, present: false) }
                o += 1
            } else {
                (newTags[n] + [0]).withUnsafeBytes { pending.edit(.tags, prefix: $0, docId: docId, present: true) }
                n += 1
            }
        }
        if pending.isLarge { try pending.flush(into: self) }
        return true
    }
}
