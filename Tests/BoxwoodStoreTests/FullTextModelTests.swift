import Testing
import Foundation
@testable import BoxwoodStore
@testable import BoxwoodFullText

// Model-based randomized test of the full-text index: random sets, replacements, tag updates and removals of documents
// mixing Latin (with diacritics), Cyrillic, CJK and emoji, in transactions that commit or abort, with
// close/reopen of the database; every query (words, prefixes, phrases, ANDs, collection and tag filters) is
// compared, in order, with a brute-force evaluation over an array of documents tokenized by the same
// tokenizer. After every commit the entry counts of the engine tables are checked against the model.
//
// Replay a failure with the printed seed:
//     BOXWOOD_SEED=<seed> swift test --filter FullTextModelTests
// Change the length with BOXWOOD_FTS_OPS (default 8000 operations, a few seconds in a debug build).

/// One indexed item of the model.
private struct ModelDocument {
    let collection: String
    let item: String
    let tokens: [[UInt8]]
    var tags: Set<[UInt8]>
    /// When it was set: larger is newer (a tag update keeps it).
    let sequence: Int
}

/// One query term of the model: consecutive tokens, the last one possibly a prefix.
private struct ModelPhrase {
    var tokens: [[UInt8]]
    var prefix: Bool

    func matches(_ document: ModelDocument) -> Bool {
        let n = tokens.count
        guard document.tokens.count >= n else { return false }
        for start in 0...(document.tokens.count - n) {
            var all = true
            for i in 0..<n {
                let token = document.tokens[start + i]
                let ok = prefix && i == n - 1 ? token.starts(with: tokens[i]) : token == tokens[i]
                if !ok { all = false; break }
            }
            if all { return true }
        }
        return false
    }
}

private struct FullTextModelFailure: Error, CustomStringConvertible {
    let description: String
}

private let latinWords = ["hello", "help", "helmet", "world", "word", "work", "test", "tests", "testing", "tea", "team",
                          "crème", "Crème", "café", "naïve", "Über", "über", "déjà", "vu", "a", "an", "and", "the",
                          "photo", "phone", "42", "2024", "don't", "e-mail"]
private let cyrillicWords = ["привет", "Привет", "мир", "Мир", "ёлка", "елка", "дом", "домик", "дома", "работа", "работать"]
private let cjkWords = ["東京", "京都", "日本", "日本語", "中文", "タワー", "ラーメン", "東"]
private let emojiWords = ["🎉", "👍", "👍🏽", "❤️", "😀", "🇩🇪", "👨‍👩‍👧", "hi🎉"]
private let asciiWords = latinWords.filter { $0.allSatisfy(\.isASCII) }
private let asciiSeparators = [" ", " ", " ", ", ", "! ", " - ", "\n", ""]
private let separators = [" ", " ", " ", " ", ", ", "! ", " - ", "\n", "…", ""]
private let collections = ["p1", "p2", "p3", ""]
private let documentTags = ["", "t1", "t2", "t1 t2", "t3", "t2 t3 t1", "t2 ü"]
private let queryTags = ["t1", "t2", "t1 t2", "T3", ""]

private final class FullTextModelRun {
    let seed: UInt64
    let path: String
    let table = ValueBoxFullTextTable(id: 41)
    var rng: SplitMix64
    var box: ValueBox
    var documents: [String: ModelDocument] = [:]
    var committed: [String: ModelDocument] = [:]
    var sequence = 0
    var operation = 0
    var lastOperation = ""
    var stats = (sets: 0, retags: 0, removes: 0, queries: 0, hits: 0, commits: 0, aborts: 0, reopens: 0)
    /// The block size the run uses (`FullTextPostingBlock.maxBytes`): tiny ones split lists often.
    var maxBlockBytes = FullTextPostingBlock.maxBytes

    init(seed: UInt64, path: String) throws {
        self.seed = seed
        self.path = path
        rng = SplitMix64(seed: seed)
        box = try ValueBox(path: path, options: crashTestOptions(.normal))
    }

    func fail(_ message: String) -> FullTextModelFailure {
        FullTextModelFailure(description: "seed \(seed), operation \(operation) (\(lastOperation)): \(message)")
    }

    func pick<T>(_ array: [T]) -> T { array[rng.below(array.count)] }

    func tokens(_ text: String) -> [[UInt8]] { FullTextTokenizer.tokens(in: text).map { Array($0.utf8) } }

    func randomWord() -> String {
        switch rng.below(10) {
        case 0...4: return pick(latinWords)
        case 5, 6: return pick(cyrillicWords)
        case 7, 8: return pick(cjkWords)
        default: return pick(emojiWords)
        }
    }

