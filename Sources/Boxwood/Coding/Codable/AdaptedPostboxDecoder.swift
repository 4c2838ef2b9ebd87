import Foundation

/// The `Decoder` of the Codable bridge, reading straight from the encoded bytes: objects are keyed containers,
/// every array tag (and an object dictionary, as alternating keys and values) is an unkeyed container, and
/// scalar fields are single values. Integer fields convert to any integer type they fit in.
final class AdaptedPostboxDecoder: Decoder {
    let slot: CodableSlot
    var codingPath: [any CodingKey] { slot.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(slot: CodableSlot) {
        self.slot = slot
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(AdaptedKeyedDecodingContainer<Key>(fields: try slot.fields(), codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        AdaptedUnkeyedDecodingContainer(region: slot.region, elements: try slot.elements(), codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        AdaptedSingleValueDecodingContainer(slot: slot)
    }
}

struct AdaptedKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: PostboxDecoder
    let codingPath: [any CodingKey]

    var allKeys: [Key] {
        var seen = Set<String>()
        return fields.fieldKeys.compactMap { seen.insert($0).inserted ? Key(stringValue: $0) : nil }
    }

    func contains(_ key: Key) -> Bool { fields.lookup(key.stringValue) != nil }

    private func slot(_ key: Key) throws -> CodableSlot {
        guard let value = fields.lookup(key.stringValue) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no field \"\(key.stringValue)\""))
        }
        return CodableSlot(region: fields, value: value, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { try slot(key).value.type == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try slot(key).bool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try slot(key).string() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try slot(key).double() }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try slot(key).double()) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try slot(key).integer(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try slot(key).integer(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try slot(key).integer(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try slot(key).integer(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try slot(key).integer(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try slot(key).integer(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try slot(key).integer(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try slot(key).integer(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try slot(key).integer(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try slot(key).integer(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try slot(key).decodable(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try AdaptedPostboxDecoder(slot: slot(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try AdaptedPostboxDecoder(slot: slot(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        let key = SuperCodingKey()
        let value = fields.lookup(key.stringValue) ?? FieldValue(type: .null, payload: 0)
        return AdaptedPostboxDecoder(slot: CodableSlot(region: fields, value: value, codingPath: codingPath + [key]))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        let value = fields.lookup(key.stringValue) ?? FieldValue(type: .null, payload: 0)
        return AdaptedPostboxDecoder(slot: CodableSlot(region: fields, value: value, codingPath: codingPath + [key]))
    }
}

struct AdaptedUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let region: PostboxDecoder
    let elements: [FieldValue]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(region: PostboxDecoder, elements: [FieldValue], codingPath: [any CodingKey]) {
        self.region = region
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// Decodes the current element with `read` and advances only if that succeeded.
    private mutating func next<T>(_ type: T.Type, _ read: (CodableSlot) throws -> T) throws -> T {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [IndexCodingKey(currentIndex)], debugDescription: "unkeyed container is at its end"))
        }
        let result = try read(CodableSlot(region: region, value: elements[currentIndex], codingPath: codingPath + [IndexCodingKey(currentIndex)]))
        currentIndex += 1
        return result
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex].type == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try $0.bool() } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { try $0.string() } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try $0.double() } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { Float(try $0.double()) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try $0.integer(type) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try $0.integer(type) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try $0.integer(type) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try $0.integer(type) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try $0.integer(type) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try $0.integer(type) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try $0.integer(type) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try $0.integer(type) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try $0.integer(type) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try $0.integer(type) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type) { try $0.decodable(type) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) { try AdaptedPostboxDecoder(slot: $0).container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { try AdaptedPostboxDecoder(slot: $0).unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { AdaptedPostboxDecoder(slot: $0) }
    }
}

struct AdaptedSingleValueDecodingContainer: SingleValueDecodingContainer {
    let slot: CodableSlot
    var codingPath: [any CodingKey] { slot.codingPath }

    func decodeNil() -> Bool { slot.value.type == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try slot.bool() }
    func decode(_ type: String.Type) throws -> String { try slot.string() }
    func decode(_ type: Double.Type) throws -> Double { try slot.double() }
    func decode(_ type: Float.Type) throws -> Float { Float(try slot.double()) }
    func decode(_ type: Int.Type) throws -> Int { try slot.integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try slot.integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try slot.integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try slot.integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try slot.integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try slot.integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try slot.integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try slot.integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try slot.integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try slot.integer(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try slot.decodable(type) }
}
