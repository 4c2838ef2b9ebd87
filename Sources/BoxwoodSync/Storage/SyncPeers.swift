import Boxwood

/// A user as the sync layer stores it (Telegram's `TelegramUser`, reduced to what the protocol slice carries).
public struct SyncUser: Peer, Equatable {
    public static let postboxTypeName = "SyncUser"

    public let id: PeerId
    public let firstName: String
    public let lastName: String
    public let username: String?

    public init(id: PeerId, firstName: String, lastName: String, username: String?) {
        self.id = id
        self.firstName = firstName
        self.lastName = lastName
        self.username = username
    }

    init(_ user: ApiUser) {
        self.init(id: user.id, firstName: user.firstName, lastName: user.lastName, username: user.username)
    }

    public var indexName: PeerIndexNameRepresentation {
        .personName(first: firstName, last: lastName, addressNames: username.map { [$0] } ?? [], phoneNumber: nil)
    }

    /// "First Last", or the username when both are empty.
    public var displayName: String {
        let name = [firstName, lastName].filter { !$0.isEmpty }.joined(separator: " ")
        return name.isEmpty ? (username ?? "user \(id.id)") : name
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        id = PeerId(try decoder.decodeInt64(forKey: "i"))
        firstName = decoder.decodeStringForKey("f", orElse: "")
        lastName = decoder.decodeStringForKey("l", orElse: "")
        username = decoder.decodeOptionalStringForKey("u")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(id.toInt64(), forKey: "i")
        encoder.encodeString(firstName, forKey: "f")
        encoder.encodeString(lastName, forKey: "l")
        if let username { encoder.encodeString(username, forKey: "u") }
    }
}

/// A basic group, a channel or a secret chat: a titled chat (`id.namespace` tells which).
public struct SyncChat: Peer, Equatable {
    public static let postboxTypeName = "SyncChat"

    public let id: PeerId
    public let title: String

    public init(id: PeerId, title: String) {
        self.id = id
        self.title = title
    }

    init(_ chat: ApiChat) { self.init(id: chat.id, title: chat.title) }

    public var indexName: PeerIndexNameRepresentation { .title(title: title, addressNames: []) }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        id = PeerId(try decoder.decodeInt64(forKey: "i"))
        title = decoder.decodeStringForKey("t", orElse: "")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(id.toInt64(), forKey: "i")
        encoder.encodeString(title, forKey: "t")
    }
}

/// A user's online status.
public struct SyncUserPresence: PeerPresence, Equatable {
    public static let postboxTypeName = "SyncUserPresence"

    public let status: ApiUserStatus

    public init(status: ApiUserStatus) { self.status = status }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        let value = decoder.decodeInt32ForKey("v", orElse: 0)
        status = decoder.decodeBoolForKey("o", orElse: false) ? .online(expires: value) : .offline(wasOnline: value)
    }

    public func encode(_ encoder: PostboxEncoder) {
        switch status {
        case let .online(expires):
            encoder.encodeBool(true, forKey: "o")
            encoder.encodeInt32(expires, forKey: "v")
        case let .offline(wasOnline):
            encoder.encodeBool(false, forKey: "o")
            encoder.encodeInt32(wasOnline, forKey: "v")
        }
    }
}

/// A chat's notification settings: muted until a date (0: not muted).
public struct SyncNotificationSettings: PeerNotificationSettings, Equatable {
    public static let postboxTypeName = "SyncNotificationSettings"

    public let muteUntil: Int32

    public init(muteUntil: Int32) { self.muteUntil = muteUntil }

    public func isRemovedFromTotalUnreadCount(default defaultValue: Bool) -> Bool { muteUntil != 0 }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        muteUntil = decoder.decodeInt32ForKey("m", orElse: 0)
    }

    public func encode(_ encoder: PostboxEncoder) { encoder.encodeInt32(muteUntil, forKey: "m") }
}

/// What the server said about a message's versions: how often its text was edited and how often it changed at all
/// (for messages the account sent nothing else is needed: the random id is the message's globally unique id).
public struct SyncMessageAttribute: MessageAttribute, Equatable {
    public static let postboxTypeName = "SyncMessageAttribute"

    /// 0 until edited; each edit of the text or media increments it ("edited" in the UI).
    public let editVersion: Int32
    /// ``ApiMessageContent/revision``: bumped at every change (edits, reactions, counters). A copy of the message is
    /// applied only when it is newer — by revision, then by edit version — than the stored one.
    public let revision: Int32

    public init(editVersion: Int32, revision: Int32 = 0) {
        self.editVersion = editVersion
        self.revision = revision
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        editVersion = decoder.decodeInt32ForKey("e", orElse: 0)
        revision = decoder.decodeInt32ForKey("r", orElse: 0)
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(editVersion, forKey: "e")
        if revision != 0 { encoder.encodeInt32(revision, forKey: "r") }
    }
}

/// The names the sync layer's peers show.
public enum SyncPeerNames {
    /// A stored user's display name or a chat's title; nil for a peer that is not stored or of another type.
    public static func name(of peer: (any Peer)?) -> String? {
        if let user = peer as? SyncUser { return user.displayName }
        if let chat = peer as? SyncChat { return chat.title }
        return nil
    }
}
