/// A typed piece of message metadata (reply, edit date, entities, views…), implemented by the app and stored
/// through the coder: each concrete type declares a stable ``PostboxCoding/postboxTypeName`` and is registered
/// at start-up with ``declareEncodable(_:)``; a `Codable` type can conform to ``PostboxCodable`` instead of
/// coding by hand.
public protocol MessageAttribute: PostboxCoding, Sendable {
    /// Peers the attribute refers to (loaded along with the message).
    var associatedPeerIds: [PeerId] { get }
    /// Messages the attribute refers to (for example the replied-to message).
    var associatedMessageIds: [MessageId] { get }
    /// Media the attribute refers to.
    var associatedMediaIds: [MediaId] { get }
    /// Whether `other` is the same attribute with the same contents.
    func isEqual(to other: any MessageAttribute) -> Bool
}

extension MessageAttribute {
    public var associatedPeerIds: [PeerId] { [] }
    public var associatedMessageIds: [MessageId] { [] }
    public var associatedMediaIds: [MediaId] { [] }
}

extension MessageAttribute where Self: Equatable {
    public func isEqual(to other: any MessageAttribute) -> Bool { (other as? Self) == self }
}
