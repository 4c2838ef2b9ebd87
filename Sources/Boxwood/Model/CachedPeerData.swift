/// Full information about a peer fetched on demand (about text, members, pinned message…), implemented by the
/// app and stored through the coder.
public protocol CachedPeerData: PostboxCoding, Sendable {
    /// Peers this data refers to (loaded along with it in peer views).
    var peerIds: Set<PeerId> { get }
    /// Messages this data refers to (for example a pinned message).
    var messageIds: Set<MessageId> { get }
    /// Whether `other` is the same data.
    func isEqual(to other: any CachedPeerData) -> Bool
}

extension CachedPeerData {
    public var peerIds: Set<PeerId> { [] }
    public var messageIds: Set<MessageId> { [] }
}

extension CachedPeerData where Self: Equatable {
    public func isEqual(to other: any CachedPeerData) -> Bool { (other as? Self) == self }
}
