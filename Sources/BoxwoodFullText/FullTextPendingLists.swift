@_spi(EngineTables) import BoxwoodStore
/// The list changes of the open transaction's full-text writes, kept in memory and written into their
/// posting-list blocks in one go: at commit (the engine flushes every ``TransactionBuffer``), before a query reads
/// the lists, or when the buffer grows large. One update per touched list and transaction, instead of one B+tree
/// write per posting (and one block rewrite per removed posting).
///
/// Two kinds of change, both grouped by list as they come (an open-addressing hash table over the list keys, each
/// list two chains of entries), so a flush sorts the lists and each list's edits, not the appends:
/// - **appends**: the entries of documents indexed in this transaction (`add`);
/// - **edits**: an entry of an existing document made absent (its removal) or present (a tag added by
///   `fullTextUpdateTags`) in one list (`edit`), for documents indexed before or in this transaction.
///
/// Invariants (kept by `ValueBox.fullTextSet`, `fullTextRemove` and `fullTextUpdateTags`, which look up
/// `nextDocId` before they remove or edit anything, and by `nextDocId`, which only grows): every appended docId
/// is larger than every docId in the lists' blocks and than every docId used before the transaction, and the
/// appends of one list are buffered in ascending docId order, so a flush only appends them to each list's last
/// block; the edits of one docId in one list are buffered in the order they were made (the last one decides), and
/// the first one says whether the entry is expected to be there (a removal expects it, an addition does not): a
/// flush checks that and reports a mismatch as corruption.
/// Used by one value box's transaction at a time (a value box is not shared between threads during a call), so
/// its properties skip the dynamic exclusivity checks.
final class FullTextPendingLists: TransactionBuffer {
    let tables: FullTextTables
    /// The docId the next new document gets (nil until a write looked it up in this transaction): one more than
    /// the largest docId in use, then counting up. It stays valid after removals: ids only need to be above every
    /// live one and every one whose removal is still buffered (so a removal looks it up before it deletes the
    /// record that may hold the largest id).
    @exclusivity(unchecked) var nextDocId: UInt64? = nil

    /// The list keys (`part ‖ list prefix`) back to back.
    @exclusivity(unchecked) private var keyBytes: [UInt8] = []
    @exclusivity(unchecked) private var lists: [List] = []
    /// The hash table: `lists` index + 1, 0 for an empty slot; its size is a power of two, at most half full.
    @exclusivity(unchecked) private var slots: [Int32] = Array(repeating: 0, count: 1024)
    @exclusivity(unchecked) private var entries: [Entry] = []
    /// The entries' encoded positions back to back.
    @exclusivity(unchecked) private var positionBytes: [UInt8] = []

    private struct List {
        var keyStart: Int32
        var keyLength: Int32
        var hash: UInt64
        /// The chain of appends (-1 when there are none).
        var first: Int32
        var last: Int32
        /// The chain of edits (-1 when there are none).
        var editFirst: Int32 = -1
        var editLast: Int32 = -1
    }

    /// What a buffered entry does.
    enum Kind: UInt8 {
        /// A new document's entry (above every docId in the list).
        case append
        /// Makes the document's entry present, with the entry's positions.
        case present
        /// Makes the document's entry absent.
        case absent
        /// Makes it absent, and the block that held it is removed securely (`secure: true`).
        case absentSecure
    }

    private struct Entry {
        var docId: UInt64
        var positionsStart: Int32
        var positionsLength: Int32
        /// The next entry of the same list and chain, -1 at the end.
        var next: Int32
        var kind: Kind
    }

    /// Flushing starts by itself past this many buffered bytes (bounds the memory of a huge transaction).
    static let flushBytes = 16 << 20

    init(tables: FullTextTables) {
        self.tables = tables
    }

    var isEmpty: Bool { entries.isEmpty }

    /// True when the buffer is large enough to be flushed now.
    var isLarge: Bool {
        keyBytes.count + positionBytes.count + entries.count * MemoryLayout<Entry>.stride + lists.count * MemoryLayout<List>.stride >= Self.flushBytes
    }

