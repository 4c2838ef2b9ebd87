/// Which counter a tag summary is: one single-bit tag of one chat's message namespace (Postbox's
/// `MessageHistoryTagsSummaryKey`, without threads).
public struct MessageHistoryTagsSummaryKey: Hashable, Sendable, CustomStringConvertible {
    /// One tag bit (a summary counts one bit; see ``SeedConfiguration/messageTagsWithSummary``).
    public let tag: MessageTags
    public let peerId: PeerId
    public let namespace: MessageId.Namespace

    public init(tag: MessageTags, peerId: PeerId, namespace: MessageId.Namespace) {
        self.tag = tag
        self.peerId = peerId
        self.namespace = namespace
    }

    public var description: String { "summary(tag \(tag.rawValue), \(peerId), ns \(namespace.rawValue))" }
}

/// The ids a summary's count already covers (Postbox's `MessageHistoryTagNamespaceCountValidityRange`): the server
/// counted every message with an id up to `maxId` when it gave the count.
public struct MessageHistoryTagNamespaceCountValidityRange: Hashable, Sendable {
    /// The highest id the count covers; 0 when the count was only ever kept locally.
    public let maxId: MessageId.Id

    public init(maxId: MessageId.Id) { self.maxId = maxId }
}

/// How many messages of a chat's namespace carry a tag (Postbox's `MessageHistoryTagNamespaceSummary`), for example
/// the unread mentions of a chat.
///
/// The count is the server's (set by ``Transaction/replaceMessageTagSummary(peerId:tagMask:namespace:count:maxId:)``)
/// kept up to date by the history: see ``Transaction/getMessageTagSummary(peerId:tagMask:namespace:)`` for the rule.
public struct MessageHistoryTagNamespaceSummary: Hashable, Sendable {
    /// Bumped by every replacement from the server (wrapping from `Int32.max` to 1); local changes keep it.
    public let version: Int32
    /// The number of tagged messages; never negative.
    public let count: Int32
    /// The ids the server's count covered.
    public let range: MessageHistoryTagNamespaceCountValidityRange

    public init(version: Int32, count: Int32, range: MessageHistoryTagNamespaceCountValidityRange) {
        self.version = version
        self.count = count
        self.range = range
    }

    /// This summary with `delta` added to the count, clamped at 0 (and at `Int32.max`).
    func withAddedCount(_ delta: Int32) -> MessageHistoryTagNamespaceSummary {
        let count = Int32(clamping: max(0, Int64(self.count) + Int64(delta)))
        return MessageHistoryTagNamespaceSummary(version: version, count: count, range: range)
    }
}
