import Boxwood

/// The message tags the sync layer sets (Postbox `MessageTags`), and the shared-media spaces they make: each media
/// tag is a hole space of its own (``SyncClient/seedConfiguration``), so a shared-media view (`.messageHistory(…,
/// tag: SyncMessageTags.photo)`) shows and fills its own holes through `searchHistory` without fetching the whole
/// history.
public enum SyncMessageTags {
    /// Pinned messages.
    public static let pinned = MessageTags(rawValue: 1 << 0)
    /// Messages with a photo (``ApiSearchFilter/photos``).
    public static let photo = MessageTags(rawValue: 1 << 1)
    /// Messages with a file (``ApiSearchFilter/documents``).
    public static let file = MessageTags(rawValue: 1 << 2)
    /// Messages with a link preview (``ApiSearchFilter/urls``).
    public static let webPage = MessageTags(rawValue: 1 << 3)

    /// Unread mentions of the account (``ApiMessage/isUnreadMention``; Postbox's `unseenPersonalMessage`). A hole
    /// space of its own, filled by `getUnreadMentions`, and counted per chat (the tag summary behind the chat list's
    /// mention count): see ``SyncMentions``.
    public static let unseenMention = MessageTags(rawValue: 1 << 4)

    /// The media tags, each a hole space.
    public static let mediaSpaces: [MessageTags] = [photo, file, webPage]
    /// Every tag that is a hole space: the media tags and ``unseenMention``.
    public static let holeSpaces: [MessageTags] = mediaSpaces + [unseenMention]

    /// The tags of a message with `content`.
    static func tags(of content: ApiMessageContent, pinned: Bool, unreadMention: Bool = false) -> MessageTags {
        var tags: MessageTags = pinned ? Self.pinned : []
        if unreadMention { tags.insert(unseenMention) }
        for filter in ApiSearchFilter.allCases where filter.matches(content) { tags.insert(filter.tag) }
        return tags
    }
}

/// What `searchHistory` returns of a chat: Telegram's `messages.search` filters without a query (the shared media,
/// files and links tabs). The same rule tags stored messages (``SyncMessageTags``).
public enum ApiSearchFilter: String, Hashable, Sendable, Codable, CaseIterable {
    case photos, documents, urls

    /// Whether a message with `content` is one this filter returns.
    public func matches(_ content: ApiMessageContent) -> Bool {
        switch (self, content.media) {
        case (.photos, .photo?), (.documents, .document?), (.urls, .webPage?): return true
        default: return false
        }
    }

    /// The tag (and hole space) of the messages this filter returns.
    public var tag: MessageTags {
        switch self {
        case .photos: return SyncMessageTags.photo
        case .documents: return SyncMessageTags.file
        case .urls: return SyncMessageTags.webPage
        }
    }

    /// The filter of a hole space's tag; nil for a tag that is no media space.
    public init?(tag: MessageTags) {
        guard let filter = Self.allCases.first(where: { $0.tag == tag }) else { return nil }
        self = filter
    }
}
