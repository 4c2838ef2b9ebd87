import BoxwoodStore
/// Why a buffer could not be decoded. Decoding never traps and never reads outside the buffer: a truncated,
/// bit-flipped or otherwise malformed encoding ends in one of these.
public enum PostboxDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A length, count or fixed-size value runs past the end of the enclosing object or buffer.
    case truncated(offset: Int, needed: Int, available: Int)
    /// A type tag byte that no version of the format defines.
    case unknownFieldType(tag: UInt8, offset: Int)
    /// A length or count that is negative or cannot fit in the bytes that remain.
    case invalidLength(Int64, offset: Int)
    /// A field key length that is not a valid varint or runs past the end.
    case invalidKeyLength(offset: Int)
    /// A Bool payload other than 0 or 1.
    case invalidBool(UInt8, offset: Int)
    /// Objects and arrays are nested deeper than ``PostboxDecoder/maximumNestingDepth``.
    case nestingTooDeep(limit: Int)
    /// An object's type hash is not registered with `declareEncodable`. `knownType` names the type when this
    /// process registered or encoded a type with that hash (nil: the hash is unknown here).
    case unknownType(hash: Int32, key: String, knownType: PostboxTypeIdentity?)
    /// A registered type decoded to a value that is not the requested type.
    case unexpectedType(key: String, expected: String, found: String)
    /// A required field is absent (or stored as `null`).
    case missingField(key: String)
    /// A required field is stored with another type tag.
    case typeMismatch(key: String, expected: PostboxFieldType, found: PostboxFieldType)
    /// A field holds a value the type cannot represent (for example an out-of-range enum raw value).
    case invalidValue(key: String, reason: String)
    /// The root field `"_"` is missing from a root-encoded buffer.
    case missingRootObject
    /// A `Decodable` value could not be decoded through the Codable bridge.
    case codable(String)

    public var description: String {
        switch self {
        case let .truncated(offset, needed, available):
            return "truncated encoding at offset \(offset): needs \(needed) bytes, \(available) left"
        case let .unknownFieldType(tag, offset):
            return "unknown field type tag \(tag) at offset \(offset)"
        case let .invalidLength(length, offset):
            return "invalid length or count \(length) at offset \(offset)"
        case let .invalidKeyLength(offset):
            return "invalid field key length at offset \(offset)"
        case let .invalidBool(byte, offset):
            return "invalid bool byte \(byte) at offset \(offset)"
        case let .nestingTooDeep(limit):
            return "objects nested deeper than \(limit) levels"
        case let .unknownType(hash, key, knownType?):
            return "field \"\(key)\": type \"\(knownType.typeName)\" (hash \(hash)) is not registered; "
                + "call declareEncodable(\(knownType.swiftType).self) at start-up"
        case let .unknownType(hash, key, nil) where hash == PostboxTypeRegistry.anonymousTypeHash:
            return "field \"\(key)\": an anonymous object (type hash 0, written by the Codable bridge) has no "
                + "registered type; read it with decodeCodable(_:forKey:)"
        case let .unknownType(hash, key, nil):
            return "field \"\(key)\": type hash \(hash) is not registered and no type this process registered or "
                + "encoded has it; call declareEncodable(_:) at start-up for the type that wrote it (the hash is the "
                + "MurmurHash3 of its postboxTypeName)"
        case let .unexpectedType(key, expected, found):
            return "field \"\(key)\": expected \(expected), decoded \(found)"
        case let .missingField(key):
            return "required field \"\(key)\" is missing"
        case let .typeMismatch(key, expected, found):
            return "field \"\(key)\": expected \(expected), found \(found)"
        case let .invalidValue(key, reason):
            return "field \"\(key)\": \(reason)"
        case .missingRootObject:
            return "no root object (field \"_\")"
        case let .codable(reason):
            return "Codable decoding failed: \(reason)"
        }
    }
}

/// Why a value could not be encoded: an `Encodable` value's `encode(to:)` threw, or a type's name is unusable.
/// ``PostboxCoding/encode(_:)`` cannot throw, so the encoder records the first such error
/// (``PostboxEncoder/encodingError``) and everything that hands out or stores its bytes throws it instead: a
/// transaction whose values cannot be encoded fails and stores nothing.
public enum PostboxEncodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An `Encodable` value could not be encoded through the Codable bridge.
    case codable(String)
    /// An object of `type` was encoded, but its ``PostboxCoding/postboxTypeName`` hashes to 0, the type hash
    /// reserved for anonymous Codable objects.
    case reservedTypeHash(type: PostboxTypeIdentity)

    public var description: String {
        switch self {
        case let .codable(reason): return "Codable encoding failed: \(reason)"
        case let .reservedTypeHash(type):
            return "cannot encode type \(type): its postboxTypeName hashes to 0, the type hash reserved for "
                + "anonymous Codable objects; choose another postboxTypeName"
        }
    }
}

extension PostboxDecodingError {
    /// The decoding error for a raw read of the encoding (or of a hand-laid table value) that failed: a short
    /// read is ``truncated(offset:needed:available:)``; the format's only varint is a field key length; a byte
    /// the format does not define is a field type tag; leftover bytes make the value's length wrong.
    init(_ error: ByteReadError) {
        switch error {
        case let .truncated(offset, needed, available): self = .truncated(offset: offset, needed: needed, available: available)
        case let .invalidVarint(offset): self = .invalidKeyLength(offset: offset)
        case let .undefinedByte(byte, offset): self = .unknownFieldType(tag: byte, offset: offset)
        case let .trailingBytes(offset, count): self = .invalidLength(Int64(offset + count), offset: 0)
        }
    }
}
