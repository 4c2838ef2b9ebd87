import BoxwoodStore
/// Table 12: messages by tag (Postbox's `MessageHistoryTagsTable`). Binary keys
/// `peerId(8) ‖ tag UInt32(4) ‖ namespace(4) ‖ timestamp(4) ‖ id(4)` (big-endian) → empty value, one entry per tag
/// bit of each message. Write-through.
final class MessageHistoryTagsTable: Table {
    static let tableId: Int32 = 12

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: ValueBoxTable(id: Self.tableId, keyType: .binary, compactValuesOnCreation: true), useCaches: useCaches)
    }

    private func prefix(peerId: PeerId, tag: MessageTags, namespace: MessageId.Namespace) -> ValueBoxKey {
        var key = ValueBoxKey(length: 16)
        key.setInt64(0, value: peerId.toInt64())
        key.setUInt32(8, value: tag.rawValue)
        key.setInt32(12, value: namespace.rawValue)
        return key
    }

    private func key(tag: MessageTags, index: MessageIndex) -> ValueBoxKey {
        var key = ValueBoxKey(length: 24)
        key.setInt64(0, value: index.id.peerId.toInt64())
        key.setUInt32(8, value: tag.rawValue)
        key.setInt32(12, value: index.id.namespace.rawValue)
        key.setInt32(16, value: index.timestamp)
        key.setInt32(20, value: index.id.id)
        return key
    }

    /// Adds an entry for every tag bit of `tags`.
    func add(tags: MessageTags, index: MessageIndex) throws {
        for tag in tags.singleTags {
            try valueBox.set(table, key: key(tag: tag, index: index), bytes: [])
        }
    }

    /// Removes the entries of every tag bit of `tags`.
    func remove(tags: MessageTags, index: MessageIndex) throws {
        for tag in tags.singleTags {
            try valueBox.remove(table, key: key(tag: tag, index: index))
        }
    }

    /// Up to `limit` (0: all) indices of messages carrying any bit of `tag` in the given namespaces, before or
    /// after `anchor` (nil: from the newest or the oldest), in `direction` order.
    func indices(peerId: PeerId, tag: MessageTags, namespaces: Set<MessageId.Namespace>, anchor: MessageIndex?,
                 direction: HistoryReadDirection, limit: Int) throws -> [MessageIndex] {
        var lists: [[MessageIndex]] = []
        for single in tag.singleTags {
            for namespace in namespaces.sorted() {
                let prefix = prefix(peerId: peerId, tag: single, namespace: namespace)
                let (start, end) = HistoryKeyRanges.bounds(prefix: prefix, namespace: namespace, anchor: anchor, direction: direction)
                var list: [MessageIndex] = []
                try valueBox.range(table, start: start, end: end, keys: { key in
                    if let index = HistoryKeyRanges.index(key: key, prefixLength: 16, peerId: peerId, namespace: namespace) {
                        list.append(index)
                    }
                    return true
                }, limit: limit)
                lists.append(list)
            }
        }
        var merged = HistoryKeyRanges.merge(lists, direction: direction, limit: 0)
        if tag.singleTags.count > 1 {
            var seen = Set<MessageIndex>()
            merged = merged.filter { seen.insert($0).inserted }
        }
        if limit > 0 && merged.count > limit { merged.removeLast(merged.count - limit) }
        return merged
    }
}
