/// A user, group, channel or secret chat, implemented by the app and stored through the coder: each concrete
/// type declares a stable ``PostboxCoding/postboxTypeName`` and is registered at start-up with
/// ``declareEncodable(_:)``; a `Codable` type can conform to ``PostboxCodable`` instead of coding by hand.
public protocol Peer: PostboxCoding, Sendable {
    /// The peer's identity.
    var id: PeerId { get }
    /// The names the peer is found by in name search.
    var indexName: PeerIndexNameRepresentation { get }
    /// Another peer this one stands for (for example the user of a secret chat); loaded with it in views.
    var associatedPeerId: PeerId? { get }
    /// A second associated peer, loaded with this one in views.
    var additionalAssociatedPeerId: PeerId? { get }
    /// Whose notification settings apply to this peer (nil: its own).
    var notificationSettingsPeerId: PeerId? { get }
    /// Whether `other` is the same peer with the same contents.
    func isEqual(_ other: any Peer) -> Bool
}

extension Peer {
    public var associatedPeerId: PeerId? { nil }
    public var additionalAssociatedPeerId: PeerId? { nil }
    public var notificationSettingsPeerId: PeerId? { nil }
}

extension Peer where Self: Equatable {
    public func isEqual(_ other: any Peer) -> Bool { (other as? Self) == self }
}

/// How a peer's name is indexed for search.
public enum PeerIndexNameRepresentation: Hashable, Sendable {
    /// A group or channel title and its public usernames.
    case title(title: String, addressNames: [String])
    /// A person's first and last name, public usernames and phone number.
    case personName(first: String, last: String, addressNames: [String], phoneNumber: String?)

    /// Whether there is no name at all.
    public var isEmpty: Bool {
        switch self {
        case let .title(title, addressNames):
            return title.isEmpty && addressNames.isEmpty
        case let .personName(first, last, addressNames, phoneNumber):
            return first.isEmpty && last.isEmpty && addressNames.isEmpty && (phoneNumber ?? "").isEmpty
        }
    }
}
