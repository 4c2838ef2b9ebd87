/// A value built by the Codable bridge's encoder. `Encodable` types may create a container and fill it later
/// (and nested containers after that), so the bridge builds this small tree first and writes it in one pass.
enum CodableNode {
    case int32(Int32)
    case int64(Int64)
    case bool(Bool)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    case null
    /// A keyed container: written as an object with the anonymous type hash 0.
    case keyed(KeyedCodableNode)
    /// An unkeyed container: written as a value array.
    case unkeyed(UnkeyedCodableNode)
    /// A `superEncoder()` whose container is known only once it has been used.
    case deferred(AdaptedPostboxEncoder)

    var fieldType: PostboxFieldType {
        switch self {
        case .int32: return .int32
        case .int64: return .int64
        case .bool: return .bool
        case .double: return .double
        case .string: return .string
        case .bytes: return .bytes
        case .null: return .null
        case .keyed: return .object
        case .unkeyed: return .valueArray
        case let .deferred(encoder): return encoder.result.fieldType
        }
    }

    /// The field that holds a ``PostboxCodable`` value that is not a keyed container.
    static let wholeValueKey = "_"

    /// Writes this value as the fields of the enclosing object (a ``PostboxCodable``'s layout): a keyed
    /// container's entries become the fields; any other value becomes the single field ``wholeValueKey``.
    func writeAsObjectFields(to encoder: PostboxEncoder) {
        switch self {
        case let .keyed(node):
            for (key, value) in zip(node.keys, node.values) { value.write(asFieldNamed: key, to: encoder) }
        case let .deferred(deferredEncoder):
            deferredEncoder.result.writeAsObjectFields(to: encoder)
        default:
            write(asFieldNamed: Self.wholeValueKey, to: encoder)
        }
    }

    /// Writes this value as the field `key`.
    func write(asFieldNamed key: String, to encoder: PostboxEncoder) {
        encoder.writeKey(key, fieldType)
        writePayload(to: encoder)
    }

    /// Writes this value's payload (the bytes after the type tag).
    func writePayload(to encoder: PostboxEncoder) {
        let buffer = encoder.buffer
        switch self {
        case let .int32(value): buffer.append(value)
        case let .int64(value): buffer.append(value)
        case let .bool(value): buffer.append(UInt8(value ? 1 : 0))
        case let .double(value): buffer.append(Int64(bitPattern: value.bitPattern))
        case let .string(value): encoder.writeString(value)
        case let .bytes(value):
            encoder.writeLength(value.count)
            value.withUnsafeBytes { buffer.append($0) }
        case .null: break
        case let .keyed(node):
            encoder.writeObject(hash: PostboxTypeRegistry.anonymousTypeHash) {
                for (key, value) in zip(node.keys, node.values) { value.write(asFieldNamed: key, to: encoder) }
            }
        case let .unkeyed(node):
            encoder.writeLength(node.items.count)
            for item in node.items {
                buffer.append(item.fieldType.rawValue)
                item.writePayload(to: encoder)
            }
        case let .deferred(deferredEncoder):
            deferredEncoder.result.writePayload(to: encoder)
        }
    }
}

/// The fields of a keyed container in the order they were first encoded; encoding a key again replaces its value.
final class KeyedCodableNode {
    private(set) var keys: [String] = []
    private(set) var values: [CodableNode] = []
    private var positions: [String: Int] = [:]

    func set(_ value: CodableNode, forKey key: String) {
        if let position = positions[key] {
            values[position] = value
        } else {
            positions[key] = keys.count
            keys.append(key)
            values.append(value)
        }
    }
}

/// The elements of an unkeyed container.
final class UnkeyedCodableNode {
    var items: [CodableNode] = []
}

/// The coding key of an element of an unkeyed container, for coding paths in errors.
struct IndexCodingKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { return nil }
}

/// The key `superEncoder()` and `superDecoder()` use, as in Foundation's coders.
struct SuperCodingKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { if stringValue != "super" { return nil } }
    init?(intValue: Int) { return nil }
}
