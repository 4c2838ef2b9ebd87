/// A message as the app reads it — from ``Transaction/getMessage(_:)``, ``Transaction/getMessageHistory(peerId:namespaces:anchor:direction:limit:)``,
/// the history, messages and peer views, and change records: the stored fields, with the peers and the messages
/// it refers to resolved (Postbox's `Message`).
///
/// Immutable; a changed message is a new instance with a higher ``stableVersion``. The peers are those known
/// locally when the message was read: ``author`` is nil both for a message without an author and for an author
/// not stored yet (``authorId`` tells them apart). ``storeMessage`` gives the message back in the form
/// ``Transaction/updateMessage(_:_:)`` takes.
public final class Message: Sendable {
    /// A store-wide id that stays the same while the message moves (an id or timestamp change).
    public let stableId: UInt32
    /// Bumped every time the stored message changes.
    public let stableVersion: UInt32
    public let id: MessageId
    /// The message's date (seconds since 1970).
    public let timestamp: Int32
    /// The stored fields (shared with ``StoreMessage``).
    let fields: MessageFields
    /// The author, if known locally.
    public let author: (any Peer)?
    /// Where a forwarded message came from, with the peers known locally resolved.
    public let forwardInfo: MessageForwardInfo?
    /// The message's peer and every peer its author, forward info, attributes and media refer to that is known
    /// locally (and the chat's ``Peer/associatedPeerId``, for example the user of a secret chat).
    public let peers: [PeerId: any Peer]
    /// The stored messages that attributes refer to (for example the replied-to message), one level deep: their
    /// own ``associatedMessages`` are empty.
    public let associatedMessages: [MessageId: Message]

    /// A message from its parts — for previews and tests; Postbox builds the messages it returns itself.
    public init(
        stableId: UInt32,
        stableVersion: UInt32,
        id: MessageId,
        globallyUniqueId: Int64? = nil,
        groupingKey: Int64? = nil,
        threadId: Int64? = nil,
        timestamp: Int32,
        flags: MessageFlags = [],
        tags: MessageTags = [],
        globalTags: GlobalMessageTags = [],
        localTags: LocalMessageTags = [],
        forwardInfo: MessageForwardInfo? = nil,
        authorId: PeerId?,
        author: (any Peer)? = nil,
        text: String,
        attributes: [any MessageAttribute] = [],
        media: [any Media] = [],
        peers: [PeerId: any Peer] = [:],
        associatedMessages: [MessageId: Message] = [:]
    ) {
        self.stableId = stableId
        self.stableVersion = stableVersion
        self.id = id
        self.timestamp = timestamp
        fields = MessageFields(
            globallyUniqueId: globallyUniqueId, groupingKey: groupingKey, threadId: threadId, flags: flags, tags: tags,
            globalTags: globalTags, localTags: localTags, forwardInfo: forwardInfo?.storeForwardInfo, authorId: authorId,
            text: text, attributes: attributes, media: media)
        self.author = author
        self.forwardInfo = forwardInfo
        self.peers = peers
        self.associatedMessages = associatedMessages
    }

    /// A stored message with what it refers to resolved (``MessageRenderer``).
    init(_ stored: IntermediateMessage, author: (any Peer)?, forwardInfo: MessageForwardInfo?, peers: [PeerId: any Peer],
         associatedMessages: [MessageId: Message]) {
        stableId = stored.stableId
        stableVersion = stored.stableVersion
        id = stored.id
        timestamp = stored.timestamp
        fields = stored.fields
        self.author = author
        self.forwardInfo = forwardInfo
        self.peers = peers
        self.associatedMessages = associatedMessages
    }

    /// A client-chosen random id, unique per peer, that matches a sent message with its server copy.
    public var globallyUniqueId: Int64? { fields.globallyUniqueId }
    /// Messages sent together as an album share a grouping key.
    public var groupingKey: Int64? { fields.groupingKey }
    /// The thread (forum topic, comments) the message belongs to.
    public var threadId: Int64? { fields.threadId }
    public var flags: MessageFlags { fields.flags }
    public var tags: MessageTags { fields.tags }
    public var globalTags: GlobalMessageTags { fields.globalTags }
    public var localTags: LocalMessageTags { fields.localTags }
    /// Who wrote the message (``author`` is that peer, when it is known locally).
    public var authorId: PeerId? { fields.authorId }
    public var text: String { fields.text }
    public var attributes: [any MessageAttribute] { fields.attributes }
    public var media: [any Media] { fields.media }

    /// The ids of the messages the attributes refer to, in attribute order, each once.
    public var associatedMessageIds: [MessageId] {
        var seen = Set<MessageId>()
        return attributes.flatMap(\.associatedMessageIds).filter { seen.insert($0).inserted }
    }

    /// The message's position in its chat's history.
    public var index: MessageIndex { MessageIndex(id: id, timestamp: timestamp) }

    /// The chat the message belongs to, if known locally.
    public var peer: (any Peer)? { peers[id.peerId] }

    /// Whether the message counts for unread counters (`incoming` or `countedAsIncoming`).
    public var countsAsIncoming: Bool { flags.contains(.incoming) || flags.contains(.countedAsIncoming) }

    /// The message as a ``StoreMessage`` with its id, for storing it again with changes
    /// (``Transaction/updateMessage(_:_:)``).
    public var storeMessage: StoreMessage { StoreMessage(id: .id(id), timestamp: timestamp, fields: fields) }
}
