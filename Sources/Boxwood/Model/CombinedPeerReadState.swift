/// A chat's read states across its message namespaces.
public struct CombinedPeerReadState: Hashable, Sendable {
    /// The read state of each namespace.
    public let states: [MessageId.Namespace: PeerReadState]

    public init(states: [MessageId.Namespace: PeerReadState]) {
        self.states = states
    }

    /// Unread incoming messages over all namespaces.
    public var count: Int32 { states.values.reduce(0) { $0 &+ $1.count } }

    /// Whether any namespace carries the manual unread mark.
    public var markedUnread: Bool { states.values.contains { $0.markedUnread } }

    /// Whether anything is unread in any namespace.
    public var isUnread: Bool { states.values.contains { $0.isUnread } }

    /// Whether the incoming message at `index` has been read (false when its namespace has no read state).
    public func isIncomingMessageIndexRead(_ index: MessageIndex) -> Bool {
        states[index.id.namespace]?.isIncomingMessageIndexRead(index) ?? false
    }

    /// Whether the outgoing message at `index` has been read by the other side (false when its namespace has
    /// no read state).
    public func isOutgoingMessageIndexRead(_ index: MessageIndex) -> Bool {
        states[index.id.namespace]?.isOutgoingMessageIndexRead(index) ?? false
    }
}

extension CombinedPeerReadState: PostboxCoding {
    public static let postboxTypeName = "CombinedPeerReadState"

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        let namespaces = decoder.decodeInt32ArrayForKey("n")
        let values = try decoder.decodeObjectArrayForKey("s", as: PeerReadState.self)
        guard namespaces.count == values.count else {
            throw .invalidValue(key: "s", reason: "\(namespaces.count) namespaces but \(values.count) read states")
        }
        states = Dictionary(zip(namespaces.map { MessageId.Namespace($0) }, values), uniquingKeysWith: { _, last in last })
    }

    /// Namespaces are written in ascending order, so equal values encode to equal bytes.
    public func encode(_ encoder: PostboxEncoder) {
        let sorted = states.sorted(by: { $0.key < $1.key })
        encoder.encodeInt32Array(sorted.map(\.key.rawValue), forKey: "n")
        encoder.encodeObjectArray(sorted.map(\.value), forKey: "s")
    }
}
