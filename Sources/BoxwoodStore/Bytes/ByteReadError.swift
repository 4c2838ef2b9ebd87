/// Why ``ByteReader`` could not read what was asked: the bytes (from a file, a WAL record or the network) do not
/// have the layout the reader expects. Reported instead of trapping or reading out of bounds.
public enum ByteReadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `needed` bytes were to be read at `offset`, but only `available` remain.
    case truncated(offset: Int, needed: Int, available: Int)
    /// The bytes were to end at `offset`, but `count` more follow.
    case trailingBytes(offset: Int, count: Int)
    /// The varint at `offset` runs past the end or is longer than the reader allows.
    case invalidVarint(offset: Int)
    /// A tag or flag byte at `offset` that the layout being read does not define.
    case undefinedByte(UInt8, offset: Int)

    public var description: String {
        switch self {
        case let .truncated(offset, needed, available):
            return "truncated at offset \(offset): needs \(needed) bytes, \(available) left"
        case let .trailingBytes(offset, count):
            return "\(count) unexpected bytes after offset \(offset)"
        case let .invalidVarint(offset):
            return "invalid varint at offset \(offset)"
        case let .undefinedByte(byte, offset):
            return "undefined byte \(byte) at offset \(offset)"
        }
    }
}
