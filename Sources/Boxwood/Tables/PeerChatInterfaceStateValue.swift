import BoxwoodStore
/// The stored value of a ``StoredPeerChatInterfaceState`` (table 67), little-endian:
///
/// ```
/// format UInt8 = 1
/// flags UInt8: 0x01 overrideChatTimestamp, 0x02 historyScrollMessageIndex, 0x04 chatListEmbeddedState
/// [0x01] overrideChatTimestamp Int32
/// [0x02] historyScrollMessageIndex: peerId Int64, namespace Int32, id Int32, timestamp Int32
/// associatedMessageIds: count Int32, then each peerId Int64, namespace Int32, id Int32
/// data: length Int32, then the bytes
/// [0x04] chatListEmbeddedState: timestamp Int32, text length Int32, then the text's UTF-8 bytes
/// ```
///
/// Anything else — another format byte, an undefined flag bit, a negative or overlong length, text that is not
/// UTF-8, bytes after the end — is malformed and decodes to a ``PostboxDecodingError``.
enum PeerChatInterfaceStateValue {
    static let format: UInt8 = 1
    private static let overrideFlag: UInt8 = 0x01
    private static let scrollFlag: UInt8 = 0x02
    private static let embeddedFlag: UInt8 = 0x04

    static func encode(_ state: StoredPeerChatInterfaceState) -> ByteBuffer {
        let value = ByteBuffer(capacity: 64 + state.data.count)
        value.append(format)
        var flags: UInt8 = 0
        if state.overrideChatTimestamp != nil { flags |= overrideFlag }
        if state.historyScrollMessageIndex != nil { flags |= scrollFlag }
        if state.chatListEmbeddedState != nil { flags |= embeddedFlag }
        value.append(flags)
        if let timestamp = state.overrideChatTimestamp { value.append(timestamp) }
        if let index = state.historyScrollMessageIndex {
            append(index.id, to: value)
            value.append(index.timestamp)
        }
        value.append(Int32(state.associatedMessageIds.count))
        for id in state.associatedMessageIds { append(id, to: value) }
        value.append(Int32(state.data.count))
        state.data.withUnsafeBytes { value.append($0) }
        if let embedded = state.chatListEmbeddedState {
            value.append(embedded.timestamp)
            let text = Array(embedded.text.utf8)
            value.append(Int32(text.count))
            text.withUnsafeBytes { value.append($0) }
        }
        return value
    }

    private static func append(_ id: MessageId, to value: ByteBuffer) {
        value.append(id.peerId.toInt64())
        value.append(id.namespace.rawValue)
        value.append(id.id)
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws(PostboxDecodingError) -> StoredPeerChatInterfaceState {
        var reader = ByteReader(bytes)
        var state = StoredPeerChatInterfaceState()
        var embedded: (timestamp: Int32, text: UnsafeRawBufferPointer)?
        do throws(ByteReadError) {
            let formatOffset = reader.offset
            let format = try reader.uint8()
            guard format == Self.format else { throw .undefinedByte(format, offset: formatOffset) }
            let flagsOffset = reader.offset
            let flags = try reader.uint8()
            guard flags & ~(overrideFlag | scrollFlag | embeddedFlag) == 0 else { throw .undefinedByte(flags, offset: flagsOffset) }
            if flags & overrideFlag != 0 { state.overrideChatTimestamp = try reader.int32() }
            if flags & scrollFlag != 0 {
                let id = try messageId(&reader)
                state.historyScrollMessageIndex = MessageIndex(id: id, timestamp: try reader.int32())
            }
            let countOffset = reader.offset
            let count = Int(try reader.int32())
            // Each id takes 16 bytes: a count the remaining bytes cannot hold is malformed, not a huge allocation.
            guard count >= 0, count <= reader.remaining / 16 else {
                throw .truncated(offset: countOffset, needed: max(count, 0) * 16, available: reader.remaining)
            }
            for _ in 0..<count { state.associatedMessageIds.append(try messageId(&reader)) }
            state.data = Array(try reader.bytes(Int(try reader.int32())))
            if flags & embeddedFlag != 0 {
                let timestamp = try reader.int32()
                embedded = (timestamp, try reader.bytes(Int(try reader.int32())))
            }
            try reader.requireEnd()
        } catch {
            throw PostboxDecodingError(error)
        }
        if let embedded {
            let text = String(decoding: embedded.text, as: UTF8.self)
            // Invalid UTF-8 decodes with replacement characters, whose bytes differ from the stored ones.
            guard text.utf8.elementsEqual(embedded.text) else {
                throw .invalidValue(key: "chatListEmbeddedState.text", reason: "not UTF-8")
            }
            state.chatListEmbeddedState = ChatListEmbeddedState(text: text, timestamp: embedded.timestamp)
        }
        return state
    }

    private static func messageId(_ reader: inout ByteReader) throws(ByteReadError) -> MessageId {
        let peerId = PeerId(try reader.int64())
        let namespace = MessageId.Namespace(try reader.int32())
        return MessageId(peerId: peerId, namespace: namespace, id: try reader.int32())
    }
}
