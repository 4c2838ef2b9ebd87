/// Identifies a media item (photo, file, web page…) shared between messages: a namespace and an id.
public struct MediaId: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// A media namespace (photos, files, web pages… — the app defines the numbers); written as a number or named
    /// by the app, like ``MessageId/Namespace``.
    public struct Namespace: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
        /// The namespace number.
        public let rawValue: Int32

        public init(_ rawValue: Int32) { self.rawValue = rawValue }
        public init(integerLiteral value: Int32) { self.init(value) }

        public static func < (lhs: Namespace, rhs: Namespace) -> Bool { lhs.rawValue < rhs.rawValue }
        public var description: String { "\(rawValue)" }
    }
    /// A media id within its namespace.
    public typealias Id = Int64

    public let namespace: Namespace
    public let id: Id

    public init(namespace: Namespace, id: Id) {
        self.namespace = namespace
        self.id = id
    }

    /// Orders by namespace, then id.
    public static func < (lhs: MediaId, rhs: MediaId) -> Bool {
        if lhs.namespace != rhs.namespace { return lhs.namespace < rhs.namespace }
        return lhs.id < rhs.id
    }

    public var description: String { "\(namespace)_\(id)" }
}

extension MediaId: PostboxCoding {
    public static let postboxTypeName = "MediaId"

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        namespace = Namespace(try decoder.decodeInt32(forKey: "n"))
        id = try decoder.decodeInt64(forKey: "i")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(namespace.rawValue, forKey: "n")
        encoder.encodeInt64(id, forKey: "i")
    }
}

/// A media item attached to a message, implemented by the app and stored through the coder: each concrete type
/// declares a stable ``PostboxCoding/postboxTypeName`` and is registered at start-up with
/// ``declareEncodable(_:)``; a `Codable` type can conform to ``PostboxCodable`` instead of coding by hand.
///
/// Media with an ``id`` is stored once and shared by reference between the messages that carry it; media
/// without one is stored inline with its message.
public protocol Media: PostboxCoding, Sendable {
    /// The shared identity of this media, or nil for media stored inline.
    var id: MediaId? { get }
    /// Peers this media refers to (loaded along with the message).
    var peerIds: [PeerId] { get }
    /// Whether an unsent message carrying this media should not be marked failed automatically (for example an
    /// upload still in progress).
    func preventsAutomaticMessageSendingFailure() -> Bool
    /// Whether `other` is the same media with the same contents.
    func isEqual(to other: any Media) -> Bool
}

extension Media {
    public var peerIds: [PeerId] { [] }
    public func preventsAutomaticMessageSendingFailure() -> Bool { false }
}

extension Media where Self: Equatable {
    public func isEqual(to other: any Media) -> Bool { (other as? Self) == self }
}
