import BoxwoodStore
import BoxwoodFullText
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The query kinds of the `full-text` workload, one output row each.
enum FullTextQueryKind: String, CaseIterable {
    /// One word of the vocabulary (ranks drawn log-uniformly: frequent and rare words alike).
    case term = "fts-term"
    /// The first two letters of a word and `*` (`ab*`), as typed while searching.
    case prefix = "fts-prefix"
    /// Two words, both required.
    case and = "fts-and"
    /// Two consecutive words of a message, quoted.
    case phrase = "fts-phrase"
    /// A word of a message with `*` (Postbox's form), inside that message's chat.
    case collection = "fts-collection"
}

/// One planned query.
struct FullTextBenchQuery {
    let kind: FullTextQueryKind
    let collectionId: String?
    let text: String
    /// For `.collection`: the chat whose messages the brute-force check scans.
    let chat: Int?
}

extension BenchSizes {
    /// Messages the `full-text` workload indexes.
    var fullTextMessages: Int {
        switch profile {
        case .full: return 100_000
        case .quick: return 20_000
        case .smoke: return 2_000
        }
    }

    /// Queries of each kind.
    var fullTextQueries: Int {
        switch profile {
        case .full: return 200
        case .quick: return 100
        case .smoke: return 20
        }
    }
}

extension Bench {
    /// The `full-text` workload on Boxwood or SQLite FTS5 (nothing for the other engines).
    func fullText(on engine: EngineKind) throws(BenchError) -> [Measurement] {
        switch engine {
        case .boxwood: return try fullText(BoxwoodFullText.self)
        case .sqlite: return try fullText(SQLiteFullText.self)
        case .lmdb, .mmap, .boxwoodEncrypted: return []
        }
    }

    /// Indexes the corpus (1,000 messages per transaction, timed to the end of close), then runs every query once
    /// untimed (the results are checked and hashed into the row checksums that the report compares across engines)
    /// and once timed.
    private func fullText<E: FullTextBenchEngine>(_: E.Type) throws(BenchError) -> [Measurement] {
        let workload = WorkloadID.fullText.rawValue
        func failure(_ detail: String) -> BenchError { .verification(engine: E.kind, workload: workload, detail: detail) }
        let corpus = FullTextCorpus(count: sizes.fullTextMessages, seed: seed)
        let queries = plannedFullTextQueries(corpus)
        let directory = root + "/" + E.kind.rawValue + "-fulltext"
        removeTree(directory)

        let writer = try E(directory: directory)
        let messages = corpus.messages
        let indexWatch = Stopwatch()
        var n = 0
        while n < messages.count {
            try writer.beginBatch()
            let end = min(n + sizes.transactionBatch, messages.count)
            while n < end {
                let message = messages[n]
                try writer.index(collectionId: message.collectionId, itemId: message.itemId, contents: message.contents, tags: message.tags)
                n += 1
            }
            try writer.commitBatch()
        }
        try writer.close()
        let indexSeconds = indexWatch.seconds
        let bytes = diskUsage(directory)
        let rawBytes = messages.reduce(0) { $0 + $1.contents.utf8.count + $1.itemId.utf8.count + $1.collectionId.utf8.count + $1.tags.utf8.count }
        var measurements = [Measurement(row: workload + "-index", engine: E.kind, ops: messages.count, seconds: indexSeconds,
                                        bytesOnDisk: bytes, rawBytes: rawBytes)]

        let reader = try E(directory: directory)
        // Untimed pass: every result set is checked and hashed.
        var expectedCounts: [Int] = []
        var sinks: [FullTextQueryKind: ReadSink] = [:]
        var hits: [FullTextQueryKind: Int] = [:]
        var tokenCache: [Int: [[UInt8]]] = [:]
        for query in queries {
            let sink = sinks[query.kind] ?? ReadSink()
            sinks[query.kind] = sink
            var items: [String] = []
            try reader.match(collectionId: query.collectionId, query: query.text) { items.append($0) }
            let sorted = items.sorted()
            if Set(sorted).count != sorted.count { throw failure("query \(query.text.debugDescription) returned an item twice") }
            if let chat = query.chat {
                let expected = bruteForce(corpus, chat: chat, prefixQuery: query.text, &tokenCache)
                if sorted != expected {
                    throw failure("query \(query.text.debugDescription) in chat \(chat) returned \(sorted.count) items, brute force \(expected.count)")
                }
            }
            sink.consume(UnsafeRawBufferPointer(start: nil, count: 0))
            for item in sorted { var item = item; item.withUTF8 { sink.consume(UnsafeRawBufferPointer($0)) } }
            expectedCounts.append(items.count)
            hits[query.kind, default: 0] += items.count
        }

        // Timed pass, one row per kind.
        for kind in FullTextQueryKind.allCases {
            let indices = queries.indices.filter { queries[$0].kind == kind }
            var counts: [Int] = []
            let watch = Stopwatch()
            for index in indices {
                var items: [String] = []
                try reader.match(collectionId: queries[index].collectionId, query: queries[index].text) { items.append($0) }
                counts.append(items.count)
            }
            let seconds = watch.seconds
            for (position, index) in indices.enumerated() where counts[position] != expectedCounts[index] {
                throw failure("query \(queries[index].text.debugDescription) returned \(counts[position]) items, before \(expectedCounts[index])")
            }
            measurements.append(Measurement(row: kind.rawValue, engine: E.kind, ops: indices.count, seconds: seconds,
                                            checksum: sinks[kind]?.checksum, note: "\(grouped(hits[kind] ?? 0)) results"))
        }
        try reader.close()
        removeTree(directory)
        return measurements
    }

