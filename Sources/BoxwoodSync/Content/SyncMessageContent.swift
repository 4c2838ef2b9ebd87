import Boxwood

/// How a message's ``ApiMessageContent`` is stored in Postbox terms and read back: media as shared ``Media`` items,
/// entities, reply, reactions and counters as attributes, the forward header as the forward info, the album as the
/// grouping key.
///
/// Storing keeps everything that can be shown and records bad input as what it is, never failing the message: an
/// entity that does not lie inside the text is dropped; media of an unknown kind becomes ``SyncMediaUnsupported``; a
/// reply to a message that is not stored stays a reply (reads resolve nothing: "deleted message"). `normalized`
/// states exactly what is kept, and `content(of:)` of a stored message equals `normalized` of what was stored — the
/// consistency check compares the two.
public enum SyncMessageContent {
    /// What storing keeps of `content` for a message with `text`.
    public static func normalized(_ content: ApiMessageContent, text: String) -> ApiMessageContent {
        var kept = content
        let length = Int32(clamping: text.utf16.count)
        kept.entities = content.entities.filter { $0.offset >= 0 && $0.length > 0 && $0.offset <= length - $0.length }
        if kept.forward?.fromId == nil { kept.forward?.channelPost = nil }
        return kept
    }

    /// The Postbox parts of `content` for a message of chat `peerId` with `text`.
    static func storeParts(_ content: ApiMessageContent, text: String, peerId: PeerId)
        -> (media: [any Media], attributes: [any MessageAttribute], forwardInfo: StoreMessageForwardInfo?, groupingKey: Int64?) {
        let content = normalized(content, text: text)
        var media: [any Media] = []
        switch content.media {
        case nil: break
        case let .photo(photo)?: media.append(SyncMediaImage(photo))
        case let .document(document)?: media.append(SyncMediaFile(document))
        case let .webPage(page)?: media.append(SyncMediaWebPage(page))
        case let .unsupported(kind)?: media.append(SyncMediaUnsupported(kind: kind))
        }
        var attributes: [any MessageAttribute] = []
        if !content.entities.isEmpty { attributes.append(SyncTextEntitiesAttribute(entities: content.entities)) }
        if let reply = content.replyTo {
            attributes.append(SyncReplyAttribute(messageId: MessageId(peerId: reply.peerId ?? peerId, namespace: SyncNamespaces.cloudMessages,
                                                                      id: reply.messageId)))
        }
        if !content.reactions.isEmpty { attributes.append(SyncReactionsAttribute(reactions: content.reactions)) }
        if content.views != nil || content.forwards != nil {
            attributes.append(SyncCountersAttribute(views: content.views, forwards: content.forwards))
        }
        let forwardInfo = content.forward.map { header in
            StoreMessageForwardInfo(authorId: header.fromId, sourceId: header.channelPost != nil ? header.fromId : nil,
                                    sourceMessageId: header.channelPost.flatMap { post in
                                        header.fromId.map { MessageId(peerId: $0, namespace: SyncNamespaces.cloudMessages, id: post) }
                                    },
                                    date: header.date, authorSignature: header.fromName)
        }
        return (media, attributes, forwardInfo, content.groupedId)
    }

    /// The content of a stored message, as the server would describe it.
    public static func content(of message: Message) -> ApiMessageContent {
        var content = ApiMessageContent()
        for item in message.media {
            switch item {
            case let image as SyncMediaImage:
                content.media = .photo(ApiPhoto(id: image.photoId, sizes: image.sizes.map {
                    ApiPhotoSize(type: $0.type, width: $0.width, height: $0.height, byteCount: $0.byteCount)
                }))
            case let file as SyncMediaFile:
                content.media = .document(ApiDocument(id: file.fileId, mimeType: file.mimeType, size: file.size, fileName: file.fileName,
                                                      duration: file.duration))
            case let page as SyncMediaWebPage:
                content.media = .webPage(ApiWebPage(id: page.webPageId, url: page.url, title: page.title, summary: page.summary))
            case let unsupported as SyncMediaUnsupported:
                content.media = .unsupported(kind: unsupported.kind)
            default:
                break
            }
        }
        for attribute in message.attributes {
            switch attribute {
            case let entities as SyncTextEntitiesAttribute: content.entities = entities.entities
            case let reply as SyncReplyAttribute:
                content.replyTo = ApiReplyHeader(messageId: reply.messageId.id, peerId: reply.messageId.peerId == message.id.peerId ? nil : reply.messageId.peerId)
            case let reactions as SyncReactionsAttribute: content.reactions = reactions.reactions
            case let counters as SyncCountersAttribute:
                content.views = counters.views
                content.forwards = counters.forwards
            case let sync as SyncMessageAttribute: content.revision = sync.revision
            default: break
            }
        }
        if let info = message.forwardInfo {
            content.forward = ApiForwardHeader(fromId: info.authorId ?? info.sourceId, fromName: info.authorSignature, date: info.date,
                                               channelPost: info.sourceMessageId?.id)
        }
        content.groupedId = message.groupingKey
        return content
    }

    /// A short label of a message's media for previews (chat list, notifications): `📷`, `📎 report.pdf`, `🎤`,
    /// `🔗 Page 3`, `❓ poll`; nil without media.
    public static func previewLabel(_ media: ApiMessageMedia?) -> String? {
        switch media {
        case nil: return nil
        case .photo?: return "📷"
        case let .document(document)?: return document.mimeType.hasPrefix("audio/") ? "🎤" : "📎 " + (document.fileName ?? "file")
        case let .webPage(page)?: return "🔗 " + (page.title ?? page.url)
        case let .unsupported(kind)?: return "❓ " + kind
        }
    }
}
