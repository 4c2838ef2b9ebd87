import Boxwood

/// Formatting and links over a message's text (Telegram's `TextEntitiesMessageAttribute`), in UTF-16 offsets. Only
/// entities that lie inside the text are stored.
public struct SyncTextEntitiesAttribute: MessageAttribute, PostboxCodable, Equatable {
    public static let postboxTypeName = "SyncTextEntitiesAttribute"

    public let entities: [ApiMessageEntity]

    public init(entities: [ApiMessageEntity]) { self.entities = entities }

    public var associatedPeerIds: [PeerId] {
        entities.compactMap { if case let .mentionName(peerId) = $0.kind { peerId } else { nil } }
    }
}

/// The message this one replies to (Telegram's `ReplyMessageAttribute`). Reads resolve it into
/// ``Message/associatedMessages``; a reply whose message is not stored (deleted, or in a hole) resolves to nothing,
/// which a client shows as "deleted message".
public struct SyncReplyAttribute: MessageAttribute, Equatable {
    public static let postboxTypeName = "SyncReplyAttribute"

    public let messageId: MessageId

    public init(messageId: MessageId) { self.messageId = messageId }

    public var associatedMessageIds: [MessageId] { [messageId] }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        messageId = MessageId(peerId: PeerId(try decoder.decodeInt64(forKey: "p")), namespace: MessageId.Namespace(try decoder.decodeInt32(forKey: "n")),
                              id: try decoder.decodeInt32(forKey: "i"))
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(messageId.peerId.toInt64(), forKey: "p")
        encoder.encodeInt32(messageId.namespace.rawValue, forKey: "n")
        encoder.encodeInt32(messageId.id, forKey: "i")
    }
}

/// Reactions with their counts and the account's choice (Telegram's `ReactionsMessageAttribute`).
public struct SyncReactionsAttribute: MessageAttribute, PostboxCodable, Equatable {
    public static let postboxTypeName = "SyncReactionsAttribute"

    public let reactions: [ApiReaction]

    public init(reactions: [ApiReaction]) { self.reactions = reactions }

    /// The reaction the account chose, if any.
    public var chosen: String? { reactions.first { $0.chosen }?.emoji }
}

/// A channel post's view and forward counters (Telegram's `ViewCountMessageAttribute` and
/// `ForwardCountMessageAttribute`).
public struct SyncCountersAttribute: MessageAttribute, PostboxCodable, Equatable {
    public static let postboxTypeName = "SyncCountersAttribute"

    public let views: Int32?
    public let forwards: Int32?

    public init(views: Int32?, forwards: Int32?) {
        self.views = views
        self.forwards = forwards
    }
}
