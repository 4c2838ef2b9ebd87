/// Identifies a message: its peer, a namespace (cloud, local, scheduled… — the app defines them) and the id
/// within that namespace.
public struct MessageId: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// A message namespace (cloud, local, scheduled… — the app defines the numbers). Written as a number where a
    /// namespace is expected (`MessageId(peerId: chat, namespace: 0, id: 1)`), or named by the app
    /// (`extension MessageId.Namespace { static let cloud: Self = 0 }`).
    public struct Namespace: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
        /// The namespace number (stored as 4 big-endian bytes in history keys).
        public let rawValue: Int32

        /// The least namespace, `Int32.min`.
        public static let min = Namespace(.min)
        /// The greatest namespace, `Int32.max`.
        public static let max = Namespace(.max)

        public init(_ rawValue: Int32) { self.rawValue = rawValue }
        public init(integerLiteral value: Int32) { self.init(value) }

        public static func < (lhs: Namespace, rhs: Namespace) -> Bool { lhs.rawValue < rhs.rawValue }
        public var description: String { "\(rawValue)" }
    }

    /// A message id within its peer and namespace.
    public typealias Id = Int32

    /// The chat the message belongs to.
    public let peerId: PeerId
    /// The message namespace.
    public let namespace: Namespace
    /// The id within the peer and namespace.
    public let id: Id

    public init(peerId: PeerId, namespace: Namespace, id: Id) {
        self.peerId = peerId
        self.namespace = namespace
        self.id = id
    }

    /// Orders by namespace, then id, then peer (Postbox's order).
    public static func < (lhs: MessageId, rhs: MessageId) -> Bool {
        if lhs.namespace != rhs.namespace { return lhs.namespace < rhs.namespace }
        if lhs.id != rhs.id { return lhs.id < rhs.id }
        return lhs.peerId < rhs.peerId
    }

    public var description: String { "\(peerId):\(namespace)_\(id)" }
}

extension MessageId: PostboxCoding {
    public static let postboxTypeName = "MessageId"

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        peerId = PeerId(try decoder.decodeInt64(forKey: "p"))
        namespace = Namespace(try decoder.decodeInt32(forKey: "n"))
        id = try decoder.decodeInt32(forKey: "i")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(peerId.toInt64(), forKey: "p")
        encoder.encodeInt32(namespace.rawValue, forKey: "n")
        encoder.encodeInt32(id, forKey: "i")
    }
}
