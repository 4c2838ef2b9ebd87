/// Identifies a peer (a user, group, channel, secret chat…): a 3-bit namespace and a 61-bit signed id,
/// packed into one Int64 that tables use as a key.
///
/// Packing (`toInt64()`), from the least significant bit:
///
/// | bits   | holds                                  |
/// |--------|----------------------------------------|
/// | 0–31   | id bits 0–31                           |
/// | 32–34  | namespace (0…7)                        |
/// | 35–63  | id bits 32–60 (bit 63 is the id's sign) |
///
/// This is the layout of Postbox's 64-bit peer ids: for an id in 0…2³²−1 it equals the legacy layout
/// `namespace << 32 | id`. Unlike Postbox, the id is sign-extended when unpacked, so negative ids
/// (−2⁶⁰…2⁶⁰−1) round-trip too.
public struct PeerId: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The kind of peer. The app defines the values (Postbox's TelegramCore uses 0 for users, 1 for groups,
    /// 2 for channels, 3 for secret chats); there are eight, 0…7.
    public struct Namespace: Hashable, Comparable, Sendable, CustomStringConvertible {
        /// The largest namespace, 7.
        public static let max = Namespace(7)

        /// The namespace number, 0…7.
        public let rawValue: Int32

        /// A namespace; `rawValue` must be in 0…7.
        public init(_ rawValue: Int32) {
            precondition(rawValue >= 0 && rawValue <= 7, "PeerId.Namespace must be in 0...7, got \(rawValue)")
            self.rawValue = rawValue
        }

        /// A namespace, or nil when `rawValue` is outside 0…7.
        public init?(exactly rawValue: Int32) {
            guard rawValue >= 0 && rawValue <= 7 else { return nil }
            self.rawValue = rawValue
        }

        public static func < (lhs: Namespace, rhs: Namespace) -> Bool { lhs.rawValue < rhs.rawValue }
        public var description: String { "\(rawValue)" }
    }

    /// The number of the peer within its namespace: a signed 61-bit value.
    public struct Id: Hashable, Comparable, Sendable, CustomStringConvertible {
        /// The smallest id, −2⁶⁰.
        public static let min = Id(-(1 << 60))
        /// The largest id, 2⁶⁰ − 1.
        public static let max = Id((1 << 60) - 1)

        /// The id as a 64-bit integer.
        public let rawValue: Int64

        /// An id; `rawValue` must be in `Id.min.rawValue...Id.max.rawValue`.
        public init(_ rawValue: Int64) {
            precondition(rawValue >= -(1 << 60) && rawValue < (1 << 60), "PeerId.Id must fit in 61 signed bits, got \(rawValue)")
            self.rawValue = rawValue
        }

        /// An id, or nil when `rawValue` does not fit in 61 signed bits.
        public init?(exactly rawValue: Int64) {
            guard rawValue >= -(1 << 60) && rawValue < (1 << 60) else { return nil }
            self.rawValue = rawValue
        }

        public static func < (lhs: Id, rhs: Id) -> Bool { lhs.rawValue < rhs.rawValue }
        public var description: String { "\(rawValue)" }
    }

    /// The peer's namespace.
    public let namespace: Namespace
    /// The peer's id within the namespace.
    public let id: Id

    /// A peer id from its parts.
    public init(namespace: Namespace, id: Id) {
        self.namespace = namespace
        self.id = id
    }

    /// A peer id from its parts, the short way: `PeerId(0, 1001)`, or with the app's named namespaces
    /// (`extension PeerId.Namespace { static let user: Self = 0 }`) `PeerId(.user, 1001)`.
    public init(_ namespace: Namespace, _ id: Id) {
        self.init(namespace: namespace, id: id)
    }

    /// Unpacks an id packed by ``toInt64()``. Every Int64 is a valid packing.
    public init(_ int64: Int64) {
        let bits = UInt64(bitPattern: int64)
        namespace = Namespace(Int32(truncatingIfNeeded: (bits >> 32) & 0x7))
        let high = int64 >> 35
        let low = Int64(bits & 0xffff_ffff)
        id = Id((high << 32) | low)
    }

    /// The packed form (see the type's documentation); `PeerId(toInt64())` is `self`.
    public func toInt64() -> Int64 {
        let idBits = UInt64(bitPattern: id.rawValue)
        let packed = (idBits & 0xffff_ffff) | (UInt64(namespace.rawValue) << 32) | ((idBits >> 32) << 35)
        return Int64(bitPattern: packed)
    }

    /// Orders by namespace, then id (Postbox's order).
    public static func < (lhs: PeerId, rhs: PeerId) -> Bool {
        if lhs.namespace != rhs.namespace { return lhs.namespace < rhs.namespace }
        return lhs.id < rhs.id
    }

    public var description: String { "\(namespace.rawValue):\(id.rawValue)" }
}

/// A peer id is encoded as its packed Int64 (``PeerId/toInt64()``).
extension PeerId: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(Int64.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(toInt64())
    }
}

extension PeerId.Namespace: ExpressibleByIntegerLiteral {
    /// A namespace written as a number, 0…7 (`let user: PeerId.Namespace = 0`).
    public init(integerLiteral value: Int32) { self.init(value) }
}

extension PeerId.Id: ExpressibleByIntegerLiteral {
    /// An id written as a number.
    public init(integerLiteral value: Int64) { self.init(value) }
}
