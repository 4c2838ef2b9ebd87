import BoxwoodStore
import BoxwoodFullText

/// A full-text index the `full-text` workload can time: Boxwood's (`ValueBox.fullText*`) or SQLite FTS5.
/// Writes happen inside a batch (`beginBatch` … `commitBatch`), one transaction of the engine; queries run
/// outside one.
protocol FullTextBenchEngine: AnyObject {
    /// Which column the engine fills.
    static var kind: EngineKind { get }
    /// Opens (creating when missing) the index in `directory`, with durability normal.
    init(directory: String) throws(BenchError)
    /// Finishes pending work and releases the files.
    func close() throws(BenchError)
    func beginBatch() throws(BenchError)
    func commitBatch() throws(BenchError)
    /// Indexes one message.
    func index(collectionId: String, itemId: String, contents: String, tags: String) throws(BenchError)
    /// Runs a query (the syntax both engines share: words, `ab*`, `"a b"`), optionally inside one collection,
    /// passing each match's item id to `visit`.
    func match(collectionId: String?, query: String, _ visit: (String) -> Void) throws(BenchError)
}

/// Boxwood's full-text index through its public API: `fullTextSet` per message, `fullTextMatch` per query,
/// full-text table 41 (Postbox's MessageHistoryTextIndex), default options (durability normal).
final class BoxwoodFullText: FullTextBenchEngine {
    static let kind = EngineKind.boxwood
    private let box: ValueBox
    private let table = ValueBoxFullTextTable(id: 41)

    init(directory: String) throws(BenchError) {
        do { box = try ValueBox(path: directory) } catch { throw .boxwood(error) }
    }

    func close() throws(BenchError) {
        do { try box.close() } catch { throw .boxwood(error) }
    }

    func beginBatch() throws(BenchError) {
        do { try box.begin() } catch { throw .boxwood(error) }
    }

    func commitBatch() throws(BenchError) {
        do { try box.commit() } catch { throw .boxwood(error) }
    }

    func index(collectionId: String, itemId: String, contents: String, tags: String) throws(BenchError) {
        do {
            try box.fullTextSet(table, collectionId: collectionId, itemId: itemId, contents: contents, tags: tags)
        } catch {
            throw .boxwood(error)
        }
    }

    func match(collectionId: String?, query: String, _ visit: (String) -> Void) throws(BenchError) {
        do {
            try box.fullTextMatch(table, collectionId: collectionId, query: query, tags: nil) { _, item in
                visit(item)
                return true
            }
        } catch {
            throw .boxwood(error)
        }
    }
}
