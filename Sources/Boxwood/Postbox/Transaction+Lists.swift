import BoxwoodStore
/// Preferences and ordered item lists.
extension Transaction {
    public func getPreferencesEntry(key: ValueBoxKey) throws -> (any PreferencesEntry)? { try tables.preferences.get(key) }

    /// Sets (nil: removes) the preferences entry `key`.
    public func setPreferencesEntry(key: ValueBoxKey, value: (any PreferencesEntry)?) throws {
        try tables.preferences.set(key, entry: value)
    }

    /// Replaces the entry `key` with `f(current)`.
    public func updatePreferencesEntry(key: ValueBoxKey, _ f: ((any PreferencesEntry)?) -> (any PreferencesEntry)?) throws {
        let table = try tables.preferences
        try table.set(key, entry: f(try table.get(key)))
    }

    public func getOrderedListItemIds(collectionId: Int32) throws -> [MemoryBuffer] {
        try tables.orderedItemLists.getItemIds(collectionId)
    }

    public func getOrderedListItems(collectionId: Int32) throws -> [OrderedItemListEntry] {
        try tables.orderedItemLists.getItems(collectionId)
    }

    public func getOrderedItemListItem(collectionId: Int32, itemId: MemoryBuffer) throws -> OrderedItemListEntry? {
        try tables.orderedItemLists.getItem(collectionId, itemId: itemId)
    }

    public func replaceOrderedItemListItems(collectionId: Int32, items: [OrderedItemListEntry]) throws {
        try tables.orderedItemLists.replaceItems(collectionId, items: items)
    }

    public func addOrMoveToFirstPositionOrderedItemListItem(collectionId: Int32, item: OrderedItemListEntry,
                                                            removeTailIfCountExceeds: Int? = nil) throws {
        try tables.orderedItemLists.addItemOrMoveToFirstPosition(collectionId, item: item, removeTailIfCountExceeds: removeTailIfCountExceeds)
    }

    @discardableResult
    public func removeOrderedItemListItem(collectionId: Int32, itemId: MemoryBuffer) throws -> Bool {
        try tables.orderedItemLists.removeItem(collectionId, itemId: itemId)
    }

    @discardableResult
    public func updateOrderedItemListItem(collectionId: Int32, itemId: MemoryBuffer, item: any OrderedItemListEntryContents) throws -> Bool {
        try tables.orderedItemLists.updateItem(collectionId, itemId: itemId, contents: item)
    }
}
