/// A `Codable` value stored in Boxwood's encoding, for tables that hold app-defined `Codable` types (peer chat
/// states, preferences, ordered list items), as Postbox's `CodableEntry` does.
///
/// `data` is a complete field list with a single field `"_"` holding the value, so it can be stored as a
/// table value on its own. A `CodableEntry` is itself `PostboxCoding` (the bytes in field `"d"`).
public struct CodableEntry: Sendable, Hashable, PostboxCoding {
    public static let postboxTypeName = "CodableEntry"

    /// The encoding: one field `"_"` holding the value.
    public let data: [UInt8]

    /// Wraps an encoding produced earlier (by ``init(_:)`` or read from a table).
    public init(data: [UInt8]) {
        self.data = data
    }

    /// Encodes `value`.
    public init<T: Encodable>(_ value: T) throws(PostboxEncodingError) {
        let encoder = PostboxEncoder()
        try encoder.encodeCodable(value, forKey: "_")
        data = try encoder.makeArray()
    }

    /// Decodes the stored value as `T`.
    public func get<T: Decodable>(_ type: T.Type) throws(PostboxDecodingError) -> T {
        let result: Result<T, PostboxDecodingError> = data.withUnsafeBytes { bytes in
            do throws(PostboxDecodingError) {
                return .success(try PostboxDecoder.withDecoder(over: bytes) { decoder throws(PostboxDecodingError) in
                    guard let value = try decoder.decodeCodable(type, forKey: "_") else { throw .missingRootObject }
                    return value
                })
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        guard let bytes = decoder.decodeByteArrayForKey("d") else { throw .missingField(key: "d") }
        data = bytes
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeBytes(data, forKey: "d")
    }
}
