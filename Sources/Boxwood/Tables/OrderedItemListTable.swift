import BoxwoodStore
/// One item of an ordered item list.
public struct OrderedItemListEntry {
    /// The item's id, unique in its list (up to `ValueBox.maxKeySize − 4` bytes).
    public let id: MemoryBuffer
    public let contents: any OrderedItemListEntryContents

    public init(id: MemoryBuffer, contents: any OrderedItemListEntryContents) {
        self.id = id
        self.contents = contents
    }
}

/// A change of one ordered item list in a transaction.
public enum OrderedItemListOperation {
    /// The whole list was replaced by these items, in order.
    case replace([OrderedItemListEntry])
    /// The item was added at the front (or moved there and its contents replaced); then the list was cut to
    /// `removeTailIfCountExceeds` items when given.
    case addOrMoveToFirstPosition(OrderedItemListEntry, removeTailIfCountExceeds: Int?)
    /// The item with this id was removed.
    case remove(itemId: MemoryBuffer)
    /// The contents of the item with this id were replaced.
    case update(itemId: MemoryBuffer, contents: any OrderedItemListEntryContents)
}

/// Ordered lists of items (recent stickers, saved GIFs…) identified by an Int32 collection id. Two engine
/// tables, both binary:
///
/// - the order, table 38 (Postbox's OrderedItemList): collectionId Int32 BE ‖ position UInt32 BE → the item's
///   id bytes; positions are 0, 1, … n−1 with no gaps;
/// - the contents, table 37 (Postbox's OrderedItemListIndex): collectionId Int32 BE ‖ id bytes → the
///   root-encoded `OrderedItemListEntryContents` (a registered type or a ``CodableEntry``).
///
/// Write-through; every change is recorded per collection in ``operations``.
final class OrderedItemListTable: Table {
    static let tableId: Int32 = 38
    static let descriptor = ValueBoxTable(id: tableId, keyType: .binary)
    static let contentsTableId: Int32 = 37
    static let contentsDescriptor = ValueBoxTable(id: contentsTableId, keyType: .binary)

    var contentsTable: ValueBoxTable { Self.contentsDescriptor }
    private let encoder = PostboxEncoder()

    /// The changes of this transaction, per collection, in order.
    private(set) var operations: [Int32: [OrderedItemListOperation]] = [:]

    func resetChanges() {
        operations.removeAll()
    }

    /// Throws when the library's `CodableEntry` cannot be registered (an app type took its name).
    init(valueBox: ValueBox, useCaches: Bool = true) throws(PostboxTypeRegistrationError) {
        try LibraryCodingTypes.ensureRegistered()
        super.init(valueBox: valueBox, table: Self.descriptor, useCaches: useCaches)
    }

    // MARK: Keys

    private static func collectionPrefix(_ collectionId: Int32) -> ValueBoxKey {
        var key = ValueBoxKey(length: 4)
        key.setInt32(0, value: collectionId)
        return key
    }

    private static func positionKey(_ collectionId: Int32, _ position: Int) -> ValueBoxKey {
        var key = ValueBoxKey(length: 8)
        key.setInt32(0, value: collectionId)
        key.setUInt32(4, value: UInt32(position))
        return key
    }

    private static func contentsKey(_ collectionId: Int32, _ itemId: [UInt8]) throws -> ValueBoxKey {
        if itemId.count + 4 > ValueBox.maxKeySize {
            throw BoxwoodError.keyTooLarge(length: itemId.count + 4, limit: ValueBox.maxKeySize)
        }
        var key = ValueBoxKey(length: 4 + itemId.count)
        key.setInt32(0, value: collectionId)
        itemId.withUnsafeBytes { key.setBytes(4, $0) }
        return key
    }

    // MARK: Reads

    /// The ids of the list's items, in order.
    func getItemIds(_ collectionId: Int32) throws -> [MemoryBuffer] {
        try itemIds(collectionId).map { MemoryBuffer($0) }
    }

    private func itemIds(_ collectionId: Int32) throws -> [[UInt8]] {
        let prefix = Self.collectionPrefix(collectionId)
        var ids: [[UInt8]] = []
        try valueBox.withRange(table, start: prefix, end: prefix.paddedWithFF(5), limit: 0) { _, value in
            ids.append(Array(value))
            return true
        }
        return ids
    }

    /// The list's items, in order.
    func getItems(_ collectionId: Int32) throws -> [OrderedItemListEntry] {
        var result: [OrderedItemListEntry] = []
        for id in try itemIds(collectionId) {
            guard let contents = try contents(collectionId, id) else {
                throw PostboxDecodingError.missingField(key: "ordered item list \(collectionId): contents of item \(MemoryBuffer(id))")
            }
            result.append(OrderedItemListEntry(id: MemoryBuffer(id), contents: contents))
        }
        return result
    }

