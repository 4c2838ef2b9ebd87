import BoxwoodStore
/// Table 6: media with an id, shared between the messages that carry it (Postbox's `MessageMediaTable`). Binary keys
/// `namespace(4) ‖ id(8)` (big-endian, 12 bytes) → one of two entries (integers little-endian):
///
/// - **message reference** — `1 ‖ peerId Int64 ‖ namespace Int32 ‖ id Int32 ‖ timestamp Int32`: exactly one message
///   carries the media, and keeps it embedded in its own value (reading the message needs no second lookup);
/// - **direct** — `0 ‖ length Int32 ‖ the root-encoded media ‖ referenceCount Int32`: two or more messages carry it,
///   each with a `SharedMediaReference` in its media list; the count says how many.
///
/// `MessageHistoryTable` keeps the entries in step with the messages (see `MessageMedia`); this table only reads and
/// writes them. Write-through.
final class MessageMediaTable: Table {
    static let tableId: Int32 = 6

    /// What the table holds for one media id.
    enum Entry {
        /// One message, at this index, carries the media embedded.
        case messageReference(MessageIndex)
        /// The media itself, carried by `referenceCount` (≥ 1) messages through references.
        case direct(any Media, referenceCount: Int32)
    }

    private let encoder = PostboxEncoder()

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: ValueBoxTable(id: Self.tableId, keyType: .binary), useCaches: useCaches)
    }

    private func key(_ id: MediaId) -> ValueBoxKey {
        var key = ValueBoxKey(length: 12)
        key.setInt32(0, value: id.namespace.rawValue)
        key.setInt64(4, value: id.id)
        return key
    }

    /// The entry of media `id`, nil when no message carries it. A value that does not parse, or a direct entry whose
    /// media type is not registered, is `corrupt` (a message would lose its media).
    func get(_ id: MediaId) throws -> Entry? {
        guard let buffer = try valueBox.get(table, key: key(id)) else { return nil }
        let corrupt = { (reason: String) in HistoryTableError.corrupt(table: Self.tableId, reason: "media \(id): \(reason)") }
        enum Parsed { case reference(MessageIndex), direct(MemoryBuffer?, Int32) }
        let parsed = try buffer.read(orThrow: corrupt("malformed entry")) { (reader) throws(ByteReadError) -> Parsed in
            let offset = reader.offset
            switch try reader.uint8() {
            case 1:
                let peerId = PeerId(try reader.int64())
                let namespace = MessageId.Namespace(try reader.int32())
                let messageId = try reader.int32()
                let timestamp = try reader.int32()
                try reader.requireEnd()
                return .reference(MessageIndex(id: MessageId(peerId: peerId, namespace: namespace, id: messageId), timestamp: timestamp))
            case 0:
                let length = try reader.int32()
                guard length >= 0 else { return .direct(nil, 0) }
                let bytes = MemoryBuffer(copying: try reader.bytes(Int(length)))
                let count = try reader.int32()
                try reader.requireEnd()
                return .direct(bytes, count)
            case let type:
                throw ByteReadError.undefinedByte(type, offset: offset)
            }
        }
        switch parsed {
        case let .reference(index):
            return .messageReference(index)
        case let .direct(bytes, count):
            guard let bytes else { throw corrupt("negative media length") }
            guard count >= 1 else { throw corrupt("reference count \(count)") }
            let object: any PostboxCoding
            do { object = try PostboxDecoder.decodeRoot(from: bytes) } catch { throw corrupt("\(error)") }
            guard let media = object as? any Media else { throw corrupt("holds a \(type(of: object)), not a Media") }
            return .direct(media, referenceCount: count)
        }
    }

    func set(_ id: MediaId, _ entry: Entry) throws {
        let value = ByteBuffer(capacity: 64)
        switch entry {
        case let .messageReference(index):
            value.append(UInt8(1))
            value.append(index.id.peerId.toInt64())
            value.append(index.id.namespace.rawValue)
            value.append(index.id.id)
            value.append(index.timestamp)
        case let .direct(media, count):
            encoder.reset()
            encoder.encodeRootObject(media)
            try encoder.throwIfEncodingFailed()
            value.append(UInt8(0))
            encoder.withBytes { bytes in
                value.append(Int32(bytes.count))
                value.append(bytes)
            }
            value.append(count)
        }
        try valueBox.set(table, key: key(id), value: value)
    }

    func remove(_ id: MediaId) throws {
        try valueBox.remove(table, key: key(id))
    }

    /// Every entry, in key order (for consistency checks and tests).
    func all() throws -> [(MediaId, Entry)] {
        var ids: [MediaId] = []
        try valueBox.scan(table, keys: { key in
            if key.length == 12 { ids.append(MediaId(namespace: .init(key.getInt32(0)), id: key.getInt64(4))) }
            return true
        })
        return try ids.compactMap { id in try get(id).map { (id, $0) } }
    }
}