    /// The queries, the same for every engine: `fullTextQueries` of each kind, in kind order.
    private func plannedFullTextQueries(_ corpus: FullTextCorpus) -> [FullTextBenchQuery] {
        var rng = generator(for: .fullText)
        let vocabulary = corpus.vocabulary
        /// Ranks drawn log-uniformly, so that frequent and rare words are both well represented.
        func word(_ rng: inout SplitMix64) -> String {
            let u = Double(rng.next() >> 11) / Double(1 << 53)
            return vocabulary[min(vocabulary.count - 1, Int(expm1(u * log(Double(vocabulary.count)))))]
        }
        /// Two consecutive word tokens of a random message, or one word token.
        func wordTokens(_ rng: inout SplitMix64, count: Int) -> (message: Int, tokens: [String]) {
            while true {
                let message = rng.below(corpus.messages.count)
                let tokens = FullTextTokenizer.tokens(in: corpus.messages[message].contents).filter { $0.unicodeScalars.first!.properties.isAlphabetic }
                guard tokens.count >= count else { continue }
                let start = rng.below(tokens.count - count + 1)
                return (message, Array(tokens[start..<start + count]))
            }
        }
        var queries: [FullTextBenchQuery] = []
        let perKind = sizes.fullTextQueries
        for kind in FullTextQueryKind.allCases {
            for _ in 0..<perKind {
                switch kind {
                case .term:
                    queries.append(FullTextBenchQuery(kind: kind, collectionId: nil, text: word(&rng), chat: nil))
                case .prefix:
                    queries.append(FullTextBenchQuery(kind: kind, collectionId: nil, text: String(word(&rng).prefix(2)) + "*", chat: nil))
                case .and:
                    queries.append(FullTextBenchQuery(kind: kind, collectionId: nil, text: word(&rng) + " " + word(&rng), chat: nil))
                case .phrase:
                    let picked = wordTokens(&rng, count: 2)
                    queries.append(FullTextBenchQuery(kind: kind, collectionId: nil, text: "\"" + picked.tokens.joined(separator: " ") + "\"", chat: nil))
                case .collection:
                    let picked = wordTokens(&rng, count: 1)
                    let message = corpus.messages[picked.message]
                    queries.append(FullTextBenchQuery(kind: kind, collectionId: message.collectionId, text: picked.tokens[0] + "*", chat: message.chat))
                }
            }
        }
        return queries
    }

    /// The sorted item ids of the chat's messages with a token starting with the query's word (a `word*` query).
    private func bruteForce(_ corpus: FullTextCorpus, chat: Int, prefixQuery: String, _ tokenCache: inout [Int: [[UInt8]]]) -> [String] {
        let prefix = Array(prefixQuery.dropLast().utf8)
        var result: [String] = []
        for index in corpus.messagesOfChat[chat] {
            let message = corpus.messages[index]
            let tokens = tokenCache[index] ?? FullTextTokenizer.tokens(in: message.contents).map { Array($0.utf8) }
            tokenCache[index] = tokens
            if tokens.contains(where: { $0.starts(with: prefix) }) { result.append(message.itemId) }
        }
        return result.sorted()
    }
}
