/// A chat-list group: the main list or a folder-like group (archive…).
public enum PeerGroupId: Hashable, Sendable, CustomStringConvertible {
    /// The main chat list.
    case root
    /// Another group, by number. `group(0)` is not used: raw value 0 is the root.
    case group(Int32)

    /// The number stored in keys: 0 for the root, the group number otherwise.
    public var rawValue: Int32 {
        switch self {
        case .root: return 0
        case let .group(id): return id
        }
    }

    /// The group stored as `rawValue` (0 is the root).
    public init(rawValue: Int32) {
        self = rawValue == 0 ? .root : .group(rawValue)
    }

    public var description: String {
        switch self {
        case .root: return "root"
        case let .group(id): return "group(\(id))"
        }
    }
}
