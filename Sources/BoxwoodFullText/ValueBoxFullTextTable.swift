@_spi(EngineTables) import BoxwoodStore
/// A full-text index: items (an item id, the collection it belongs to, a text and tags) that queries find by
/// the words of their text. See ``ValueBox/fullTextSet(_:collectionId:itemId:contents:tags:)``,
/// ``ValueBox/fullTextMatch(_:collectionId:query:tags:values:)`` and
/// ``ValueBox/fullTextRemove(_:itemId:secure:)``, and `docs/full-text-index.md`.
///
/// Like a ``ValueBoxTable`` it is only a descriptor: the index is created by its first write. Its data lives in
/// ordinary engine tables, so it commits, aborts and recovers together with everything else. Those tables have
/// **negative ids**, which are reserved for the engine: full-text table `id` uses engine tables
/// `-(id * 8 + k) - 1` for `k` in 0...7, so user tables (non-negative ids) never collide with them.
public struct ValueBoxFullTextTable: Sendable, Hashable {
    /// The index id: `0 <= id <` ``ValueBoxFullTextTable/idLimit``; other ids make every full-text call throw
    /// ``BoxwoodError/invalidFullTextTable(id:)``.
    public let id: Int32

    /// One more than the largest valid id (2^27, so that the eight engine tables of every id are distinct
    /// negative Int32s).
    public static let idLimit: Int32 = 1 << 27

    public init(id: Int32) {
        self.id = id
    }
}

/// The engine tables of one full-text table (`k` of the id formula). Layout 3 (see `FullTextLayout`).
enum FullTextPart: Int32, CaseIterable {
    /// `token ‖ 0x00 ‖ first docId` → a block of the token's postings (docIds and positions).
    case postings = 0
    /// `docId` → the document record (collection, item, then ASCII text or the tokens with positions).
    case documents = 1
    /// `itemId` → `docId` (a varint).
    case items = 2
    /// `u16 length ‖ collectionId ‖ first docId` → a block of the collection's docIds.
    case collections = 3
    /// `tagToken ‖ 0x00 ‖ first docId` → a block of the docIds carrying the tag.
    case tags = 4
    /// `layout` → the layout version (4 bytes BE).
    case meta = 5
}

/// The engine tables of a validated full-text table.
struct FullTextTables {
    let postings: ValueBoxTable
    let documents: ValueBoxTable
    let items: ValueBoxTable
    let collections: ValueBoxTable
    let tags: ValueBoxTable
    let meta: ValueBoxTable
    /// The full-text table id.
    let id: Int32

    /// The engine table of `part`.
    func table(_ part: FullTextPart) -> ValueBoxTable {
        switch part {
        case .postings: return postings
        case .documents: return documents
        case .items: return items
        case .collections: return collections
        case .tags: return tags
        case .meta: return meta
        }
    }

    /// The id of the index's transaction buffer (``ValueBox/transactionBuffer(_:)``).
    var bufferId: Int64 { Int64(id) }

    init(_ table: ValueBoxFullTextTable) throws(BoxwoodError) {
        guard table.id >= 0 && table.id < ValueBoxFullTextTable.idLimit else { throw .invalidFullTextTable(id: table.id) }
        func engineTable(_ part: FullTextPart) -> ValueBoxTable {
            ValueBoxTable(engineTableId: -(table.id * 8 + part.rawValue) - 1, keyType: .binary)
        }
        postings = engineTable(.postings)
        documents = engineTable(.documents)
        items = engineTable(.items)
        collections = engineTable(.collections)
        tags = engineTable(.tags)
        meta = engineTable(.meta)
        id = table.id
    }
}
