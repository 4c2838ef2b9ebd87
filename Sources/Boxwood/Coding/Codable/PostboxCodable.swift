/// A `Codable` type stored through Boxwood's object coding with no hand-written `init(decoder:)` or
/// `encode(_:)` — the default way to store an app type. It needs only a stable name and a registration:
///
/// ```swift
/// struct User: Peer, PostboxCodable {
///     static let postboxTypeName = "User"   // written to disk: keep it when renaming the type
///     var id: PeerId
///     var name: String
///     var nickname: String?               // added later: older objects read it as nil
///     var indexName: PeerIndexNameRepresentation { .title(title: name, addressNames: []) }
/// }
/// try declareEncodable(User.self)         // once, at start-up
/// ```
///
/// Layout: the value is encoded with the Codable bridge (``PostboxEncoder/encodeCodable(_:forKey:)``'s mapping)
/// and a keyed container's entries become the object's own fields, keyed by the coding keys — the same bytes a
/// hand-written ``PostboxCoding`` type writing those fields would produce, so either form reads the other. A
/// value that encodes as a single value or an unkeyed container is stored as the single field `"_"`. It
/// evolves like any Codable type: an optional property added later reads as nil from older objects, and
/// fields the type no longer has are ignored.
///
/// A value whose `encode(to:)` throws is not stored: the error is recorded in the encoder
/// (``PostboxEncoder/encodingError``) and the transaction that writes the value throws
/// ``PostboxEncodingError/codable(_:)``. A stored object that does not fit the type throws
/// ``PostboxDecodingError/codable(_:)`` when read.
public protocol PostboxCodable: PostboxCoding, Codable {}

extension PostboxCodable {
    /// Decodes the value from the object's fields through the Codable bridge.
    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        self = try decoder.decodeCodableFields(Self.self)
    }

    /// Writes the value's coding keys as the object's fields through the Codable bridge; a failure is recorded
    /// in `encoder` (``PostboxEncoder/encodingError``), never trapped.
    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeCodableFields(of: self)
    }
}
