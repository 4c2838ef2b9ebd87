@_spi(EngineTables) import BoxwoodStore
/// The postings, tag entries and collection entries of the documents indexed in the open transaction, kept in
/// memory and written into their posting-list blocks in one go: at commit (the engine flushes every
/// ``TransactionBuffer``), before a query or a removal reads the lists, or when the buffer grows large. One
/// list update per touched list and transaction, instead of one B+tree write per posting.
///
/// Invariant (kept by `ValueBox.fullTextSet`, which flushes before it removes anything, and by
/// `nextFullTextDocId`): every buffered docId is larger than every docId in the lists' blocks, so a flush only
/// appends to each list's last block.
final class FullTextPendingLists: TransactionBuffer {
    let tables: FullTextTables
    /// Keys of the buffered entries back to back (`part ‖ list prefix`), and the entries' positions back to back.
    private var keyBytes: [UInt8] = []
    private var positionBytes: [UInt8] = []
    private var entries: [Entry] = []

    private struct Entry {
        var keyStart: Int32
        var keyLength: Int32
        var positionsStart: Int32
        var positionsLength: Int32
        var docId: UInt64
    }

    /// Flushing starts by itself past this many buffered bytes (bounds the memory of a huge transaction).
    static let flushBytes = 16 << 20

    init(tables: FullTextTables) {
        self.tables = tables
    }

    var isEmpty: Bool { entries.isEmpty }

    /// Buffers one entry of list `prefix` of engine table `part` (`positions`: encoded by `FullTextPositions`,
    /// empty for tags and collections).
    func add(_ part: FullTextPart, prefix: UnsafeRawBufferPointer, docId: UInt64, positions: UnsafeRawBufferPointer) {
        let keyStart = keyBytes.count
        keyBytes.append(UInt8(part.rawValue))
        keyBytes.append(contentsOf: prefix)
        let positionsStart = positionBytes.count
        positionBytes.append(contentsOf: positions)
        entries.append(Entry(keyStart: Int32(keyStart), keyLength: Int32(keyBytes.count - keyStart),
                             positionsStart: Int32(positionsStart), positionsLength: Int32(positions.count), docId: docId))
    }

    /// Forgets every buffered entry (the index is being cleared).
    func discard() {
        entries = []
        keyBytes = []
        positionBytes = []
    }

    /// True when the buffer is large enough to be flushed now.
    var isLarge: Bool { keyBytes.count + positionBytes.count + entries.count * MemoryLayout<Entry>.stride >= Self.flushBytes }

    /// Writes every buffered entry into its list (one `appendToFullTextList` per list) and empties the buffer.
    func flush(into box: ValueBox) throws(BoxwoodError) {
        if entries.isEmpty { return }
        let keys = keyBytes, positions = positionBytes
        var sorted = entries
        entries = []
        keyBytes = []
        positionBytes = []
        try withBytes(keys) { (keys) throws(BoxwoodError) in
            try withBytes(positions) { (positions) throws(BoxwoodError) in
                func key(_ e: Entry) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: keys[Int(e.keyStart)..<Int(e.keyStart + e.keyLength)])
                }
                // By list, then docId (entries of one list were added in docId order; the sort keeps it explicit).
                sorted.sort { a, b in
                    let order = compareBytes(key(a), key(b))
                    return order != 0 ? order < 0 : a.docId < b.docId
                }
                var start = 0
                while start < sorted.count {
                    let listKey = key(sorted[start])
                    var end = start + 1
                    while end < sorted.count && compareBytes(key(sorted[end]), listKey) == 0 { end += 1 }
                    guard let part = FullTextPart(rawValue: Int32(listKey[0])) else { preconditionFailure("buffered an unknown part") }
                    let run = sorted[start..<end]
                    try box.appendToFullTextList(tables.table(part), prefix: UnsafeRawBufferPointer(rebasing: listKey[1...]),
                                                 hasPositions: part == .postings, count: run.count) { (i: Int) in
                        let e = run[run.startIndex + i]
                        return (e.docId, UnsafeRawBufferPointer(rebasing: positions[Int(e.positionsStart)..<Int(e.positionsStart + e.positionsLength)]))
                    }
                    start = end
                }
            }
        }
    }
}

extension ValueBox {
    /// The open transaction's buffer of full-text table `tables`, made (after checking the index's layout,
    /// and recording it for a new index) on first use in the transaction.
    func fullTextPending(_ tables: FullTextTables) throws(BoxwoodError) -> FullTextPendingLists {
        if let existing = transactionBuffer(tables.bufferId) as? FullTextPendingLists { return existing }
        try checkFullTextLayout(tables, forWriting: true)
        let buffer = FullTextPendingLists(tables: tables)
        try setTransactionBuffer(tables.bufferId, buffer)
        return buffer
    }
}
