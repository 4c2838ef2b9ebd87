/// How far a chat's history in one message namespace has been read, in each direction.
public enum PeerReadState: Hashable, Sendable, CustomStringConvertible {
    /// Read marks are message ids (cloud chats): everything up to `maxIncomingReadId` has been read by this
    /// account, up to `maxOutgoingReadId` by the other side; `maxKnownId` is the newest id the server reported,
    /// `count` the number of unread incoming messages.
    case idBased(maxIncomingReadId: Int32, maxOutgoingReadId: Int32, maxKnownId: Int32, count: Int32, markedUnread: Bool)
    /// Read marks are message indices (namespaces whose ids are not ordered by time, such as secret chats).
    case indexBased(maxIncomingReadIndex: MessageIndex, maxOutgoingReadIndex: MessageIndex, count: Int32, markedUnread: Bool)

    /// The number of unread incoming messages.
    public var count: Int32 {
        switch self {
        case let .idBased(_, _, _, count, _): return count
        case let .indexBased(_, _, count, _): return count
        }
    }

    /// Whether the user marked the chat unread by hand.
    public var markedUnread: Bool {
        switch self {
        case let .idBased(_, _, _, _, markedUnread): return markedUnread
        case let .indexBased(_, _, _, markedUnread): return markedUnread
        }
    }

    /// The newest message id the server reported, for id-based states.
    public var maxKnownId: Int32? {
        if case let .idBased(_, _, maxKnownId, _, _) = self { return maxKnownId }
        return nil
    }

    /// Whether there is something unread: unread messages, or the manual mark.
    public var isUnread: Bool { count > 0 || markedUnread }

    /// Whether this account has read the incoming message at `index`.
    public func isIncomingMessageIndexRead(_ index: MessageIndex) -> Bool {
        switch self {
        case let .idBased(maxIncomingReadId, _, _, _, _): return index.id.id <= maxIncomingReadId
        case let .indexBased(maxIncomingReadIndex, _, _, _): return index <= maxIncomingReadIndex
        }
    }

    /// Whether the other side has read the outgoing message at `index`.
    public func isOutgoingMessageIndexRead(_ index: MessageIndex) -> Bool {
        switch self {
        case let .idBased(_, maxOutgoingReadId, _, _, _): return index.id.id <= maxOutgoingReadId
        case let .indexBased(_, maxOutgoingReadIndex, _, _): return index <= maxOutgoingReadIndex
        }
    }

    /// The same state with `delta` added to the unread count (never below zero).
    public func withAddedCount(_ delta: Int32) -> PeerReadState {
        let newCount = max(0, count &+ delta)
        switch self {
        case let .idBased(incoming, outgoing, maxKnownId, _, markedUnread):
            return .idBased(maxIncomingReadId: incoming, maxOutgoingReadId: outgoing, maxKnownId: maxKnownId, count: newCount, markedUnread: markedUnread)
        case let .indexBased(incoming, outgoing, _, markedUnread):
            return .indexBased(maxIncomingReadIndex: incoming, maxOutgoingReadIndex: outgoing, count: newCount, markedUnread: markedUnread)
        }
    }

    /// The same state with the manual unread mark set or cleared.
    public func withMarkedUnread(_ markedUnread: Bool) -> PeerReadState {
        switch self {
        case let .idBased(incoming, outgoing, maxKnownId, count, _):
            return .idBased(maxIncomingReadId: incoming, maxOutgoingReadId: outgoing, maxKnownId: maxKnownId, count: count, markedUnread: markedUnread)
        case let .indexBased(incoming, outgoing, count, _):
            return .indexBased(maxIncomingReadIndex: incoming, maxOutgoingReadIndex: outgoing, count: count, markedUnread: markedUnread)
        }
    }

    public var description: String {
        switch self {
        case let .idBased(incoming, outgoing, maxKnownId, count, markedUnread):
            return "idBased(in: \(incoming), out: \(outgoing), known: \(maxKnownId), count: \(count)\(markedUnread ? ", marked" : ""))"
        case let .indexBased(incoming, outgoing, count, markedUnread):
            return "indexBased(in: \(incoming), out: \(outgoing), count: \(count)\(markedUnread ? ", marked" : ""))"
        }
    }
}

extension PeerReadState: PostboxCoding {
    public static let postboxTypeName = "PeerReadState"

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        let count = try decoder.decodeInt32(forKey: "c")
        let markedUnread = decoder.decodeBoolForKey("u", orElse: false)
        switch try decoder.decodeInt32(forKey: "k") {
        case 0:
            self = .idBased(maxIncomingReadId: try decoder.decodeInt32(forKey: "i"),
                            maxOutgoingReadId: try decoder.decodeInt32(forKey: "o"),
                            maxKnownId: try decoder.decodeInt32(forKey: "m"),
                            count: count, markedUnread: markedUnread)
        case 1:
            self = .indexBased(maxIncomingReadIndex: try decoder.decodeObject(forKey: "ii", as: MessageIndex.self),
                               maxOutgoingReadIndex: try decoder.decodeObject(forKey: "oi", as: MessageIndex.self),
                               count: count, markedUnread: markedUnread)
        case let kind:
            throw .invalidValue(key: "k", reason: "unknown PeerReadState kind \(kind)")
        }
    }

    public func encode(_ encoder: PostboxEncoder) {
        switch self {
        case let .idBased(incoming, outgoing, maxKnownId, _, _):
            encoder.encodeInt32(0, forKey: "k")
            encoder.encodeInt32(incoming, forKey: "i")
            encoder.encodeInt32(outgoing, forKey: "o")
            encoder.encodeInt32(maxKnownId, forKey: "m")
        case let .indexBased(incoming, outgoing, _, _):
            encoder.encodeInt32(1, forKey: "k")
            encoder.encodeObject(incoming, forKey: "ii")
            encoder.encodeObject(outgoing, forKey: "oi")
        }
        encoder.encodeInt32(count, forKey: "c")
        if markedUnread { encoder.encodeBool(true, forKey: "u") }
    }
}