    /// Buffers one append to list `prefix` of engine table `part` (`positions`: encoded by `FullTextPositions`,
    /// empty for tags and collections). `docId` must be above every docId buffered for that list and every docId
    /// in its blocks.
    func add(_ part: FullTextPart, prefix: UnsafeRawBufferPointer, docId: UInt64, positions: UnsafeRawBufferPointer) {
        buffer(part, prefix: prefix, docId: docId, positions: positions, kind: .append)
    }

    /// Buffers an edit of document `docId`'s entry in list `prefix` of engine table `part`: `present` makes it
    /// present with `positions` (a tag added), otherwise absent (removed; `secure` as in `ValueBox.remove`).
    /// Any docId below `nextDocId`; the first edit of a docId in a list expects the entry to be there exactly when
    /// it removes it.
    func edit(_ part: FullTextPart, prefix: UnsafeRawBufferPointer, docId: UInt64, present: Bool,
              positions: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0), secure: Bool = false) {
        buffer(part, prefix: prefix, docId: docId, positions: present ? positions : UnsafeRawBufferPointer(start: nil, count: 0),
               kind: present ? .present : secure ? .absentSecure : .absent)
    }

    private func buffer(_ part: FullTextPart, prefix: UnsafeRawBufferPointer, docId: UInt64, positions: UnsafeRawBufferPointer, kind: Kind) {
        let index = listIndex(part, prefix)
        let entry = Int32(entries.count)
        entries.append(Entry(docId: docId, positionsStart: Int32(positionBytes.count), positionsLength: Int32(positions.count), next: -1, kind: kind))
        positionBytes.append(contentsOf: positions)
        if kind == .append {
            if lists[index].first < 0 { lists[index].first = entry } else { entries[Int(lists[index].last)].next = entry }
            lists[index].last = entry
        } else {
            if lists[index].editFirst < 0 { lists[index].editFirst = entry } else { entries[Int(lists[index].editLast)].next = entry }
            lists[index].editLast = entry
        }
    }

    /// The index in `lists` of list `part ‖ prefix`, added (without entries) when it is new.
    private func listIndex(_ part: FullTextPart, _ prefix: UnsafeRawBufferPointer) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(part.rawValue)
        for byte in prefix { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] != 0 {
            let index = Int(slots[slot] - 1)
            if lists[index].hash == hash && Int(lists[index].keyLength) == prefix.count + 1 && matches(lists[index], part, prefix) {
                return index
            }
            slot = (slot + 1) & mask
        }
        let keyStart = keyBytes.count
        keyBytes.append(UInt8(part.rawValue))
        keyBytes.append(contentsOf: prefix)
        lists.append(List(keyStart: Int32(keyStart), keyLength: Int32(prefix.count + 1), hash: hash, first: -1, last: -1))
        slots[slot] = Int32(lists.count)
        let index = lists.count - 1
        if lists.count * 2 > slots.count { rehash(size: slots.count * 2) }
        return index
    }

    /// True when list `list` has key `part ‖ prefix` (the lengths are equal).
    private func matches(_ list: List, _ part: FullTextPart, _ prefix: UnsafeRawBufferPointer) -> Bool {
        keyBytes.withUnsafeBytes { keys in
            keys[Int(list.keyStart)] == UInt8(part.rawValue)
                && compareBytes(UnsafeRawBufferPointer(rebasing: keys[Int(list.keyStart + 1)..<Int(list.keyStart + list.keyLength)]), prefix) == 0
        }
    }

    private func rehash(size: Int) {
        slots = Array(repeating: 0, count: size)
        let mask = size - 1
        for (index, list) in lists.enumerated() {
            var slot = Int(truncatingIfNeeded: list.hash) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(index + 1)
        }
    }

    /// Forgets every buffered entry (and the next docId: the index is being cleared).
    func discard() {
        keyBytes = []
        lists = []
        slots = Array(repeating: 0, count: 1024)
        entries = []
        positionBytes = []
        nextDocId = nil
    }

    /// The error of a flush that failed part way: some lists got their entries and the rest are lost, so every
    /// later flush (the commit's included) throws it again; only an abort gets rid of the transaction.
    @exclusivity(unchecked) private var failure: BoxwoodError? = nil

    /// Writes every buffered change into its list (in key order: one `appendToFullTextList` per list with only
    /// appends, one `editFullTextList` per list with edits) and empties the buffer.
    func flush(into box: ValueBox) throws(BoxwoodError) {
        if let failure { throw failure }
        do {
            try write(into: box)
        } catch {
            failure = error
            throw error
        }
    }

    private func write(into box: ValueBox) throws(BoxwoodError) {
        if entries.isEmpty { return }
        let keys = keyBytes, lists = self.lists, entries = self.entries, positions = positionBytes
        let nextDocId = self.nextDocId
        discard()
        self.nextDocId = nextDocId
        try withBytes(keys) { (keys) throws(BoxwoodError) in
            try withBytes(positions) { (positions) throws(BoxwoodError) in
                func key(_ list: List) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: keys[Int(list.keyStart)..<Int(list.keyStart + list.keyLength)])
                }
                func positionsOf(_ e: Entry) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: positions[Int(e.positionsStart)..<Int(e.positionsStart + e.positionsLength)])
                }
                let order = lists.indices.sorted { compareBytes(key(lists[$0]), key(lists[$1])) < 0 }
                var chain: [Int32] = []
                var edits: [FullTextListEdit] = []
                for index in order {
                    let list = lists[index]
                    let listKey = key(list)
                    // Each key starts with a `FullTextPart` raw value written by `listIndex`.
                    guard let part = FullTextPart(rawValue: Int32(listKey[0])) else { continue }
                    let table = tables.table(part), prefix = UnsafeRawBufferPointer(rebasing: listKey[1...])
                    chain.removeAll(keepingCapacity: true)
                    var entry = list.first
                    while entry >= 0 {
                        chain.append(entry)
                        entry = entries[Int(entry)].next
                    }
                    if list.editFirst < 0 {
                        try box.appendToFullTextList(table, prefix: prefix, hasPositions: part == .postings, count: chain.count) { (i: Int) in
                            let e = entries[Int(chain[i])]
                            return (e.docId, positionsOf(e))
                        }
                        continue
                    }
                    edits.removeAll(keepingCapacity: true)
                    entry = list.editFirst
                    while entry >= 0 {
                        let e = entries[Int(entry)]
                        edits.append(FullTextListEdit(docId: e.docId, present: e.kind == .present, expectPresent: e.kind != .present,
                                                      secure: e.kind == .absentSecure, positions: positionsOf(e)))
                        entry = e.next
                    }
                    let appends = chain.map { (entries[Int($0)].docId, positionsOf(entries[Int($0)])) }
                    try box.editFullTextList(table, prefix: prefix, hasPositions: part == .postings,
                                             edits: FullTextListEdit.resolve(edits), appends: appends)
                }
            }
        }
    }
}

/// The net change of one document's entry in one list, from the edits buffered for it (`FullTextPendingLists`).
struct FullTextListEdit {
    var docId: UInt64
    /// Whether the entry is there afterwards (with `positions`).
    var present: Bool
    /// Whether the entry was there before the transaction's edits (a removal came first).
    var expectPresent: Bool
    /// Whether a removal among them was secure.
    var secure: Bool
    var positions: UnsafeRawBufferPointer

    /// One edit per docId, ascending: the edits of a docId in the order given combine into the first one's
    /// expectation, the last one's outcome and any one's `secure`.
    static func resolve(_ edits: [FullTextListEdit]) -> [FullTextListEdit] {
        if edits.count == 1 { return edits }
        // Stable: equal docIds keep their order.
        let order = edits.indices.sorted { (edits[$0].docId, $0) < (edits[$1].docId, $1) }
        var result: [FullTextListEdit] = []
        result.reserveCapacity(edits.count)
        for i in order {
            let edit = edits[i]
            if let last = result.last, last.docId == edit.docId {
                result[result.count - 1].present = edit.present
                result[result.count - 1].positions = edit.positions
                result[result.count - 1].secure = last.secure || edit.secure
            } else {
                result.append(edit)
            }
        }
        return result
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
