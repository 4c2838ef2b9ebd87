/// Which history a hole belongs to: all of a chat's messages, or only those with a tag (the "Media" tab's
/// photos, files…). A chat can be complete everywhere and still have holes in a tag space.
public enum MessageHistoryHoleSpace: Hashable, Sendable, CustomStringConvertible {
    /// All messages.
    case everywhere
    /// Only messages carrying `tag` (one tag bit; an empty tag is not a valid space).
    case tag(MessageTags)

    /// The value stored in the hole index key: 0 for everywhere, the tag bits otherwise.
    public var rawValue: UInt32 {
        switch self {
        case .everywhere: return 0
        case let .tag(tag): return tag.rawValue
        }
    }

    /// The space stored as `rawValue` (0 is everywhere).
    public init(rawValue: UInt32) {
        self = rawValue == 0 ? .everywhere : .tag(MessageTags(rawValue: rawValue))
    }

    public var description: String {
        switch self {
        case .everywhere: return "everywhere"
        case let .tag(tag): return "tag(\(tag.rawValue))"
        }
    }
}

/// One hole: a closed range of message ids of one peer, namespace and space that may exist on the server but
/// are not stored locally.
public struct MessageHistoryHole: Hashable, Sendable, CustomStringConvertible {
    public let peerId: PeerId
    public let namespace: MessageId.Namespace
    public let space: MessageHistoryHoleSpace
    /// The missing ids, within ``MessageHistoryHoleRanges/validIds``.
    public let range: ClosedRange<MessageId.Id>

    public init(peerId: PeerId, namespace: MessageId.Namespace, space: MessageHistoryHoleSpace, range: ClosedRange<MessageId.Id>) {
        self.peerId = peerId
        self.namespace = namespace
        self.space = space
        self.range = range
    }

    public var description: String { "hole(\(peerId) ns \(namespace) \(space) \(range.lowerBound)...\(range.upperBound))" }
}
