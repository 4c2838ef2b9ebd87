@_spi(EngineTables) import BoxwoodStore
/// Indexing an item.
extension ValueBox {
    /// Indexes `contents` and `tags` as item `itemId` of collection `collectionId` in a full-text table.
    ///
    /// An item id that is already indexed (in any collection of the table) is **replaced**: its previous
    /// entry is removed first (not securely; call ``fullTextRemove(_:itemId:secure:)`` with `secure: true`
    /// first when the old text must be scrubbed), so an item is never found twice. The item becomes the
    /// newest one of the table (see the result order of ``fullTextMatch(_:collectionId:query:tags:values:)``).
    /// `contents` and `tags` are split into tokens by ``FullTextTokenizer``; empty contents are fine (the item
    /// then matches no query).
    ///
    /// Requires an open transaction (``begin()``), like every write. Throws `.keyTooLarge` when `itemId` is
    /// longer than ``maxKeySize`` UTF-8 bytes or `collectionId` longer than `maxKeySize - 10`,
    /// `.invalidFullTextTable` for an id outside `0..<ValueBoxFullTextTable.idLimit`. After any other error
    /// the transaction should be aborted.
    public func fullTextSet(_ table: ValueBoxFullTextTable, collectionId: String, itemId: String, contents: String, tags: String) throws(BoxwoodError) {
        let tables = try FullTextTables(table)
        try checkWritable()
        let item = Array(itemId.utf8)
        guard item.count <= ValueBox.maxKeySize else { throw .keyTooLarge(length: item.count, limit: ValueBox.maxKeySize) }
        let collection = Array(collectionId.utf8)
        guard collection.count <= FullTextKeys.maxCollectionBytes else {
            throw .keyTooLarge(length: collection.count + 10, limit: ValueBox.maxKeySize)
        }
        var contentTokens = TokenList()
        FullTextTokenizer.tokenize(contents, into: &contentTokens)
        var tagTokens = TokenList()
        FullTextTokenizer.tokenize(tags, into: &tagTokens)
        let terms = contentTokens.distinctTokens()
        let distinctTags = tagTokens.distinctTokens()

        let itemKey = ValueBoxKey(item)
        if let previous = try fullTextDocId(tables, itemKey) {
            try removeFullTextDocument(tables, previous, itemKey: itemKey, secure: false)
        }
        let docId = try nextFullTextDocId(tables)
        let docKey = FullTextKeys.document(docId)
        let record = ByteBuffer(capacity: 256)
        FullTextDocument.encode(collection: collection, item: item, tags: tagTokens, distinctTags: distinctTags,
                                contents: contentTokens, terms: terms, into: record)
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        try record.withBytes { (bytes) throws(BoxwoodError) in try set(tables.documents, key: docKey, bytes: bytes) }
        try docKey.withUnsafeBytes { bytes in Result { () throws(BoxwoodError) in try set(tables.items, key: itemKey, bytes: bytes) } }.get()
        try set(tables.collections, key: FullTextKeys.collection(collection, docId), bytes: empty)
        try putTokenKeys(tables.tags, tagTokens, distinctTags, docId, withPositions: false)
        try putTokenKeys(tables.postings, contentTokens, terms, docId, withPositions: true)
    }

    /// Inserts `token ‖ 0x00 ‖ docId` → the token's positions (or nothing) for each distinct token, with one
    /// scratch key instead of a `ValueBoxKey` per token.
    private func putTokenKeys(_ table: ValueBoxTable, _ list: TokenList, _ distinct: [(token: Range<Int>, positions: [Int32])],
                              _ docId: UInt64, withPositions: Bool) throws(BoxwoodError) {
        if distinct.isEmpty { return }
        let key = UnsafeMutableRawPointer.allocate(byteCount: FullTextTokenizer.maxTokenBytes + 9, alignment: 8)
        defer { key.deallocate() }
        let value = ByteBuffer(capacity: 256)
        try withBytes(list.bytes) { (all) throws(BoxwoodError) in
            for term in distinct {
                let length = term.token.count
                // A token is never empty (`TokenList.finishToken`), so `all` is not either and has an address.
                key.copyMemory(from: all.baseAddress! + term.token.lowerBound, byteCount: length)
                key.storeBytes(of: 0, toByteOffset: length, as: UInt8.self)
                key.storeBytes(of: docId.bigEndian, toByteOffset: length + 1, as: UInt64.self)
                value.reset()
                if withPositions { FullTextPositions.encode(term.positions, into: value) }
                try value.withBytes { (bytes) throws(BoxwoodError) in
                    try set(table, keyBytes: UnsafeRawBufferPointer(start: key, count: length + 9), bytes: bytes)
                }
            }
        }
    }

    /// The document id of an item, nil when it is not indexed.
    func fullTextDocId(_ tables: FullTextTables, _ itemKey: ValueBoxKey) throws(BoxwoodError) -> UInt64? {
        try withValue(tables.items, key: itemKey) { bytes in
            bytes.count == 8 ? UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)) : nil
        } ?? nil
    }

    /// One more than the largest document id in use (1 for an empty index): newer items get larger ids.
    func nextFullTextDocId(_ tables: FullTextTables) throws(BoxwoodError) -> UInt64 {
        var next: UInt64 = 1
        try withRange(tables.documents, start: ValueBoxKey([UInt8](repeating: 0xFF, count: 9)), end: ValueBoxKey(length: 0), limit: 1) { key, _ in
            next = FullTextKeys.docId(atEndOf: key) + 1
            return false
        }
        return next
    }
}
