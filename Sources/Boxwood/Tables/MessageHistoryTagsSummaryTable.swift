import BoxwoodStore
/// Table 44: per (tag bit, chat, namespace) the number of messages carrying the tag (Postbox's
/// `MessageHistoryTagsSummaryTable`). Binary keys `tag UInt32(4) ‖ peerId Int64(8) ‖ namespace Int32(4)` (big-endian,
/// 16 bytes) → `version Int32 LE ‖ count Int32 LE ‖ maxId Int32 LE` (12 bytes; a negative count is malformed).
///
/// Only the tags of ``SeedConfiguration/messageTagsWithSummary`` are counted; ``MessageHistoryTable`` keeps the
/// counts as messages are stored, removed and retagged (``addMessage(_:id:isNewlyAdded:)``,
/// ``removeMessage(_:)``), and the sync layer replaces them with the server's (``replace(_:count:maxId:)``).
/// Write-back: reads see this transaction's values, ``beforeCommit()`` writes them.
final class MessageHistoryTagsSummaryTable: Table {
    static let tableId: Int32 = 44
    static let descriptor = ValueBoxTable(id: tableId, keyType: .binary, compactValuesOnCreation: true)

    /// The tag bits counted.
    let summaryTags: MessageTags
    private var cache = WriteBackCache<MessageHistoryTagsSummaryKey, MessageHistoryTagNamespaceSummary>()

    /// The summaries changed in this transaction, with their new values.
    private(set) var updatedSummaries: [MessageHistoryTagsSummaryKey: MessageHistoryTagNamespaceSummary] = [:]

    init(valueBox: ValueBox, summaryTags: MessageTags, useCaches: Bool = true) {
        self.summaryTags = summaryTags
        super.init(valueBox: valueBox, table: Self.descriptor, useCaches: useCaches)
    }

    func resetChanges() {
        updatedSummaries.removeAll()
    }

    static func key(_ key: MessageHistoryTagsSummaryKey) -> ValueBoxKey {
        var result = ValueBoxKey(length: 16)
        result.setUInt32(0, value: key.tag.rawValue)
        result.setInt64(4, value: key.peerId.toInt64())
        result.setInt32(12, value: key.namespace.rawValue)
        return result
    }

    /// Decodes a stored value (12 bytes, count ≥ 0).
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(PostboxDecodingError) -> MessageHistoryTagNamespaceSummary {
        guard bytes.count == 12 else { throw .invalidLength(Int64(bytes.count), offset: 0) }
        let reader = ByteReader(bytes)
        let fields: (version: Int32, count: Int32, maxId: Int32)
        do throws(ByteReadError) {
            fields = (try reader.integer(at: 0), try reader.integer(at: 4), try reader.integer(at: 8))
        } catch {
            throw PostboxDecodingError(error)
        }
        guard fields.count >= 0 else { throw .invalidValue(key: "count", reason: "negative tag summary count \(fields.count)") }
        return MessageHistoryTagNamespaceSummary(version: fields.version, count: fields.count,
                                                 range: MessageHistoryTagNamespaceCountValidityRange(maxId: fields.maxId))
    }

    /// The summary of `key`, nil when none was ever stored.
    func get(_ key: MessageHistoryTagsSummaryKey) throws -> MessageHistoryTagNamespaceSummary? {
        if let known = cache.lookup(key) { return known }
        let summary = try valueBox.decodeValue(table, key: Self.key(key)) { (bytes) throws(PostboxDecodingError) in
            try Self.decode(bytes)
        }
        cache.remember(key, summary)
        return summary
    }

    private func set(_ key: MessageHistoryTagsSummaryKey, _ summary: MessageHistoryTagNamespaceSummary) throws {
        guard try get(key) != summary else { return }
        cache.set(key, summary)
        updatedSummaries[key] = summary
    }

    /// Counts a message of `id`'s chat and namespace now carrying `tag` (one bit). A newly added message
    /// (`isNewlyAdded`) whose id is at most the summary's `maxId` is already in the server's count and changes
    /// nothing; a tag added to a stored message by an update always counts. Without a stored summary, one is made
    /// with count 1, version 0 and maxId 0.
    func addMessage(_ tag: MessageTags, id: MessageId, isNewlyAdded: Bool) throws {
        let key = MessageHistoryTagsSummaryKey(tag: tag, peerId: id.peerId, namespace: id.namespace)
        if let current = try get(key) {
            if isNewlyAdded && id.id <= current.range.maxId { return }
            try set(key, current.withAddedCount(1))
        } else {
            try set(key, MessageHistoryTagNamespaceSummary(version: 0, count: 1, range: MessageHistoryTagNamespaceCountValidityRange(maxId: 0)))
        }
    }

    /// Uncounts a message of `id`'s chat and namespace no longer carrying `tag` (one bit): the count drops by one
    /// when it is above 0 (a summary the server set may not have counted it); nothing happens without a summary.
    func removeMessage(_ tag: MessageTags, id: MessageId) throws {
        let key = MessageHistoryTagsSummaryKey(tag: tag, peerId: id.peerId, namespace: id.namespace)
        guard let current = try get(key), current.count > 0 else { return }
        try set(key, current.withAddedCount(-1))
    }

    /// Replaces the summary of `key` with the server's `count` (clamped at 0) covering ids up to `maxId`, and bumps
    /// its version (Postbox's `replace`).
    func replace(_ key: MessageHistoryTagsSummaryKey, count: Int32, maxId: MessageId.Id) throws {
        let version = try get(key)?.version ?? 0
        let next = version == .max ? 1 : version + 1
        try set(key, MessageHistoryTagNamespaceSummary(version: next, count: max(0, count), range: MessageHistoryTagNamespaceCountValidityRange(maxId: maxId)))
    }

    override func clearMemoryCache() {
        cache.removeAll()
    }

    override func beforeCommit() throws {
        try cache.flush(keepValues: useCaches) { key, summary in
            guard let summary else { return }
            let value = ByteBuffer(capacity: 12)
            value.append(summary.version)
            value.append(summary.count)
            value.append(summary.range.maxId)
            try valueBox.set(table, key: Self.key(key), value: value)
        }
    }
}
