@_spi(EngineTables) import BoxwoodStore
/// Querying.
extension ValueBox {
    /// Finds the items of a full-text table that match `query`, newest first.
    ///
    /// - `query` uses the query language of `docs/full-text-index.md`: whitespace-separated terms that must
    ///   all match; `term*` is a prefix; `"a b c"` a phrase (consecutive positions, `"a b*"` with a prefix last
    ///   token); a word that tokenizes into several tokens (`hello,world`, `東京`) is a phrase. Text is
    ///   tokenized like indexed text (``FullTextTokenizer``), so Postbox's sanitised queries (`hello world*`)
    ///   work as they are. A query without any token matches nothing.
    /// - `collectionId`, when given, keeps the items of that collection only (exact comparison).
    /// - `tags`, when given, is tokenized and keeps the items whose tags contain every one of its tokens
    ///   (a `tags` string without tokens filters nothing).
    ///
    /// `values` receives each match's collection id and item id, in **descending order of indexing**: the item
    /// set (or replaced) most recently comes first. It returns false to stop. It must not modify the value box.
    /// Reads see one snapshot: the open transaction (its own writes included) or, outside one, the newest
    /// commit as of the call.
    ///
    /// Cost: the posting lists of the query's tokens, its collection and its tags are read in rounds of
    /// growing size until the shortest one is complete; its documents are the candidates, intersected in
    /// memory with every other list read completely, and one document record is read per candidate (which
    /// also checks phrases, prefixes and lists not read completely). See `docs/full-text-index.md`.
    public func fullTextMatch(_ table: ValueBoxFullTextTable, collectionId: String?, query: String, tags: String?,
                              values: (_ collectionId: String, _ itemId: String) -> Bool) throws(BoxwoodError) {
        try fullTextMatch(table, collectionId: collectionId, query: query, tags: tags, firstRound: 256, denseSpan: 16, values: values)
    }

    /// `fullTextMatch` with its tuning exposed to tests: `firstRound` is the number of keys each posting list
    /// walk reads in its first round (small values exercise several rounds and candidates checked against lists
    /// not read completely); candidates are read by walking the documents table when their id range is less
    /// than `denseSpan` times their number (`.max`: always; 1: almost never).
    func fullTextMatch(_ table: ValueBoxFullTextTable, collectionId: String?, query: String, tags: String?, firstRound: Int,
                       denseSpan: UInt64, values: (_ collectionId: String, _ itemId: String) -> Bool) throws(BoxwoodError) {
        let tables = try FullTextTables(table)
        // The transaction's buffered entries go to the lists first, so that the query sees its own writes (the
        // buffer's existence also says the layout was checked in this transaction).
        let pending = transactionBuffer(tables.bufferId) as? FullTextPendingLists
        try pending?.flush(into: self)
        try withSnapshot { () throws(BoxwoodError) in
            if pending == nil { try checkFullTextLayout(tables, forWriting: false) }
            try match(tables, collectionId: collectionId, query: query, tags: tags, firstRound: firstRound, denseSpan: denseSpan, values: values)
        }
    }

