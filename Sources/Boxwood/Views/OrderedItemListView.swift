/// The items of one ordered item list, in order (Postbox's `OrderedItemListView`).
/// (`@unchecked Sendable`: the items are immutable.)
public struct OrderedItemListView: PostboxView, @unchecked Sendable {
    public let collectionId: Int32
    public let items: [OrderedItemListEntry]
}

final class MutableOrderedItemListView: MutablePostboxView {
    let collectionId: Int32
    private var items: [OrderedItemListEntry]

    init(collectionId: Int32, tables: PostboxTables) throws {
        self.collectionId = collectionId
        items = try tables.orderedItemLists.getItems(collectionId)
    }

    /// Applies the list's operations to the items held (no table reads), as the table applied them.
    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        guard let operations = changes.orderedItemListOperations[collectionId], !operations.isEmpty else { return false }
        let before = items
        for operation in operations {
            switch operation {
            case let .replace(newItems):
                items = newItems
            case let .addOrMoveToFirstPosition(item, limit):
                items.removeAll { $0.id == item.id }
                items.insert(item, at: 0)
                if let limit, items.count > max(limit, 0) { items.removeLast(items.count - max(limit, 0)) }
            case let .remove(itemId):
                items.removeAll { $0.id == itemId }
            case let .update(itemId, contents):
                if let position = items.firstIndex(where: { $0.id == itemId }) {
                    items[position] = OrderedItemListEntry(id: items[position].id, contents: contents)
                }
            }
        }
        return !Self.same(before, items)
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let fresh = try tables.orderedItemLists.getItems(collectionId)
        defer { items = fresh }
        return !Self.same(fresh, items)
    }

    private static func same(_ a: [OrderedItemListEntry], _ b: [OrderedItemListEntry]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.id == $1.id && $0.contents.isEqual(to: $1.contents) }
    }

    func immutableView() -> any PostboxView { OrderedItemListView(collectionId: collectionId, items: items) }
}
