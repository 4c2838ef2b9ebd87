import Boxwood

extension SyncOperationLogTags {
    /// Edits, deletions and reactions waiting to be sent, in the order the user made them.
    public static let messageActions = PeerOperationLogTag(3)
}

/// An edit of the account's own cloud message waiting to be sent. The local copy already shows `text`;
/// `previousText` is put back if the server refuses the edit.
public struct EditMessageOperation: PostboxCoding, Equatable, Sendable {
    public static let postboxTypeName = "EditMessageOperation"

    public let messageId: Int32
    public let text: String
    public let previousText: String
    public let mutation: Int64

    public init(messageId: Int32, text: String, previousText: String, mutation: Int64) {
        self.messageId = messageId
        self.text = text
        self.previousText = previousText
        self.mutation = mutation
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        messageId = try decoder.decodeInt32(forKey: "i")
        text = decoder.decodeStringForKey("t", orElse: "")
        previousText = decoder.decodeStringForKey("p", orElse: "")
        mutation = try decoder.decodeInt64(forKey: "m")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(messageId, forKey: "i")
        encoder.encodeString(text, forKey: "t")
        encoder.encodeString(previousText, forKey: "p")
        encoder.encodeInt64(mutation, forKey: "m")
    }
}

/// A deletion for everyone waiting to be sent (the messages are already gone locally).
public struct DeleteMessagesOperation: PostboxCoding, Equatable, Sendable {
    public static let postboxTypeName = "DeleteMessagesOperation"

    public let ids: [Int32]
    public let mutation: Int64
    /// For everyone (Telegram's `revoke`); false: for this account only (its other devices too).
    public let revoke: Bool

    public init(ids: [Int32], mutation: Int64, revoke: Bool = true) {
        self.ids = ids
        self.mutation = mutation
        self.revoke = revoke
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        ids = decoder.decodeInt32ArrayForKey("i")
        mutation = try decoder.decodeInt64(forKey: "m")
        // Entries queued before the choice existed were deletions for everyone.
        revoke = decoder.decodeBoolForKey("v", orElse: true)
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32Array(ids, forKey: "i")
        encoder.encodeInt64(mutation, forKey: "m")
        encoder.encodeBool(revoke, forKey: "v")
    }
}

/// The account's reaction on a message waiting to be sent (nil: taken back). The local copy already shows it;
/// `previousReactions` are put back if the server refuses.
public struct SendReactionOperation: PostboxCoding, Equatable, Sendable {
    public static let postboxTypeName = "SendReactionOperation"

    public let messageId: Int32
    public let emoji: String?
    public let previousReactions: [ApiReaction]
    public let mutation: Int64

    public init(messageId: Int32, emoji: String?, previousReactions: [ApiReaction], mutation: Int64) {
        self.messageId = messageId
        self.emoji = emoji
        self.previousReactions = previousReactions
        self.mutation = mutation
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        messageId = try decoder.decodeInt32(forKey: "i")
        emoji = decoder.decodeOptionalStringForKey("e")
        previousReactions = (try decoder.decodeObjectForKey("p", as: SyncReactionsAttribute.self))?.reactions ?? []
        mutation = try decoder.decodeInt64(forKey: "m")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(messageId, forKey: "i")
        if let emoji { encoder.encodeString(emoji, forKey: "e") }
        encoder.encodeObject(SyncReactionsAttribute(reactions: previousReactions), forKey: "p")
        encoder.encodeInt64(mutation, forKey: "m")
    }
}

/// Why the server refused to send a message (Telegram's failed state): on a local message flagged
/// ``MessageFlags/failed``, shown by the app ("not sent: CHAT_WRITE_FORBIDDEN") with a retry button
/// (``OutboundQueue/resendMessage(_:)``).
public struct SyncSendFailureAttribute: MessageAttribute, Equatable {
    public static let postboxTypeName = "SyncSendFailureAttribute"

    public let reason: String
    /// What ``OutboundQueue/resendMessage(_:)`` queues again for a file (from its first part); nil for text.
    public let resendMedia: SendMediaOperation?
    /// What ``OutboundQueue/resendMessage(_:)`` queues again for a forwarded copy (this message alone); nil for text.
    public let resendForward: ForwardMessagesOperation?

    public init(reason: String, resendMedia: SendMediaOperation? = nil, resendForward: ForwardMessagesOperation? = nil) {
        self.reason = reason
        self.resendMedia = resendMedia
        self.resendForward = resendForward
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        reason = decoder.decodeStringForKey("r", orElse: "")
        resendMedia = try decoder.decodeObjectForKey("m", as: SendMediaOperation.self)
        resendForward = try decoder.decodeObjectForKey("f", as: ForwardMessagesOperation.self)
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeString(reason, forKey: "r")
        if let resendMedia { encoder.encodeObject(resendMedia, forKey: "m") }
        if let resendForward { encoder.encodeObject(resendForward, forKey: "f") }
    }
}

/// An outbound operation the server refused for good, reported on ``AccountStateManager/events``.
public struct OutboundFailure: Hashable, Sendable {
    public enum Action: String, Hashable, Sendable {
        case send, edit, delete, react
    }

    public let peerId: PeerId
    public let action: Action
    /// The messages it was about (the local id of a message that was to be sent).
    public let messageIds: [MessageId]
    /// The server's reason (`CHAT_WRITE_FORBIDDEN`, `MESSAGE_ID_INVALID`…).
    public let reason: String
}
