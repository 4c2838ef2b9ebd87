/// The id of a message being stored: either complete, or only its peer and namespace when the id is to be
/// assigned by Postbox (the next id of that peer and namespace; used for locally created messages).
public enum StoreMessageId: Hashable, Sendable {
    /// A message whose id is known (for example one received from the server).
    case id(MessageId)
    /// A message whose id will be assigned on insertion.
    case partial(PeerId, MessageId.Namespace)

    /// The peer the message belongs to.
    public var peerId: PeerId {
        switch self {
        case let .id(id): return id.peerId
        case let .partial(peerId, _): return peerId
        }
    }

    /// The message namespace.
    public var namespace: MessageId.Namespace {
        switch self {
        case let .id(id): return id.namespace
        case let .partial(_, namespace): return namespace
        }
    }
}

/// A message as handed to Postbox for storing (`addMessages`, `updateMessage`). Peers are referenced by id;
/// attributes and media are app types stored through the coder.
public struct StoreMessage: Sendable {
    /// The message id, or its peer and namespace when the id is assigned on insertion.
    public let id: StoreMessageId
    /// The message's date (seconds since 1970).
    public let timestamp: Int32
    /// Everything else, shared with ``Message``.
    let fields: MessageFields

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
    public var forwardInfo: StoreMessageForwardInfo? { fields.forwardInfo }
    /// Who wrote the message.
    public var authorId: PeerId? { fields.authorId }
    public var text: String { fields.text }
    public var attributes: [any MessageAttribute] { fields.attributes }
    public var media: [any Media] { fields.media }

    public init(
        id: StoreMessageId,
        globallyUniqueId: Int64? = nil,
        groupingKey: Int64? = nil,
        threadId: Int64? = nil,
        timestamp: Int32,
        flags: MessageFlags = [],
        tags: MessageTags = [],
        globalTags: GlobalMessageTags = [],
        localTags: LocalMessageTags = [],
        forwardInfo: StoreMessageForwardInfo? = nil,
        authorId: PeerId?,
        text: String,
        attributes: [any MessageAttribute] = [],
        media: [any Media] = []
    ) {
        self.init(id: id, timestamp: timestamp, fields: MessageFields(
            globallyUniqueId: globallyUniqueId, groupingKey: groupingKey, threadId: threadId, flags: flags, tags: tags,
            globalTags: globalTags, localTags: localTags, forwardInfo: forwardInfo, authorId: authorId, text: text,
            attributes: attributes, media: media))
    }

    init(id: StoreMessageId, timestamp: Int32, fields: MessageFields) {
        self.id = id
        self.timestamp = timestamp
        self.fields = fields
    }

    /// The message's index, when its id is complete.
    public var index: MessageIndex? {
        guard case let .id(id) = id else { return nil }
        return MessageIndex(id: id, timestamp: timestamp)
    }
}

/// Stored with attributes and media decoded through the type registry; attribute and media types the reader
/// does not know (written by a newer app version) are left out rather than failing the whole message.
extension StoreMessage: PostboxCoding {
    public static let postboxTypeName = "StoreMessage"

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        let peerId = PeerId(try decoder.decodeInt64(forKey: "p"))
        let namespace = MessageId.Namespace(try decoder.decodeInt32(forKey: "n"))
        if let messageId = decoder.decodeOptionalInt32ForKey("i") {
            id = .id(MessageId(peerId: peerId, namespace: namespace, id: messageId))
        } else {
            id = .partial(peerId, namespace)
        }
        timestamp = try decoder.decodeInt32(forKey: "t")
        fields = try MessageFields(decoder: decoder)
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(id.peerId.toInt64(), forKey: "p")
        encoder.encodeInt32(id.namespace.rawValue, forKey: "n")
        if case let .id(messageId) = id { encoder.encodeInt32(messageId.id, forKey: "i") }
        fields.encode(encoder, timestamp: timestamp, emptyText: true)
    }
}
