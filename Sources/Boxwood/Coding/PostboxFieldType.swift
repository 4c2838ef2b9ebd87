/// The type tag byte written after every field key (and before every element of a value array).
///
/// Tags 0–13 are Postbox's; 14 (`valueArray`) is Boxwood's addition for `Codable` unkeyed containers, whose
/// elements may differ in type. The payload layout of each tag is specified in `docs/coding-format.md`.
public enum PostboxFieldType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// 4-byte little-endian two's complement integer.
    case int32 = 0
    /// 8-byte little-endian two's complement integer.
    case int64 = 1
    /// One byte, 0 or 1.
    case bool = 2
    /// 8-byte little-endian IEEE-754 binary64.
    case double = 3
    /// Int32 byte length, then UTF-8 bytes.
    case string = 4
    /// Int32 type hash, Int32 body length, then the nested object's fields.
    case object = 5
    /// Int32 count, then `count` Int32 values.
    case int32Array = 6
    /// Int32 count, then `count` Int64 values.
    case int64Array = 7
    /// Int32 count, then `count` × (type hash, body length, body).
    case objectArray = 8
    /// Int32 count, then `count` × (key object, value object), each as (type hash, body length, body).
    case objectDictionary = 9
    /// Int32 byte length, then raw bytes.
    case bytes = 10
    /// No payload: the field is explicitly absent.
    case null = 11
    /// Int32 count, then `count` × (Int32 length, UTF-8 bytes).
    case stringArray = 12
    /// Int32 count, then `count` × (Int32 length, raw bytes).
    case bytesArray = 13
    /// Int32 count, then `count` × (type tag, payload): a heterogeneous list.
    case valueArray = 14

    public var description: String {
        switch self {
        case .int32: return "int32"
        case .int64: return "int64"
        case .bool: return "bool"
        case .double: return "double"
        case .string: return "string"
        case .object: return "object"
        case .int32Array: return "int32Array"
        case .int64Array: return "int64Array"
        case .objectArray: return "objectArray"
        case .objectDictionary: return "objectDictionary"
        case .bytes: return "bytes"
        case .null: return "null"
        case .stringArray: return "stringArray"
        case .bytesArray: return "bytesArray"
        case .valueArray: return "valueArray"
        }
    }
}