    /// One item of the list, nil when absent.
    func getItem(_ collectionId: Int32, itemId: MemoryBuffer) throws -> OrderedItemListEntry? {
        let id = itemId.makeArray()
        guard let contents = try contents(collectionId, id) else { return nil }
        return OrderedItemListEntry(id: MemoryBuffer(id), contents: contents)
    }

    private func contents(_ collectionId: Int32, _ id: [UInt8]) throws -> (any OrderedItemListEntryContents)? {
        try valueBox.rootObject(contentsTable, key: Self.contentsKey(collectionId, id), as: (any OrderedItemListEntryContents).self)
    }

    // MARK: Changes

    /// Makes `items` the list (a repeated id keeps its first occurrence).
    func replaceItems(_ collectionId: Int32, items: [OrderedItemListEntry]) throws {
        let old = try itemIds(collectionId)
        var seen = Set<[UInt8]>()
        var new: [[UInt8]] = []
        var kept: [OrderedItemListEntry] = []
        for item in items {
            let id = item.id.makeArray()
            if seen.insert(id).inserted {
                new.append(id)
                kept.append(item)
                try setContents(collectionId, id, item.contents)
            }
        }
        for id in old where !seen.contains(id) {
            try valueBox.remove(contentsTable, key: Self.contentsKey(collectionId, id))
        }
        try writeOrder(collectionId, old: old, new: new)
        operations[collectionId, default: []].append(.replace(kept))
    }

    /// Puts `item` at the front (moving it there if present, with its new contents), then removes items from
    /// the end while the list is longer than `removeTailIfCountExceeds`.
    func addItemOrMoveToFirstPosition(_ collectionId: Int32, item: OrderedItemListEntry, removeTailIfCountExceeds: Int? = nil) throws {
        let old = try itemIds(collectionId)
        let id = item.id.makeArray()
        var new = old.filter { $0 != id }
        new.insert(id, at: 0)
        try setContents(collectionId, id, item.contents)
        if let limit = removeTailIfCountExceeds {
            while new.count > max(limit, 0) {
                let removed = new.removeLast()
                try valueBox.remove(contentsTable, key: Self.contentsKey(collectionId, removed))
            }
        }
        try writeOrder(collectionId, old: old, new: new)
        operations[collectionId, default: []].append(.addOrMoveToFirstPosition(item, removeTailIfCountExceeds: removeTailIfCountExceeds))
    }

    /// Removes the item `itemId`; false when it was not in the list.
    @discardableResult
    func removeItem(_ collectionId: Int32, itemId: MemoryBuffer) throws -> Bool {
        let id = itemId.makeArray()
        let old = try itemIds(collectionId)
        guard old.contains(id) else { return false }
        try valueBox.remove(contentsTable, key: Self.contentsKey(collectionId, id))
        try writeOrder(collectionId, old: old, new: old.filter { $0 != id })
        operations[collectionId, default: []].append(.remove(itemId: MemoryBuffer(id)))
        return true
    }

    /// Replaces the contents of the item `itemId`, keeping its position; false when it is not in the list.
    @discardableResult
    func updateItem(_ collectionId: Int32, itemId: MemoryBuffer, contents: any OrderedItemListEntryContents) throws -> Bool {
        let id = itemId.makeArray()
        guard try valueBox.exists(contentsTable, key: Self.contentsKey(collectionId, id)) else { return false }
        try setContents(collectionId, id, contents)
        operations[collectionId, default: []].append(.update(itemId: MemoryBuffer(id), contents: contents))
        return true
    }

    private func setContents(_ collectionId: Int32, _ id: [UInt8], _ contents: any OrderedItemListEntryContents) throws {
        try valueBox.setRootObject(contentsTable, key: Self.contentsKey(collectionId, id), contents, encoder: encoder)
    }

    /// Rewrites the positions that differ between the `old` and `new` order.
    private func writeOrder(_ collectionId: Int32, old: [[UInt8]], new: [[UInt8]]) throws {
        for (position, id) in new.enumerated() where position >= old.count || old[position] != id {
            try id.withUnsafeBytes { bytes in
                try valueBox.set(table, key: Self.positionKey(collectionId, position), bytes: bytes)
            }
        }
        if old.count > new.count {
            for position in new.count..<old.count {
                try valueBox.remove(table, key: Self.positionKey(collectionId, position))
            }
        }
    }
}
