/// Per-peer message tags (photo, video, file, link… — the app defines the bits). The tags index keeps one
/// entry per tag bit, and a hole space can be limited to one tag.
public struct MessageTags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Every tag bit.
    public static let all = MessageTags(rawValue: 0xffff_ffff)

    /// The single-bit tags this set contains, lowest bit first.
    public var singleTags: [MessageTags] {
        (0..<32).compactMap { bit in rawValue & (1 << bit) != 0 ? MessageTags(rawValue: 1 << bit) : nil }
    }
}

/// Account-wide message tags (for example calls), indexed across all peers.
public struct GlobalMessageTags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Every tag bit.
    public static let all = GlobalMessageTags(rawValue: 0xffff_ffff)
}

/// Tags that exist only on this device (never synchronised), indexed across all peers.
public struct LocalMessageTags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Every tag bit.
    public static let all = LocalMessageTags(rawValue: 0xffff_ffff)
}
