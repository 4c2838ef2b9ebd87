import Foundation

/// The `Encoder` of the Codable bridge: keyed containers become anonymous objects (type hash 0), unkeyed
/// containers value arrays, single values the matching scalar field; `Data` becomes a bytes field.
/// Integers narrower than 32 bits and `UInt16` are written as Int32, `Int`/`Int64`/`UInt32` as Int64, and
/// `UInt`/`UInt64` as the Int64 with the same bit pattern. `Float` is written as Double.
final class AdaptedPostboxEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    private(set) var node: CodableNode?

    init(codingPath: [any CodingKey]) {
        self.codingPath = codingPath
    }

    /// What was encoded; an encoder that was never used is an empty keyed container.
    var result: CodableNode { node ?? .keyed(KeyedCodableNode()) }

    func setSingleValue(_ value: CodableNode) { node = value }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let storage: KeyedCodableNode
        if case let .keyed(existing)? = node {
            storage = existing
        } else {
            storage = KeyedCodableNode()
            node = .keyed(storage)
        }
        return KeyedEncodingContainer(AdaptedKeyedEncodingContainer<Key>(storage: storage, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let storage: UnkeyedCodableNode
        if case let .unkeyed(existing)? = node {
            storage = existing
        } else {
            storage = UnkeyedCodableNode()
            node = .unkeyed(storage)
        }
        return AdaptedUnkeyedEncodingContainer(storage: storage, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        AdaptedSingleValueEncodingContainer(encoder: self)
    }

    /// Encodes any `Encodable` value into a node.
    static func node<T: Encodable>(for value: T, codingPath: [any CodingKey]) throws -> CodableNode {
        if T.self == Data.self, let data = value as? Data { return .bytes([UInt8](data)) }
        let encoder = AdaptedPostboxEncoder(codingPath: codingPath)
        try value.encode(to: encoder)
        return encoder.result
    }
}

/// Scalar conversions shared by the three container kinds.
enum CodableScalar {
    static func node(_ value: Int) -> CodableNode { .int64(Int64(value)) }
    static func node(_ value: Int8) -> CodableNode { .int32(Int32(value)) }
    static func node(_ value: Int16) -> CodableNode { .int32(Int32(value)) }
    static func node(_ value: Int32) -> CodableNode { .int32(value) }
    static func node(_ value: Int64) -> CodableNode { .int64(value) }
    static func node(_ value: UInt) -> CodableNode { .int64(Int64(bitPattern: UInt64(value))) }
    static func node(_ value: UInt8) -> CodableNode { .int32(Int32(value)) }
    static func node(_ value: UInt16) -> CodableNode { .int32(Int32(value)) }
    static func node(_ value: UInt32) -> CodableNode { .int64(Int64(value)) }
    static func node(_ value: UInt64) -> CodableNode { .int64(Int64(bitPattern: value)) }
    static func node(_ value: Float) -> CodableNode { .double(Double(value)) }
    static func node(_ value: Double) -> CodableNode { .double(value) }
    static func node(_ value: Bool) -> CodableNode { .bool(value) }
    static func node(_ value: String) -> CodableNode { .string(value) }
}

struct AdaptedKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: KeyedCodableNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { storage.set(.null, forKey: key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { storage.set(CodableScalar.node(value), forKey: key.stringValue) }
    mutating func encode(_ value: String, forKey key: Key) throws { storage.set(CodableScalar.node(value), forKey: key.stringValue) }
    mutating func encode(_ value: Double, forKey key: Key) throws { storage.set(CodableScalar.node(value), forKey: key.stringValue) }
    mutating func encode(_ value: Float, forKey key: Key) throws { storage.set(CodableScalar.node(value), forKey: key.stringValue) }
    mutating func encode(_ value: Int, forKey key: Key) throws { storage.set(CodableScalar.node(value), forKey: key.stringValue) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { storage.set(CodableScalar.node(value), forKey: key.stringValue) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { storage.set(CodableScalar.node(value), forKey: key.stringValue) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { storage.set(CodableScalar.node(value), forKey: key.stringValue) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { storage.set(CodableScalar.node(value), forKey: key.stringValue) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { storage.set(CodableScalar.node(value), forKey: key.stringValue) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { storage.set(CodableScalar.node(value), forKey: key.stringValue) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { storage.set(CodableScalar.node(value), forKey: key.stringValue) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { storage.set(CodableScalar.node(value), forKey: key.stringValue) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { storage.set(CodableScalar.node(value), forKey: key.stringValue) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        storage.set(try AdaptedPostboxEncoder.node(for: value, codingPath: codingPath + [key]), forKey: key.stringValue)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = KeyedCodableNode()
        storage.set(.keyed(nested), forKey: key.stringValue)
        return KeyedEncodingContainer(AdaptedKeyedEncodingContainer<NestedKey>(storage: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = UnkeyedCodableNode()
        storage.set(.unkeyed(nested), forKey: key.stringValue)
        return AdaptedUnkeyedEncodingContainer(storage: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(named: SuperCodingKey())
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(named: key)
    }

    private func superEncoder(named key: any CodingKey) -> any Encoder {
        let encoder = AdaptedPostboxEncoder(codingPath: codingPath + [key])
        storage.set(.deferred(encoder), forKey: key.stringValue)
        return encoder
    }
}

struct AdaptedUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let storage: UnkeyedCodableNode
    let codingPath: [any CodingKey]
    var count: Int { storage.items.count }

    private var nextPath: [any CodingKey] { codingPath + [IndexCodingKey(count)] }

    mutating func encodeNil() throws { storage.items.append(.null) }
    mutating func encode(_ value: Bool) throws { storage.items.append(CodableScalar.node(value)) }
    mutating func encode(_ value: String) throws { storage.items.append(CodableScalar.node(value)) }
    mutating func encode(_ value: Double) throws { storage.items.append(CodableScalar.node(value)) }
    mutating func encode(_ value: Float) throws { storage.items.append(CodableScalar.node(value)) }
    mutating func encode(_ value: Int) throws { storage.items.append(CodableScalar.node(value)) }
    mutating func encode(_ value: Int8) throws { storage.items.append(CodableScalar.node(value)) }
    mutating func encode(_ value: Int16) throws { storage.items.append(CodableScalar.node(value)) }
    mutating func encode(_ value: Int32) throws { storage.items.append(CodableScalar.node(value)) }
    mutating func encode(_ value: Int64) throws { storage.items.append(CodableScalar.node(value)) }
    mutating func encode(_ value: UInt) throws { storage.items.append(CodableScalar.node(value)) }
    mutating func encode(_ value: UInt8) throws { storage.items.append(CodableScalar.node(value)) }
    mutating func encode(_ value: UInt16) throws { storage.items.append(CodableScalar.node(value)) }
    mutating func encode(_ value: UInt32) throws { storage.items.append(CodableScalar.node(value)) }
    mutating func encode(_ value: UInt64) throws { storage.items.append(CodableScalar.node(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        storage.items.append(try AdaptedPostboxEncoder.node(for: value, codingPath: nextPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath
        let nested = KeyedCodableNode()
        storage.items.append(.keyed(nested))
        return KeyedEncodingContainer(AdaptedKeyedEncodingContainer<NestedKey>(storage: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        let nested = UnkeyedCodableNode()
        storage.items.append(.unkeyed(nested))
        return AdaptedUnkeyedEncodingContainer(storage: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let encoder = AdaptedPostboxEncoder(codingPath: nextPath)
        storage.items.append(.deferred(encoder))
        return encoder
    }
}

struct AdaptedSingleValueEncodingContainer: SingleValueEncodingContainer {
    let encoder: AdaptedPostboxEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.setSingleValue(.null) }
    mutating func encode(_ value: Bool) throws { encoder.setSingleValue(CodableScalar.node(value)) }
    mutating func encode(_ value: String) throws { encoder.setSingleValue(CodableScalar.node(value)) }
    mutating func encode(_ value: Double) throws { encoder.setSingleValue(CodableScalar.node(value)) }
    mutating func encode(_ value: Float) throws { encoder.setSingleValue(CodableScalar.node(value)) }
    mutating func encode(_ value: Int) throws { encoder.setSingleValue(CodableScalar.node(value)) }
    mutating func encode(_ value: Int8) throws { encoder.setSingleValue(CodableScalar.node(value)) }
    mutating func encode(_ value: Int16) throws { encoder.setSingleValue(CodableScalar.node(value)) }
    mutating func encode(_ value: Int32) throws { encoder.setSingleValue(CodableScalar.node(value)) }
    mutating func encode(_ value: Int64) throws { encoder.setSingleValue(CodableScalar.node(value)) }
    mutating func encode(_ value: UInt) throws { encoder.setSingleValue(CodableScalar.node(value)) }
    mutating func encode(_ value: UInt8) throws { encoder.setSingleValue(CodableScalar.node(value)) }
    mutating func encode(_ value: UInt16) throws { encoder.setSingleValue(CodableScalar.node(value)) }
    mutating func encode(_ value: UInt32) throws { encoder.setSingleValue(CodableScalar.node(value)) }
    mutating func encode(_ value: UInt64) throws { encoder.setSingleValue(CodableScalar.node(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        encoder.setSingleValue(try AdaptedPostboxEncoder.node(for: value, codingPath: codingPath))
    }
}
