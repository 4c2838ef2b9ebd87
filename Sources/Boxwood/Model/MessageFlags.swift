/// State bits of a stored message (Postbox's `MessageFlags`/`StoreMessageFlags`, same bit values).
public struct MessageFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Not yet accepted by the server; listed by the unsent-messages view.
    public static let unsent = MessageFlags(rawValue: 1 << 0)
    /// Sending failed (set at open for unsent messages older than a timeout).
    public static let failed = MessageFlags(rawValue: 1 << 1)
    /// Received rather than sent by this account.
    public static let incoming = MessageFlags(rawValue: 1 << 2)
    /// May become a chat's top message in the chat list.
    public static let topIndexable = MessageFlags(rawValue: 1 << 4)
    /// Being sent right now.
    public static let sending = MessageFlags(rawValue: 1 << 5)
    /// May be grouped into a feed.
    public static let canBeGroupedIntoFeed = MessageFlags(rawValue: 1 << 6)
    /// Was a scheduled message before being sent.
    public static let wasScheduled = MessageFlags(rawValue: 1 << 7)
    /// Counted as incoming for unread counters even though not `incoming`.
    public static let countedAsIncoming = MessageFlags(rawValue: 1 << 8)
    /// Forwarding and saving are restricted.
    public static let copyProtected = MessageFlags(rawValue: 1 << 9)
}
