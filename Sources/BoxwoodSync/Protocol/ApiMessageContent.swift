import Boxwood

/// What a message carries besides its text, as the server describes it (Telegram's `Message` fields `media`,
/// `entities`, `reply_to`, `fwd_from`, `reactions`, `grouped_id`, `views`, `forwards`), and the revision that orders
/// its changes.
public struct ApiMessageContent: Hashable, Sendable, Codable {
    public var media: ApiMessageMedia?
    /// Formatting and links over the text, in UTF-16 code units as the server counts them.
    public var entities: [ApiMessageEntity]
    public var replyTo: ApiReplyHeader?
    public var forward: ApiForwardHeader?
    /// Reactions with their counts, in the server's order, and which one the account chose.
    public var reactions: [ApiReaction]
    /// Messages sent together as an album share it.
    public var groupedId: Int64?
    /// Channel posts: how many saw and forwarded it.
    public var views: Int32?
    public var forwards: Int32?
    /// Bumped by the server at every change of the message (an edit, a reaction, a counter); a client applies a copy
    /// only when it is newer than the stored one (0 for a message never changed).
    public var revision: Int32

    public init(media: ApiMessageMedia? = nil, entities: [ApiMessageEntity] = [], replyTo: ApiReplyHeader? = nil,
                forward: ApiForwardHeader? = nil, reactions: [ApiReaction] = [], groupedId: Int64? = nil, views: Int32? = nil,
                forwards: Int32? = nil, revision: Int32 = 0) {
        self.media = media
        self.entities = entities
        self.replyTo = replyTo
        self.forward = forward
        self.reactions = reactions
        self.groupedId = groupedId
        self.views = views
        self.forwards = forwards
        self.revision = revision
    }
}

/// A message's media.
public enum ApiMessageMedia: Hashable, Sendable, Codable {
    case photo(ApiPhoto)
    case document(ApiDocument)
    case webPage(ApiWebPage)
    /// A kind this client does not know (a newer server's), by name: stored as a placeholder, never dropped.
    case unsupported(kind: String)
}

/// A photo: one id, several sizes.
public struct ApiPhoto: Hashable, Sendable, Codable {
    public var id: Int64
    public var sizes: [ApiPhotoSize]

    public init(id: Int64, sizes: [ApiPhotoSize]) {
        self.id = id
        self.sizes = sizes
    }
}

/// One stored size of a photo ("s" thumbnail, "m", "x" full…).
public struct ApiPhotoSize: Hashable, Sendable, Codable {
    public var type: String
    public var width: Int32
    public var height: Int32
    public var byteCount: Int32

    public init(type: String, width: Int32, height: Int32, byteCount: Int32) {
        self.type = type
        self.width = width
        self.height = height
        self.byteCount = byteCount
    }
}

/// A file: a document, a voice note, a video.
public struct ApiDocument: Hashable, Sendable, Codable {
    public var id: Int64
    public var mimeType: String
    public var size: Int64
    public var fileName: String?
    /// Seconds, for audio and video.
    public var duration: Int32?

    public init(id: Int64, mimeType: String, size: Int64, fileName: String?, duration: Int32?) {
        self.id = id
        self.mimeType = mimeType
        self.size = size
        self.fileName = fileName
        self.duration = duration
    }
}

/// A link preview.
public struct ApiWebPage: Hashable, Sendable, Codable {
    public var id: Int64
    public var url: String
    public var title: String?
    public var summary: String?

    public init(id: Int64, url: String, title: String?, summary: String?) {
        self.id = id
        self.url = url
        self.title = title
        self.summary = summary
    }
}

/// A span of the text with a meaning: bold, a link, a mention…
public struct ApiMessageEntity: Hashable, Sendable, Codable {
    public enum Kind: Hashable, Sendable, Codable {
        case bold, italic, code, pre, url, mention, hashtag
        case textUrl(String)
        case mentionName(PeerId)
    }

    public var kind: Kind
    /// UTF-16 offset and length within the text.
    public var offset: Int32
    public var length: Int32

    public init(kind: Kind, offset: Int32, length: Int32) {
        self.kind = kind
        self.offset = offset
        self.length = length
    }
}

/// The message this one replies to.
public struct ApiReplyHeader: Hashable, Sendable, Codable {
    public var messageId: Int32
    /// Another chat's message (a channel post's comments); nil: the same chat.
    public var peerId: PeerId?

    public init(messageId: Int32, peerId: PeerId? = nil) {
        self.messageId = messageId
        self.peerId = peerId
    }
}

/// Where a forwarded message came from.
public struct ApiForwardHeader: Hashable, Sendable, Codable {
    /// The original author or channel (nil: hidden by the author's privacy settings).
    public var fromId: PeerId?
    /// The name shown when `fromId` is hidden.
    public var fromName: String?
    public var date: Int32
    /// The original post's id, for a message forwarded from a channel.
    public var channelPost: Int32?

    public init(fromId: PeerId?, fromName: String?, date: Int32, channelPost: Int32?) {
        self.fromId = fromId
        self.fromName = fromName
        self.date = date
        self.channelPost = channelPost
    }
}

/// One reaction on a message.
public struct ApiReaction: Hashable, Sendable, Codable {
    public var emoji: String
    public var count: Int32
    /// The account chose this reaction.
    public var chosen: Bool

    public init(emoji: String, count: Int32, chosen: Bool) {
        self.emoji = emoji
        self.count = count
        self.chosen = chosen
    }
}

extension Array where Element == ApiReaction {
    /// These reactions with the account's choice moved to `emoji` (nil: taken back), counted as the server counts
    /// them: the old choice loses one, the new one gains one, a reaction left at 0 goes. The one rule for the
    /// server's `sendReaction`, the client's optimistic copy and the simulated traffic.
    public func choosing(_ emoji: String?) -> [ApiReaction] {
        var reactions = self
        if let mine = reactions.firstIndex(where: \.chosen) {
            reactions[mine].count -= 1
            reactions[mine].chosen = false
        }
        if let emoji {
            if let index = reactions.firstIndex(where: { $0.emoji == emoji }) {
                reactions[index].count += 1
                reactions[index].chosen = true
            } else {
                reactions.append(ApiReaction(emoji: emoji, count: 1, chosen: true))
            }
        }
        return reactions.filter { $0.count > 0 }
    }
}