    /// Text of any script or, half of the time, ASCII only (whose records keep the text instead of the
    /// tokens, see `FullTextDocument`; sometimes with a word longer than a token may be).
    func randomText() -> String {
        var text = ""
        if rng.chance(0.5) {
            for _ in 0..<rng.below(13) {
                let word = rng.chance(0.02) ? String(repeating: pick(["ab", "Ab", "x1"]), count: 60 + rng.below(20)) : pick(asciiWords)
                text += word + pick(asciiSeparators)
            }
            return text
        }
        for _ in 0..<rng.below(13) { text += randomWord() + pick(separators) }
        return text
    }

    func run(operations: Int) throws {
        while operation < operations {
            operation += 1
            if !box.isInTransaction {
                switch rng.below(20) {
                case 0: try reopen()
                case 1...4: try query()
                default:
                    lastOperation = "begin"
                    try box.begin()
                }
                continue
            }
            switch rng.below(46) {
            case 0...16: try set()
            case 17...22: try remove()
            case 40...45: try updateTags()
            case 23...33: try query()
            case 34...37: try commit()
            default:
                lastOperation = "abort"
                box.abort()
                documents = committed
                stats.aborts += 1
            }
        }
        if box.isInTransaction { try commit() }
        // Remove everything: every engine table of the index must be empty.
        try box.begin()
        for item in documents.keys.sorted() {
            lastOperation = "final remove \(item)"
            try box.fullTextRemove(table, itemId: item, secure: rng.chance(0.5))
        }
        documents = [:]
        try commit()
        try reopen()
        for part in FullTextPart.allCases where part != .meta {  // the layout entry stays
            let entries = try box.count(engineTable(part))
            if entries != 0 { throw fail("engine table \(part) keeps \(entries) entries after every item was removed") }
        }
        try box.close()
    }

    func set() throws {
        let item = "p1a0b\(rng.below(60))"
        let collection = pick(collections)
        let contents = randomText()
        let tags = pick(documentTags)
        lastOperation = "set \(item) in \(collection): \(contents.debugDescription) tags \(tags.debugDescription)"
        try box.fullTextSet(table, collectionId: collection, itemId: item, contents: contents, tags: tags)
        sequence += 1
        documents[item] = ModelDocument(collection: collection, item: item, tokens: tokens(contents),
                                        tags: Set(tokens(tags)), sequence: sequence)
        stats.sets += 1
    }

    /// `fullTextUpdateTags`: the item keeps its contents, collection and place in the result order.
    func updateTags() throws {
        let item = "p1a0b\(rng.below(60))"
        let tags = pick(documentTags)
        lastOperation = "update tags of \(item) to \(tags.debugDescription)"
        let updated = try box.fullTextUpdateTags(table, itemId: item, tags: tags)
        if updated != (documents[item] != nil) { throw fail("fullTextUpdateTags returned \(updated) for an item the model \(documents[item] == nil ? "lacks" : "has")") }
        documents[item]?.tags = Set(tokens(tags))
        stats.retags += 1
    }

    func remove() throws {
        let item = "p1a0b\(rng.below(60))"
        let secure = rng.chance(0.5)
        lastOperation = "remove \(item) secure \(secure)"
        try box.fullTextRemove(table, itemId: item, secure: secure)
        documents[item] = nil
        stats.removes += 1
    }

    func commit() throws {
        lastOperation = "commit"
        try box.commit()
        committed = documents
        stats.commits += 1
        try checkTableSizes()
    }

    func reopen() throws {
        lastOperation = "reopen"
        try box.close()
        box = try ValueBox(path: path, options: crashTestOptions(.normal))
        stats.reopens += 1
    }

    func engineTable(_ part: FullTextPart) -> ValueBoxTable {
        ValueBoxTable(id: -(table.id * 8 + part.rawValue) - 1, keyType: .binary)
    }

    /// Every document has exactly its entries: one record, one item, one collection entry, one posting per
    /// distinct token and one tag entry per distinct tag (postings, tags and collections counted inside their
    /// blocks, whose invariants `fullTextBlocks` checks).
    func checkTableSizes() throws {
        let expected: [(FullTextPart, Int)] = [
            (.documents, documents.count), (.items, documents.count), (.collections, documents.count),
            (.postings, documents.values.reduce(0) { $0 + Set($1.tokens).count }),
            (.tags, documents.values.reduce(0) { $0 + $1.tags.count }),
        ]
        for (part, count) in expected {
            let entries: Int
            switch part {
            case .postings, .tags, .collections:
                entries = try box.fullTextBlocks(table, part, maxBytes: maxBlockBytes).reduce(0) { $0 + $1.docIds.count }
            default:
                entries = try box.count(engineTable(part))
            }
            if entries != count { throw fail("engine table \(part) has \(entries) entries, the model \(count)") }
        }
    }

