/// A message's position in history: its id plus its timestamp.
///
/// Ordered by timestamp, then namespace, then id, then peer — Postbox's order, in which a chat's history is
/// sorted and its chat-list entry is placed.
public struct MessageIndex: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The message.
    public let id: MessageId
    /// The message's date (seconds since 1970).
    public let timestamp: Int32

    public init(id: MessageId, timestamp: Int32) {
        self.id = id
        self.timestamp = timestamp
    }

    public static func < (lhs: MessageIndex, rhs: MessageIndex) -> Bool {
        if lhs.timestamp != rhs.timestamp { return lhs.timestamp < rhs.timestamp }
        if lhs.id.namespace != rhs.id.namespace { return lhs.id.namespace < rhs.id.namespace }
        if lhs.id.id != rhs.id.id { return lhs.id.id < rhs.id.id }
        return lhs.id.peerId < rhs.id.peerId
    }

    /// The greatest index of `peerId`'s history.
    public static func upperBound(peerId: PeerId) -> MessageIndex {
        MessageIndex(id: MessageId(peerId: peerId, namespace: .max, id: .max), timestamp: .max)
    }

    /// The least index of `peerId`'s history.
    public static func lowerBound(peerId: PeerId) -> MessageIndex {
        MessageIndex(id: MessageId(peerId: peerId, namespace: .min, id: .min), timestamp: .min)
    }

    /// The greatest index of all.
    public static func absoluteUpperBound() -> MessageIndex {
        upperBound(peerId: PeerId(namespace: .max, id: .max))
    }

    /// The least index of all.
    public static func absoluteLowerBound() -> MessageIndex {
        lowerBound(peerId: PeerId(namespace: PeerId.Namespace(0), id: .min))
    }

    /// The greatest index of the same peer that is less than this one (itself at the lower bound).
    public func predecessor() -> MessageIndex {
        if id.id != .min {
            return MessageIndex(id: MessageId(peerId: id.peerId, namespace: id.namespace, id: id.id - 1), timestamp: timestamp)
        } else if id.namespace != .min {
            return MessageIndex(id: MessageId(peerId: id.peerId, namespace: MessageId.Namespace(id.namespace.rawValue - 1), id: .max), timestamp: timestamp)
        } else if timestamp != .min {
            return MessageIndex(id: MessageId(peerId: id.peerId, namespace: .max, id: .max), timestamp: timestamp - 1)
        }
        return self
    }

    /// The least index of the same peer that is greater than this one (itself at the upper bound).
    public func successor() -> MessageIndex {
        if id.id != .max {
            return MessageIndex(id: MessageId(peerId: id.peerId, namespace: id.namespace, id: id.id + 1), timestamp: timestamp)
        } else if id.namespace != .max {
            return MessageIndex(id: MessageId(peerId: id.peerId, namespace: MessageId.Namespace(id.namespace.rawValue + 1), id: .min), timestamp: timestamp)
        } else if timestamp != .max {
            return MessageIndex(id: MessageId(peerId: id.peerId, namespace: .min, id: .min), timestamp: timestamp + 1)
        }
        return self
    }

    public var description: String { "\(id)@\(timestamp)" }
}

extension MessageIndex: PostboxCoding {
    public static let postboxTypeName = "MessageIndex"

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        id = MessageId(peerId: PeerId(try decoder.decodeInt64(forKey: "p")),
                       namespace: MessageId.Namespace(try decoder.decodeInt32(forKey: "n")),
                       id: try decoder.decodeInt32(forKey: "i"))
        timestamp = try decoder.decodeInt32(forKey: "t")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(id.peerId.toInt64(), forKey: "p")
        encoder.encodeInt32(id.namespace.rawValue, forKey: "n")
        encoder.encodeInt32(id.id, forKey: "i")
        encoder.encodeInt32(timestamp, forKey: "t")
    }
}
