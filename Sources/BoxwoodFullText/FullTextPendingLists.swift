@_spi(EngineTables) import BoxwoodStore
/// The postings, tag entries and collection entries of the documents indexed in the open transaction, kept in
/// memory and written into their posting-list blocks in one go: at commit (the engine flushes every
/// ``TransactionBuffer``), before a query or a removal reads the lists, or when the buffer grows large. One
/// list update per touched list and transaction, instead of one B+tree write per posting.
///
/// Entries are grouped by list as they come (an open-addressing hash table over the list keys, each list a
/// chain of entries), so a flush sorts the lists, not the entries.
///
/// Invariant (kept by `ValueBox.fullTextSet` and `fullTextRemove`, which flush before they remove anything, and by
/// `nextDocId`, which only grows): every buffered docId is larger than every docId in the lists' blocks, and the
/// entries of one list are buffered in ascending docId order, so a flush only appends to each list's last block.
/// Used by one value box's transaction at a time (a value box is not shared between threads during a call), so
/// its properties skip the dynamic exclusivity checks.
final class FullTextPendingLists: TransactionBuffer {
    let tables: FullTextTables
    /// The docId the next new document gets (nil until `fullTextSet` looked it up in this transaction): one
    /// more than the largest docId in use, then counting up. It stays valid after removals (ids only need to
    /// be above every live one).
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
        var first: Int32
        var last: Int32
    }

    private struct Entry {
        var docId: UInt64
        var positionsStart: Int32
        var positionsLength: Int32
        /// The next entry of the same list, -1 at the end.
        var next: Int32
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

    /// Buffers one entry of list `prefix` of engine table `part` (`positions`: encoded by `FullTextPositions`,
    /// empty for tags and collections). `docId` must be above every docId buffered for that list.
    func add(_ part: FullTextPart, prefix: UnsafeRawBufferPointer, docId: UInt64, positions: UnsafeRawBufferPointer) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(part.rawValue)
        for byte in prefix { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        let entry = Int32(entries.count)
        entries.append(Entry(docId: docId, positionsStart: Int32(positionBytes.count), positionsLength: Int32(positions.count), next: -1))
        positionBytes.append(contentsOf: positions)
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] != 0 {
            let index = Int(slots[slot] - 1)
            if lists[index].hash == hash && Int(lists[index].keyLength) == prefix.count + 1 && matches(lists[index], part, prefix) {
                entries[Int(lists[index].last)].next = entry
                lists[index].last = entry
                return
            }
            slot = (slot + 1) & mask
        }
        let keyStart = keyBytes.count
        keyBytes.append(UInt8(part.rawValue))
        keyBytes.append(contentsOf: prefix)
        lists.append(List(keyStart: Int32(keyStart), keyLength: Int32(prefix.count + 1), hash: hash, first: entry, last: entry))
        slots[slot] = Int32(lists.count)
        if lists.count * 2 > slots.count { rehash(size: slots.count * 2) }
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

    /// Writes every buffered entry into its list (one `appendToFullTextList` per list, in key order) and
    /// empties the buffer.
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
                let order = lists.indices.sorted { compareBytes(key(lists[$0]), key(lists[$1])) < 0 }
                var chain: [Int32] = []
                for index in order {
                    let list = lists[index]
                    let listKey = key(list)
                    // Each key starts with a `FullTextPart` raw value written by `add`.
                    guard let part = FullTextPart(rawValue: Int32(listKey[0])) else { continue }
                    chain.removeAll(keepingCapacity: true)
                    var entry = list.first
                    while entry >= 0 {
                        chain.append(entry)
                        entry = entries[Int(entry)].next
                    }
                    try box.appendToFullTextList(tables.table(part), prefix: UnsafeRawBufferPointer(rebasing: listKey[1...]),
                                                 hasPositions: part == .postings, count: chain.count) { (i: Int) in
                        let e = entries[Int(chain[i])]
                        return (e.docId, UnsafeRawBufferPointer(rebasing: positions[Int(e.positionsStart)..<Int(e.positionsStart + e.positionsLength)]))
                    }
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