    /// A random term: tokens of a document (so that queries find something) or of a vocabulary word, the
    /// last one sometimes cut to a prefix.
    func randomPhrase() -> ModelPhrase {
        var phrase = ModelPhrase(tokens: [], prefix: false)
        while phrase.tokens.isEmpty {
            let withTokens = documents.values.filter { !$0.tokens.isEmpty }
            if rng.chance(0.6), !withTokens.isEmpty {
                let document = withTokens.sorted { $0.sequence < $1.sequence }[rng.below(withTokens.count)]
                let start = rng.below(document.tokens.count)
                let length = 1 + rng.below(min(3, document.tokens.count - start))
                phrase.tokens = Array(document.tokens[start..<start + length])
            } else {
                phrase.tokens = tokens(randomWord())
            }
        }
        if rng.chance(0.35) {
            phrase.prefix = true
            let last = Array(String(decoding: phrase.tokens[phrase.tokens.count - 1], as: UTF8.self).unicodeScalars)
            var cut = String.UnicodeScalarView()
            cut.append(contentsOf: last[0..<(1 + rng.below(last.count))])
            phrase.tokens[phrase.tokens.count - 1] = Array(String(cut).utf8)
        }
        return phrase
    }

    /// The query text of a term, in one of the forms the query language accepts.
    func render(_ phrase: ModelPhrase) -> String {
        var words = phrase.tokens.map { String(decoding: $0, as: UTF8.self) }
        if rng.chance(0.2) { words = words.map { $0.uppercased() } }
        let star = phrase.prefix ? "*" : ""
        if words.count == 1 && rng.chance(0.8) { return words[0] + star }
        switch rng.below(3) {
        case 0: return "\"" + words.joined(separator: " ") + star + "\""
        case 1: return "\"" + words.joined(separator: "  ") + "\"" + star
        default: return words.joined(separator: ",") + star
        }
    }

    func query() throws {
        var phrases: [ModelPhrase] = []
        var text: String
        if rng.chance(0.04) {
            text = pick(["", "  ", " , ", "*", "\"\"", "-"])
        } else {
            for _ in 0..<(1 + rng.below(3)) { phrases.append(randomPhrase()) }
            text = phrases.map(render).joined(separator: pick([" ", "  ", "\t"]))
        }
        let collection: String? = rng.chance(0.35) ? pick(collections) : nil
        let tags: String? = rng.chance(0.25) ? pick(queryTags) : nil
        let limit = rng.chance(0.2) ? 1 + rng.below(3) : Int.max
        lastOperation = "query \(text.debugDescription) collection \(collection.debugDescription) tags \(tags.debugDescription) limit \(limit)"

        let tagTokens = Set(tokens(tags ?? ""))
        var expected = documents.values
            .filter { document in
                !phrases.isEmpty && phrases.allSatisfy { $0.matches(document) }
                    && (collection == nil || document.collection == collection)
                    && tagTokens.isSubset(of: document.tags)
            }
            .sorted { $0.sequence > $1.sequence }
            .map { "\($0.collection)/\($0.item)" }
        if expected.count > limit { expected.removeLast(expected.count - limit) }

        var actual: [String] = []
        let firstRound = rng.chance(0.5) ? 256 : 1 + rng.below(4)
        let denseSpan = pick([UInt64(1), 16, .max])
        lastOperation += " first round \(firstRound), dense span \(denseSpan)"
        try box.fullTextMatch(table, collectionId: collection, query: text, tags: tags, firstRound: firstRound, denseSpan: denseSpan) { collection, item in
            actual.append("\(collection)/\(item)")
            return actual.count < limit
        }
        if actual != expected { throw fail("got \(actual), expected \(expected)") }
        stats.queries += 1
        stats.hits += actual.count
    }
}

@Suite struct FullTextModelTests {
    @Test func randomOperationsMatchABruteForceModel() throws {
        let seed = crashTestSeed()
        let operations = environmentCount("BOXWOOD_FTS_OPS", default: 8_000)
        print("FullTextModelTests seed: \(seed), \(operations) operations; replay with BOXWOOD_SEED=\(seed)")
        let path = temporaryDatabasePath("fts-model")
        defer { removeItem(path) }
        let started = Date()
        let run = try FullTextModelRun(seed: seed, path: path)
        run.maxBlockBytes = [8, 24, 64, FullTextPostingBlock.maxBytes][Int(seed % 4)]
        print("FullTextModelTests: blocks of at most \(run.maxBlockBytes) bytes")
        do {
            try FullTextPostingBlock.$maxBytes.withValue(run.maxBlockBytes) { try run.run(operations: operations) }
        } catch let failure as FullTextModelFailure {
            Issue.record("\(failure)")
            return
        } catch {
            Issue.record("seed \(seed), operation \(run.operation) (\(run.lastOperation)): \(error)")
            return
        }
        let s = run.stats
        print("FullTextModelTests: seed \(seed), \(operations) operations in \(String(format: "%.1f", Date().timeIntervalSince(started))) s: "
            + "\(s.sets) sets, \(s.retags) tag updates, \(s.removes) removes, \(s.queries) queries (\(s.hits) results), \(s.commits) commits, \(s.aborts) aborts, \(s.reopens) reopens")
    }
}
