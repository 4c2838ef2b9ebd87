/// A type stored through ``PostboxEncoder`` / ``PostboxDecoder``.
///
/// `encode(_:)` writes named fields; `init(decoder:)` reads them back. Readers should tolerate what other
/// versions of the type write: fields a newer version added are skipped automatically, and fields an older
/// version lacks read as absent (use the `decode…ForKey(_:orElse:)` and `decodeOptional…ForKey(_:)` forms).
/// Throw only when the stored value cannot make sense (a required field is missing, a nested object fails).
///
/// To be decoded polymorphically (as `any PostboxCoding`, for example as one of a message's attributes) a type
/// is registered with ``declareEncodable(_:f:)`` under the hash of its ``postboxTypeName``. The registry is
/// shared by all threads, hence `SendableMetatype`.
public protocol PostboxCoding: SendableMetatype {
    /// Decodes a value from the fields of one encoded object.
    init(decoder: PostboxDecoder) throws(PostboxDecodingError)
    /// Writes this value's fields.
    func encode(_ encoder: PostboxEncoder)
    /// The name whose MurmurHash3 is written as this type's type hash. Defaults to the unqualified type name
    /// as Swift prints it (`String(describing:)`, e.g. `"TelegramUser"`), as Postbox does. Override it with a
    /// constant to keep stored data readable after renaming the type.
    static var postboxTypeName: String { get }
}

extension PostboxCoding {
    public static var postboxTypeName: String { String(describing: self) }
}
