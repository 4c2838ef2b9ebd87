import BoxwoodFullText
import BoxwoodStore
/// Table 41: message text search (Postbox's `MessageHistoryTextIndexTable`), on the engine's full-text index
/// (`docs/full-text-index.md`). One item per message with non-empty text: collection id `"p<peer>"`, item id
/// `"p<peer>a<namespace>b<id>"` (the peer as the unsigned decimal of its packed Int64), tags `"t<bit>"` for each tag
/// bit of the message (space-separated). Write-through; removal is not secure (`secure: false`).
final class MessageHistoryTextIndexTable {
    static let tableId: Int32 = 41

    let valueBox: ValueBox
    let table = ValueBoxFullTextTable(id: MessageHistoryTextIndexTable.tableId)

    init(valueBox: ValueBox) {
        self.valueBox = valueBox
    }

    static func collectionId(_ peerId: PeerId) -> String {
        "p\(UInt64(bitPattern: peerId.toInt64()))"
    }

    static func itemId(_ id: MessageId) -> String {
        "p\(UInt64(bitPattern: id.peerId.toInt64()))a\(id.namespace)b\(id.id)"
    }

    static func tags(_ tags: MessageTags) -> String {
        tags.singleTags.map { "t\($0.rawValue)" }.joined(separator: " ")
    }

    /// Parses an item id back into a message id (nil for anything else).
    static func messageId(itemId: String) -> MessageId? {
        guard itemId.hasPrefix("p") else { return nil }
        let body = itemId.dropFirst()
        guard let a = body.firstIndex(of: "a"), let b = body[a...].firstIndex(of: "b") else { return nil }
        guard let peer = UInt64(body[..<a]),
              let namespace = Int32(body[body.index(after: a)..<b]),
              let id = Int32(body[body.index(after: b)...]) else { return nil }
        return MessageId(peerId: PeerId(Int64(bitPattern: peer)), namespace: MessageId.Namespace(namespace), id: id)
    }

    func add(id: MessageId, text: String, tags: MessageTags) throws {
        try valueBox.fullTextSet(table, collectionId: Self.collectionId(id.peerId), itemId: Self.itemId(id), contents: text, tags: Self.tags(tags))
    }

    /// Replaces the tags of message `id`'s entry, keeping its text (``ValueBox/fullTextUpdateTags(_:itemId:tags:)``);
    /// false when the message is not indexed.
    func updateTags(id: MessageId, tags: MessageTags) throws -> Bool {
        try valueBox.fullTextUpdateTags(table, itemId: Self.itemId(id), tags: Self.tags(tags))
    }

    func remove(id: MessageId) throws {
        try valueBox.fullTextRemove(table, itemId: Self.itemId(id), secure: false)
    }

    /// Postbox's query form: every character that is not a letter or digit becomes a space, and the last word is
    /// a prefix (`*` appended). Empty when nothing searchable remains.
    static func sanitizedQuery(_ text: String) -> String {
        let words = String(text.unicodeScalars.map { $0.properties.isAlphabetic || $0.properties.numericType != nil ? Character($0) : " " })
        let trimmed = words.split(separator: " ").joined(separator: " ")
        return trimmed.isEmpty ? "" : trimmed + "*"
    }

    /// The ids of the messages whose text matches `query` (Postbox's sanitised form, see
    /// ``sanitizedQuery(_:)``), in `peerId`'s chat when given, carrying every bit of `tags` when given. Newest
    /// indexed first.
    func search(_ query: String, peerId: PeerId?, tags: MessageTags?) throws -> [MessageId] {
        let sanitized = Self.sanitizedQuery(query)
        if sanitized.isEmpty { return [] }
        var result: [MessageId] = []
        let tagString = tags.flatMap { $0.isEmpty ? nil : Self.tags($0) }
        try valueBox.fullTextMatch(table, collectionId: peerId.map(Self.collectionId), query: sanitized, tags: tagString) { _, itemId in
            if let id = Self.messageId(itemId: itemId) { result.append(id) }
            return true
        }
        return result
    }
}
