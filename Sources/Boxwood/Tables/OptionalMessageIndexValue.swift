import BoxwoodStore
/// A chat's top message inside chat-list values (tables 9 and 8): `0`, or `1 ‖ namespace Int32 LE ‖ id Int32 LE ‖
/// timestamp Int32 LE` (the peer is the chat's, known from the key).

extension ByteBuffer {
    /// Appends `index` (nil: no top message) in the layout above.
    func appendOptionalMessageIndex(_ index: MessageIndex?) {
        guard let index else {
            append(UInt8(0))
            return
        }
        append(UInt8(1))
        append(index.id.namespace.rawValue)
        append(index.id.id)
        append(index.timestamp)
    }
}

extension ByteReader {
    /// Reads a top message of `peerId` in the layout above.
    mutating func optionalMessageIndex(peerId: PeerId) throws(ByteReadError) -> MessageIndex? {
        let tagOffset = offset
        switch try uint8() {
        case 0:
            return nil
        case 1:
            let namespace = try int32()
            let id = try int32()
            return MessageIndex(id: MessageId(peerId: peerId, namespace: MessageId.Namespace(namespace), id: id), timestamp: try int32())
        case let tag:
            throw .undefinedByte(tag, offset: tagOffset)
        }
    }
}
