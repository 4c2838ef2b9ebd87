import Testing
@testable import Boxwood

/// The bytes a message is stored as, field by field: a ``StoreMessage`` object and a table-7 value
/// (``IntermediateMessage``) share one field coder, and these pin the layout each of them had before that: the fields
/// in the order of `docs/postbox-tables-history.md`, the timestamp only in the object, empty text only in the
/// object, absent and empty optional fields left out.
@Suite struct MessageFieldsLayoutTests {
    private let peer = PeerId(namespace: PeerId.Namespace(1), id: PeerId.Id(-42))
    private var messageId: MessageId { MessageId(peerId: peer, namespace: 2, id: 3) }

    private func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
    private func header(_ key: String, _ type: PostboxFieldType) -> [UInt8] { [UInt8(key.utf8.count)] + Array(key.utf8) + [type.rawValue] }
    private func field(_ key: String, int32 value: Int32) -> [UInt8] { header(key, .int32) + littleEndian(value) }
    private func field(_ key: String, int64 value: Int64) -> [UInt8] { header(key, .int64) + littleEndian(value) }
    private func field(_ key: String, string value: String) -> [UInt8] {
        header(key, .string) + littleEndian(Int32(value.utf8.count)) + Array(value.utf8)
    }

    private var full: StoreMessage {
        StoreMessage(id: .id(messageId), globallyUniqueId: 7, groupingKey: 8, threadId: 9, timestamp: 10, flags: [.incoming],
                     tags: MessageTags(rawValue: 4), globalTags: GlobalMessageTags(rawValue: 5), localTags: LocalMessageTags(rawValue: 6),
                     authorId: PeerId(11), text: "hi")
    }
    private var bare: StoreMessage { StoreMessage(id: .partial(peer, 2), timestamp: 10, authorId: nil, text: "") }

    /// The fields both layouts write after their own leading ones (the object's timestamp in between).
    private func sharedFields(timestamp: [UInt8]) -> [UInt8] {
        field("u", int64: 7) + field("g", int64: 8) + field("h", int64: 9) + timestamp
            + field("f", int32: Int32(bitPattern: MessageFlags.incoming.rawValue)) + field("tg", int32: 4) + field("gt", int32: 5)
            + field("lt", int32: 6) + field("a", int64: 11) + field("x", string: "hi")
    }

    private func encoded(_ encode: (PostboxEncoder) -> Void) throws -> [UInt8] {
        let encoder = PostboxEncoder()
        encode(encoder)
        return try encoder.makeArray()
    }

    @Test func storeMessageObjectLayout() throws {
        let id = field("p", int64: peer.toInt64()) + field("n", int32: 2)
        #expect(try encoded(full.encode) == id + field("i", int32: 3) + sharedFields(timestamp: field("t", int32: 10)))
        #expect(try encoded(bare.encode) == id + field("t", int32: 10) + field("x", string: ""))
    }

    @Test func historyValueLayout() throws {
        let stored = IntermediateMessage(stableId: 21, stableVersion: 22, id: messageId, message: full)
        let stable = field("s", int32: 21) + field("v", int32: 22)
        #expect(try encoded(stored.encode) == stable + sharedFields(timestamp: []))
        let storedBare = IntermediateMessage(stableId: 21, stableVersion: 22, id: messageId, message: bare)
        #expect(try encoded(storedBare.encode) == stable)
    }

    @Test func historyValueRoundTrips() throws {
        try registerTestTypes()
        let message = sampleStoreMessage()
        guard let index = message.index else { Issue.record("sample message has no index"); return }
        let stored = IntermediateMessage(stableId: 1, stableVersion: 2, id: index.id, message: message)
        let encoder = PostboxEncoder()
        stored.encode(encoder)
        let decoded = try encoder.withBytes { (bytes) throws(PostboxDecodingError) in
            try PostboxDecoder.withDecoder(over: bytes) { (decoder) throws(PostboxDecodingError) in
                try IntermediateMessage(index: index, decoder: decoder)
            }
        }
        #expect(decoded.stableId == 1 && decoded.stableVersion == 2 && decoded.index == index)
        #expect(storeMessagesEqual(decoded.storeMessage, message))
    }
}
