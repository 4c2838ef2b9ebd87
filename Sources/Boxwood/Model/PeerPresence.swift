/// A peer's online status, implemented by the app and stored through the coder.
public protocol PeerPresence: PostboxCoding, Sendable {
    /// Whether `other` is the same presence.
    func isEqual(to other: any PeerPresence) -> Bool
}

extension PeerPresence where Self: Equatable {
    public func isEqual(to other: any PeerPresence) -> Bool { (other as? Self) == self }
}
