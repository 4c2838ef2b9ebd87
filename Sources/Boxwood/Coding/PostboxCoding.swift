/// A type stored through ``PostboxEncoder`` / ``PostboxDecoder``.
///
/// `encode(_:)` writes named fields; `init(decoder:)` reads them back. Readers should tolerate what other
/// versions of the type write: fields a newer version added are skipped automatically, and fields an older
/// version lacks read as absent (use the `decode…ForKey(_:orElse:)` and `decodeOptional…ForKey(_:)` forms).
/// Throw only when the stored value cannot make sense (a required field is missing, a nested object fails).
///
/// Every conforming type names itself with a stable ``postboxTypeName``: its MurmurHash3 is written to disk
/// with each object, and to be decoded polymorphically (as `any PostboxCoding`, for example as one of a
/// message's attributes or as a stored ``Peer``) the type is registered at start-up with
/// `try declareEncodable(T.self)` (``declareEncodable(_:)``). The registry is shared by all threads, hence
/// `SendableMetatype`. A `Codable` type gets `init(decoder:)` and `encode(_:)` for free by conforming to
/// ``PostboxCodable`` instead of writing them.
public protocol PostboxCoding: SendableMetatype {
    /// Decodes a value from the fields of one encoded object.
    init(decoder: PostboxDecoder) throws(PostboxDecodingError)
    /// Writes this value's fields. It cannot throw: a failure (a `Codable` value that refused to encode) is
    /// recorded with ``PostboxEncoder/recordEncodingError(_:)`` and thrown by whatever stores the encoding.
    func encode(_ encoder: PostboxEncoder)
    /// The stable name of this type in stored data: its MurmurHash3 is the type hash written with every object
    /// of the type, and what ``declareEncodable(_:)`` registers. Write it as a constant
    /// (`static let postboxTypeName = "User"`) and keep it when the Swift type is renamed or moved, or stored
    /// objects stop decoding. Two stored types need two different names (registration refuses a collision).
    ///
    /// Types that predate this requirement used the unqualified Swift type name (`String(describing:)`, e.g.
    /// `"TelegramUser"`), as Postbox does; keep that string to read what they wrote.
    static var postboxTypeName: String { get }
}