    /// `fullTextMatch` inside one snapshot.
    private func match(_ tables: FullTextTables, collectionId: String?, query: String, tags: String?, firstRound: Int,
                       denseSpan: UInt64, values: (_ collectionId: String, _ itemId: String) -> Bool) throws(BoxwoodError) {
        let parsed = FullTextQuery(query)
        if parsed.isEmpty { return }
        let collection = collectionId.map { Array($0.utf8) }
        if let collection, collection.count > FullTextKeys.maxCollectionBytes { return }  // never indexed
        var tagTokens: [[UInt8]] = []
        if let tags {
            var list = TokenList()
            FullTextTokenizer.tokenize(tags, into: &list)
            tagTokens = list.distinctTokens().map { Array(list.bytes[$0.token]) }
        }
        let filter = FullTextFilter(query: parsed, collection: collection, tags: tagTokens)

        var (walks, phraseWalks) = filter.walks(tables)
        let driver = try race(&walks, firstRound: max(1, firstRound))
        var candidates = walks[driver].descendingDocIds()
        var incomplete = false
        for i in walks.indices where i != driver {
            // Finishing a list up to 8 times the candidates' length (sequential reads) is cheaper than checking
            // each candidate's record (a random read).
            let more = 8 * candidates.count + 256 - walks[i].docIds.count
            if !walks[i].isComplete && more > 0 { try walks[i].advance(self, by: more) }
            if walks[i].isComplete {
                candidates = intersectDescending(candidates, walks[i].descendingDocIds())
            } else {
                incomplete = true
            }
        }
        // With every list complete, phrases are checked on the positions the posting walks kept; otherwise every
        // condition is checked on the candidates' records.
        if !incomplete && !phraseWalks.isEmpty {
            var lists = [[Int32]](repeating: [], count: phraseWalks.map(\.count).max()!)  // `phraseWalks` is not empty
            let phrases = phraseWalks.map { $0.map { walks[$0].positionLookup() } }
            var kept: [UInt64] = []
            kept.reserveCapacity(candidates.count)
            for docId in candidates {
                var matches = true
                for phrase in phrases {
                    for j in phrase.indices { phrase[j].positions(of: docId, into: &lists[j]) }
                    if !FullTextPositions.phraseMatches(lists, count: phrase.count) { matches = false; break }
                }
                if matches { kept.append(docId) }
            }
            candidates = kept
        }
        let checkRecords = incomplete
        try emitMatches(tables, candidates, filter: filter, checkRecords: checkRecords, denseSpan: max(1, denseSpan), values)
    }

    /// Reads the record of each candidate (newest first), checks it against `filter` when `checkRecords`, and
    /// passes the matches to `values` until it returns false. Dense candidates (at least one in `denseSpan`
    /// documents of their id range) are read by one descending walk over the documents table, sparse ones by lookups.
    private func emitMatches(_ tables: FullTextTables, _ candidates: [UInt64], filter: FullTextFilter, checkRecords: Bool,
                             denseSpan: UInt64, _ values: (_ collectionId: String, _ itemId: String) -> Bool) throws(BoxwoodError) {
        guard let newest = candidates.first, let oldest = candidates.last else { return }
        var malformed: UInt64? = nil
        var stopped = false
        var terms = FullTextDocumentTerms()  // one set of buffers for every record checked
        /// Checks one record and reports it; false once the walk must end.
        func visit(_ docId: UInt64, _ bytes: UnsafeRawBufferPointer) -> Bool {
            guard let view = FullTextDocumentView(bytes) else { malformed = docId; return false }
            if checkRecords {
                guard terms.parse(view.rest) else { malformed = docId; return false }
                if !filter.matches(view, terms) { return true }
            }
            if !values(String(decoding: view.collection, as: UTF8.self), String(decoding: view.item, as: UTF8.self)) {
                stopped = true
                return false
            }
            return true
        }
        if (newest - oldest) / denseSpan < UInt64(candidates.count) {
            var next = 0
            try withRange(tables.documents, start: FullTextKeys.document(newest &+ 1), end: FullTextKeys.document(oldest &- 1), limit: 0) { key, value in
                let docId = FullTextKeys.docId(atEndOf: key)
                while next < candidates.count && candidates[next] > docId { next += 1 }
                guard next < candidates.count else { return false }
                guard candidates[next] == docId else { return true }
                next += 1
                return visit(docId, value) && next < candidates.count
            }
        } else {
            for docId in candidates {
                _ = try withValue(tables.documents, key: FullTextKeys.document(docId)) { bytes in visit(docId, bytes) }
                if stopped || malformed != nil { break }
            }
        }
        if let malformed {
            throw .corrupted(file: path, page: nil, reason: "full-text document \(malformed) of table \(tables.documents.id) is malformed")
        }
    }

    /// Reads the walks in rounds (`firstRound` keys each, doubling) until at least one is complete; returns the
    /// index of the complete walk with the fewest ids.
    private func race(_ walks: inout [FullTextPostingWalk], firstRound: Int) throws(BoxwoodError) -> Int {
        var budget = firstRound
        while true {
            for i in walks.indices { try walks[i].advance(self, by: budget) }
            var best: Int? = nil
            for i in walks.indices where walks[i].isComplete && (best.map { walks[i].docIds.count < walks[$0].docIds.count } ?? true) {
                best = i
            }
            if let best { return best }
            budget *= 2
        }
    }
}
