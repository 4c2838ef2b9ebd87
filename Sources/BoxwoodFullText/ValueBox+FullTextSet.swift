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
        let asciiContents = FullTextTokenizer.tokenize(contents, into: &contentTokens)
        var tagTokens = TokenList()
        let asciiTags = FullTextTokenizer.tokenize(tags, into: &tagTokens)
        // A text-form record (ASCII) needs no sorted tokens: the lists take them in any order.
        let textForm = asciiContents && asciiTags
        let terms = textForm ? contentTokens.distinctTokensUnordered() : contentTokens.distinctTokens()
        let distinctTags = textForm ? tagTokens.distinctTokensUnordered() : tagTokens.distinctTokens()

        let pending = try fullTextPending(tables)
        let itemKey = ValueBoxKey(item)
        if let previous = try fullTextDocId(tables, itemKey) {
            try removeFullTextDocument(tables, previous, itemKey: itemKey, secure: false, pending: pending)
        }
        let docId: UInt64
        if let next = pending.nextDocId { docId = next } else { docId = try nextFullTextDocId(tables) }
        pending.nextDocId = docId + 1
        let docKey = FullTextKeys.document(docId)
        let record = ByteBuffer(capacity: 256)
        if textForm {
            FullTextDocument.encode(collection: collection, item: item, asciiTags: tags, asciiContents: contents, into: record)
        } else {
            FullTextDocument.encode(collection: collection, item: item, tags: tagTokens, distinctTags: distinctTags,
                                    contents: contentTokens, terms: terms, into: record)
        }
        try record.withBytes { (bytes) throws(BoxwoodError) in try set(tables.documents, key: docKey, bytes: bytes) }
        record.reset()
        record.appendVarint(docId)
        try record.withBytes { (bytes) throws(BoxwoodError) in try set(tables.items, key: itemKey, bytes: bytes) }
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        FullTextKeys.collectionPrefix(collection).withUnsafeBytes { pending.add(.collections, prefix: $0, docId: docId, positions: none) }
        bufferTokenEntries(pending, .tags, tagTokens, distinctTags, docId)
        bufferTokenEntries(pending, .postings, contentTokens, terms, docId)
        if pending.isLarge { try pending.flush(into: self) }
    }

    /// Buffers the entry of `docId` in the list of each distinct token (`token ‖ 0x00`), with its positions
    /// for content postings.
    private func bufferTokenEntries(_ pending: FullTextPendingLists, _ part: FullTextPart, _ list: TokenList,
                                    _ distinct: [(token: Range<Int>, positions: [Int32])], _ docId: UInt64) {
        if distinct.isEmpty { return }
        var prefix = [UInt8](repeating: 0, count: FullTextTokenizer.maxTokenBytes + 1)
        let positions = ByteBuffer(capacity: 64)
        for term in distinct {
            let length = term.token.count
            // A token is never empty (`TokenList.finishToken`), so `list.bytes` is not either and both buffers
            // (memory of this call, not bytes read from disk) have an address.
            prefix.withUnsafeMutableBytes { prefix in
                list.bytes.withUnsafeBytes { all in
                    prefix.baseAddress!.copyMemory(from: all.baseAddress! + term.token.lowerBound, byteCount: length)
                }
                prefix[length] = 0
            }
            positions.reset()
            if part == .postings { FullTextPositions.encode(term.positions, into: positions) }
            prefix.withUnsafeBytes { prefix in
                pending.add(part, prefix: UnsafeRawBufferPointer(rebasing: prefix[0...length]), docId: docId, positions: positions.bytes)
            }
        }
    }

    /// The document id of an item (the item entry's value: a varint), nil when it is not indexed.
    func fullTextDocId(_ tables: FullTextTables, _ itemKey: ValueBoxKey) throws(BoxwoodError) -> UInt64? {
        var malformed = false
        let docId = try withValue(tables.items, key: itemKey) { bytes -> UInt64 in
            var reader = ByteReader(bytes)
            guard let docId = try? reader.varint(), reader.isAtEnd, docId > 0 else { malformed = true; return 0 }
            return docId
        }
        if malformed { throw fullTextCorruption(tables.items, "an item entry is not a document id") }
        return docId
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
