/// Where a forwarded message came from, as stored: peer and message ids.
public struct StoreMessageForwardInfo: Hashable, Sendable {
    /// The original author.
    public let authorId: PeerId?
    /// The chat the message was forwarded from (for example a channel).
    public let sourceId: PeerId?
    /// The original message in that chat.
    public let sourceMessageId: MessageId?
    /// The original message's date.
    public let date: Int32
    /// The original author's signature, for channel posts.
    public let authorSignature: String?

    public init(authorId: PeerId?, sourceId: PeerId?, sourceMessageId: MessageId?, date: Int32, authorSignature: String?) {
        self.authorId = authorId
        self.sourceId = sourceId
        self.sourceMessageId = sourceMessageId
        self.date = date
        self.authorSignature = authorSignature
    }
}

extension StoreMessageForwardInfo: PostboxCoding {
    public static let postboxTypeName = "StoreMessageForwardInfo"

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        authorId = decoder.decodeOptionalInt64ForKey("a").map(PeerId.init)
        sourceId = decoder.decodeOptionalInt64ForKey("s").map(PeerId.init)
        sourceMessageId = try decoder.decodeObjectForKey("m", as: MessageId.self)
        date = try decoder.decodeInt32(forKey: "d")
        authorSignature = decoder.decodeOptionalStringForKey("g")
    }

    public func encode(_ encoder: PostboxEncoder) {
        if let authorId { encoder.encodeInt64(authorId.toInt64(), forKey: "a") }
        if let sourceId { encoder.encodeInt64(sourceId.toInt64(), forKey: "s") }
        if let sourceMessageId { encoder.encodeObject(sourceMessageId, forKey: "m") }
        encoder.encodeInt32(date, forKey: "d")
        if let authorSignature { encoder.encodeString(authorSignature, forKey: "g") }
    }
}

/// Where a forwarded message came from, as read: the stored ids with the peers known locally resolved.
public struct MessageForwardInfo: Sendable {
    /// The original author's id.
    public let authorId: PeerId?
    /// The original author, if known locally.
    public let author: (any Peer)?
    /// The id of the chat the message was forwarded from.
    public let sourceId: PeerId?
    /// The chat the message was forwarded from, if known locally.
    public let source: (any Peer)?
    /// The original message in that chat.
    public let sourceMessageId: MessageId?
    /// The original message's date.
    public let date: Int32
    /// The original author's signature, for channel posts.
    public let authorSignature: String?

    /// The stored info with `author` and `source` the peers it names (nil where unknown).
    public init(_ stored: StoreMessageForwardInfo, author: (any Peer)?, source: (any Peer)?) {
        authorId = stored.authorId
        self.author = author
        sourceId = stored.sourceId
        self.source = source
        sourceMessageId = stored.sourceMessageId
        date = stored.date
        authorSignature = stored.authorSignature
    }

    /// The ids, as stored.
    public var storeForwardInfo: StoreMessageForwardInfo {
        StoreMessageForwardInfo(authorId: authorId, sourceId: sourceId, sourceMessageId: sourceMessageId, date: date,
                                authorSignature: authorSignature)
    }
}
