import Boxwood
import BoxwoodSync
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Text formatting shared by `search` and `history`.
enum MessageFormat {
    /// A message date (seconds since 1970) in ISO 8601, UTC: `2026-11-23T17:00:01Z`.
    static func date(_ seconds: Int32) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "\(seconds)" }
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// Message text on one line: newlines, carriage returns and tabs as `\n`, `\r`, `\t`, other control
    /// characters as `\u{…}`.
    static func oneLine(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// A message id for display: `#17` for a cloud message, `local#5` for one not yet sent, `ns<n>#<id>`
    /// for another namespace.
    static func label(namespace: MessageId.Namespace, id: MessageId.Id) -> String {
        switch namespace {
        case SyncNamespaces.cloudMessages: return "#\(id)"
        case SyncNamespaces.localMessages: return "local#\(id)"
        default: return "ns\(namespace)#\(id)"
        }
    }

    /// The name of a stored peer: a user's display name, a chat's title; nil for other peer types.
    static func name(of peer: (any Peer)?) -> String? { SyncPeerNames.name(of: peer) }

    /// The kind of chat a peer namespace holds in the sync layer.
    static func kind(of peerId: PeerId) -> String {
        switch peerId.namespace {
        case SyncNamespaces.user: return "user"
        case SyncNamespaces.group: return "group"
        case SyncNamespaces.channel: return "channel"
        case SyncNamespaces.secretChat: return "secret chat"
        default: return "namespace \(peerId.namespace.rawValue)"
        }
    }
}

extension MessageFormat {
    /// A one-line description of a message's media: `[photo 1770×1838]`, `[file report.pdf, 575 KB]`,
    /// `[voice 0:09]`, `[link "Page 3"]`, `[unsupported: poll]`; nil without media.
    static func media(_ media: ApiMessageMedia?) -> String? {
        switch media {
        case nil:
            return nil
        case let .photo(photo)?:
            let largest = photo.sizes.max { $0.width < $1.width }
            return "[photo" + (largest.map { " \($0.width)×\($0.height)" } ?? "") + "]"
        case let .document(document)?:
            if document.mimeType.hasPrefix("audio/"), let duration = document.duration {
                let seconds = duration % 60
                return "[voice \(duration / 60):\(seconds < 10 ? "0" : "")\(seconds)]"
            }
            return "[file \(document.fileName ?? document.mimeType), \(byteCount(document.size))]"
        case let .webPage(page)?:
            return "[link " + (page.title.map { jsonString($0) } ?? page.url) + "]"
        case let .unsupported(kind)?:
            return "[unsupported: \(kind)]"
        }
    }

    /// The decorations shown after a message's text: media, forward source, album, reply (marked when the replied
    /// message is not stored), reactions, views.
    static func contentParts(_ content: ApiMessageContent, replyStored: Bool, forwardName: String?) -> [String] {
        var parts: [String] = []
        if let media = media(content.media) { parts.append(media) }
        if content.forward != nil { parts.append("⇢ from " + (forwardName.map(jsonString) ?? "?")) }
        if let album = content.groupedId { parts.append("[album \(album)]") }
        if let reply = content.replyTo {
            let target = reply.peerId.map { "\($0)#\(reply.messageId)" } ?? "#\(reply.messageId)"
            parts.append("↩ " + target + (replyStored ? "" : " (not stored)"))
        }
        if let reactions = reactions(content.reactions) { parts.append(reactions) }
        if let views = content.views { parts.append("👁 \(views)") }
        return parts
    }

    /// Reactions as `👍 3 ❤️ 1*` (`*`: the account's own).
    static func reactions(_ reactions: [ApiReaction]) -> String? {
        reactions.isEmpty ? nil : reactions.map { "\($0.emoji) \($0.count)\($0.chosen ? "*" : "")" }.joined(separator: " ")
    }

    /// A byte count for people: `512 B`, `12 KB`, `3.4 MB`.
    static func byteCount(_ bytes: Int64) -> String {
        if bytes < 1_000 { return "\(bytes) B" }
        if bytes < 1_000_000 { return "\(bytes / 1_000) KB" }
        let tenths = bytes / 100_000
        return "\(tenths / 10).\(tenths % 10) MB"
    }
}

/// Peer names looked up once per transaction.
final class PeerNames {
    private let transaction: Transaction
    private var cache: [PeerId: String?] = [:]

    init(_ transaction: Transaction) { self.transaction = transaction }

    /// The peer's name when it is stored as a ``SyncUser`` or ``SyncChat``, else nil.
    func name(_ peerId: PeerId) throws -> String? {
        if let known = cache[peerId] { return known }
        let name = MessageFormat.name(of: try transaction.getPeer(peerId))
        cache[peerId] = name
        return name
    }
}
