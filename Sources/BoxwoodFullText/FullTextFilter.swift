import BoxwoodStore
/// What a document must satisfy to match: the query's phrases, the collection and the tags.
struct FullTextFilter {
    let query: FullTextQuery
    let collection: [UInt8]?
    let tags: [[UInt8]]

    init(query: FullTextQuery, collection: [UInt8]?, tags: [[UInt8]]) {
        self.query = query
        self.collection = collection
        self.tags = tags
    }

    /// One walk per distinct token requirement of the phrases, one for the collection, one per tag token; and
    /// for each phrase of several tokens, the walk of each of its tokens (those walks keep the positions).
    func walks(_ tables: FullTextTables) -> (walks: [FullTextPostingWalk], phraseWalks: [[Int]]) {
        var walks: [FullTextPostingWalk] = []
        var phraseWalks: [[Int]] = []
        var index: [[UInt8]: Int] = [:]
        let phraseTokens = Set(query.phrases.filter { $0.tokens.count > 1 }.flatMap { phrase in
            phrase.tokens.enumerated().map { FullTextKeys.tokenPrefix($1, exact: !(phrase.lastIsPrefix && $0 == phrase.tokens.count - 1)) }
        })
        for phrase in query.phrases {
            var indices: [Int] = []
            for (i, token) in phrase.tokens.enumerated() {
                let exact = !(phrase.lastIsPrefix && i == phrase.tokens.count - 1)
                let prefix = FullTextKeys.tokenPrefix(token, exact: exact)
                if let walk = index[prefix] {
                    indices.append(walk)
                    continue
                }
                index[prefix] = walks.count
                indices.append(walks.count)
                walks.append(FullTextPostingWalk(table: tables.postings, prefix: prefix, ordered: exact, hasPositions: true,
                                                 keepsValues: phraseTokens.contains(prefix)))
            }
            if indices.count > 1 { phraseWalks.append(indices) }
        }
        if let collection {
            walks.append(FullTextPostingWalk(table: tables.collections, prefix: FullTextKeys.collectionPrefix(collection), ordered: true, hasPositions: false))
        }
        for tag in tags {
            walks.append(FullTextPostingWalk(table: tables.tags, prefix: FullTextKeys.tokenPrefix(tag, exact: true), ordered: true, hasPositions: false))
        }
        return (walks, phraseWalks)
    }

    /// True when the document (its ids, and its tokens parsed from the rest of the same record) satisfies every condition.
    func matches(_ view: FullTextDocumentView, _ document: FullTextDocumentTerms) -> Bool {
        if let collection, !collection.withUnsafeBytes({ compareBytes(view.collection, $0) == 0 }) { return false }
        for tag in tags where !tag.withUnsafeBytes({ document.hasTag($0) }) { return false }
        for phrase in query.phrases where !matches(phrase, document) { return false }
        return true
    }

    private func matches(_ phrase: FullTextQuery.Phrase, _ document: FullTextDocumentTerms) -> Bool {
        let last = phrase.tokens.count - 1
        if last == 0 {
            return phrase.tokens[0].withUnsafeBytes { document.contains($0, prefix: phrase.lastIsPrefix) }
        }
        var positions: [[Int32]] = []
        for (i, token) in phrase.tokens.enumerated() {
            let found = token.withUnsafeBytes { document.positions(of: $0, prefix: phrase.lastIsPrefix && i == last) }
            if found.isEmpty { return false }
            positions.append(found)
        }
        return FullTextPositions.phraseMatches(positions, count: positions.count)
    }
}
