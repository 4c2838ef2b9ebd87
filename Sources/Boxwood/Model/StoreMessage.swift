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
    /// A client-chosen random id, unique per peer, that matches a sent message with its server copy.
    public let globallyUniqueId: Int64?
    /// Messages sent together as an album share a grouping key.
    public let groupingKey: Int64?
    /// The thread (forum topic, comments) the message belongs to.
    public let threadId: Int64?
    /// The message's date (seconds since 1970).
    public let timestamp: Int32
    public let flags: MessageFlags
    public let tags: MessageTags
    public let globalTags: GlobalMessageTags
    public let localTags: LocalMessageTags
    public let forwardInfo: StoreMessageForwardInfo?
    /// Who wrote the message.
    public let authorId: PeerId?
    public let text: String
    public let attributes: [any MessageAttribute]
    public let media: [any Media]

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
        self.authorId = authorId
        self.text = text
        self.attributes = attributes
        self.media = media
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
    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        let peerId = PeerId(try decoder.decodeInt64(forKey: "p"))
        let namespace = try decoder.decodeInt32(forKey: "n")
        if let messageId = decoder.decodeOptionalInt32ForKey("i") {
            id = .id(MessageId(peerId: peerId, namespace: namespace, id: messageId))
        } else {
            id = .partial(peerId, namespace)
        }
        globallyUniqueId = decoder.decodeOptionalInt64ForKey("u")
        groupingKey = decoder.decodeOptionalInt64ForKey("g")
        threadId = decoder.decodeOptionalInt64ForKey("h")
        timestamp = try decoder.decodeInt32(forKey: "t")
        flags = MessageFlags(rawValue: UInt32(bitPattern: decoder.decodeInt32ForKey("f", orElse: 0)))
        tags = MessageTags(rawValue: UInt32(bitPattern: decoder.decodeInt32ForKey("tg", orElse: 0)))
        globalTags = GlobalMessageTags(rawValue: UInt32(bitPattern: decoder.decodeInt32ForKey("gt", orElse: 0)))
        localTags = LocalMessageTags(rawValue: UInt32(bitPattern: decoder.decodeInt32ForKey("lt", orElse: 0)))
        forwardInfo = try decoder.decodeObjectForKey("fi", as: StoreMessageForwardInfo.self)
        authorId = decoder.decodeOptionalInt64ForKey("a").map(PeerId.init)
        text = decoder.decodeStringForKey("x", orElse: "")
        attributes = try decoder.decodeObjectArrayForKey("at", skippingUnknownTypes: true).compactMap { $0 as? any MessageAttribute }
        media = try decoder.decodeObjectArrayForKey("m", skippingUnknownTypes: true).compactMap { $0 as? any Media }
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(id.peerId.toInt64(), forKey: "p")
        encoder.encodeInt32(id.namespace, forKey: "n")
        if case let .id(messageId) = id { encoder.encodeInt32(messageId.id, forKey: "i") }
        if let globallyUniqueId { encoder.encodeInt64(globallyUniqueId, forKey: "u") }
        if let groupingKey { encoder.encodeInt64(groupingKey, forKey: "g") }
        if let threadId { encoder.encodeInt64(threadId, forKey: "h") }
        encoder.encodeInt32(timestamp, forKey: "t")
        if !flags.isEmpty { encoder.encodeInt32(Int32(bitPattern: flags.rawValue), forKey: "f") }
        if !tags.isEmpty { encoder.encodeInt32(Int32(bitPattern: tags.rawValue), forKey: "tg") }
        if !globalTags.isEmpty { encoder.encodeInt32(Int32(bitPattern: globalTags.rawValue), forKey: "gt") }
        if !localTags.isEmpty { encoder.encodeInt32(Int32(bitPattern: localTags.rawValue), forKey: "lt") }
        if let forwardInfo { encoder.encodeObject(forwardInfo, forKey: "fi") }
        if let authorId { encoder.encodeInt64(authorId.toInt64(), forKey: "a") }
        encoder.encodeString(text, forKey: "x")
        if !attributes.isEmpty { encoder.encodeObjectArray(attributes.map { $0 as any PostboxCoding }, forKey: "at") }
        if !media.isEmpty { encoder.encodeObjectArray(media.map { $0 as any PostboxCoding }, forKey: "m") }
    }
}
