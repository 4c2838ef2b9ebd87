/// A message as read from the store: the stored fields plus the peers, and the messages it refers to,
/// resolved. Immutable; an updated message is a new instance with a higher ``stableVersion``.
public final class Message: Sendable {
    /// A store-wide id that stays the same while the message moves (an id or timestamp change).
    public let stableId: UInt32
    /// Bumped every time the stored message changes.
    public let stableVersion: UInt32
    public let id: MessageId
    public let globallyUniqueId: Int64?
    public let groupingKey: Int64?
    public let threadId: Int64?
    public let timestamp: Int32
    public let flags: MessageFlags
    public let tags: MessageTags
    public let globalTags: GlobalMessageTags
    public let localTags: LocalMessageTags
    public let forwardInfo: MessageForwardInfo?
    /// The author, if known locally.
    public let author: (any Peer)?
    public let text: String
    public let attributes: [any MessageAttribute]
    public let media: [any Media]
    /// The message's peer and every peer its author, attributes and media refer to that is known locally.
    public let peers: [PeerId: any Peer]
    /// Messages that attributes refer to (for example the replied-to message), when loaded.
    public let associatedMessages: [MessageId: Message]
    /// Ids of the messages attributes refer to.
    public let associatedMessageIds: [MessageId]

    public init(
        stableId: UInt32,
        stableVersion: UInt32,
        id: MessageId,
        globallyUniqueId: Int64?,
        groupingKey: Int64?,
        threadId: Int64?,
        timestamp: Int32,
        flags: MessageFlags,
        tags: MessageTags,
        globalTags: GlobalMessageTags,
        localTags: LocalMessageTags,
        forwardInfo: MessageForwardInfo?,
        author: (any Peer)?,
        text: String,
        attributes: [any MessageAttribute],
        media: [any Media],
        peers: [PeerId: any Peer],
        associatedMessages: [MessageId: Message],
        associatedMessageIds: [MessageId]
    ) {
        self.stableId = stableId
        self.stableVersion = stableVersion
        self.id = id
        self.globallyUniqueId = globallyUniqueId
        self.groupingKey = groupingKey
        self.threadId = threadId
        self.timestamp = timestamp
        self.flags = flags
        self.tags = tags
        self.globalTags = globalTags
        self.localTags = localTags
        self.forwardInfo = forwardInfo
        self.author = author
        self.text = text
        self.attributes = attributes
        self.media = media
        self.peers = peers
        self.associatedMessages = associatedMessages
        self.associatedMessageIds = associatedMessageIds
    }

    /// The message's position in its chat's history.
    public var index: MessageIndex { MessageIndex(id: id, timestamp: timestamp) }

    /// The chat the message belongs to, if known locally.
    public var peer: (any Peer)? { peers[id.peerId] }
}
