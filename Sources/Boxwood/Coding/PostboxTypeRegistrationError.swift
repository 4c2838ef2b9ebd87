/// Why ``declareEncodable(_:)`` refused a type. Nothing was registered: the registry is as it was before the call.
public enum PostboxTypeRegistrationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `type` hashes to the type hash `registered` already holds: another Swift type with the same
    /// ``PostboxCoding/postboxTypeName``, or (rarely) a different name with the same MurmurHash3. Give one of them
    /// another stable name — only one that no stored data uses yet, since the name is written to disk.
    case hashCollision(type: PostboxTypeIdentity, registered: PostboxTypeIdentity, hash: Int32)
    /// `type`'s ``PostboxCoding/postboxTypeName`` hashes to 0, the type hash reserved for the anonymous objects of
    /// the Codable bridge. Choose another name.
    case reservedHash(type: PostboxTypeIdentity)

    public var description: String {
        switch self {
        case let .hashCollision(type, registered, hash):
            return "declareEncodable: type \(type) has the type hash \(hash) of the registered type \(registered); "
                + "give one of them another postboxTypeName"
        case let .reservedHash(type):
            return "declareEncodable: the postboxTypeName of \(type) hashes to 0, the type hash reserved for "
                + "anonymous Codable objects; choose another postboxTypeName"
        }
    }
}
