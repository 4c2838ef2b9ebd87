import Boxwood
import BoxwoodSync

/// The end of the demo: what the synced database holds besides text — media (and how much of it is shared between
/// messages), replies, forwards, albums, reactions — and the newest messages of the chat with the most of it, as
/// `boxwood history` prints them.
enum DemoHistoryExcerpt {
    struct Result: Sendable {
        let title: String
        let lines: [String]
        let counts: String
        /// Messages the server refused to send, by reason.
        let failedSends: [String: Int]
    }

    static func read(_ postbox: Postbox, chats: [PeerId], rows: Int = 8) async throws -> Result {
        try await postbox.transaction { transaction in
            let names = PeerNames(transaction)
            var photos: [Int64: Int] = [:]
            var files = 0, links = 0, unsupported = 0, replies = 0, repliesNotStored = 0, forwards = 0, reacted = 0
            var albums = Set<Int64>()
            var failedSends: [String: Int] = [:]
            var best: (score: Int, peerId: PeerId, state: LocalChatState)?
            for peerId in chats {
                let state = try SyncInspector.chatState(peerId, in: transaction)
                for message in state.failed { failedSends[message.failureReason ?? "?", default: 0] += 1 }
                for message in state.messages.values {
                    let content = message.content
                    switch content.media {
                    case let .photo(photo)?: photos[photo.id, default: 0] += 1
                    case .document?: files += 1
                    case .webPage?: links += 1
                    case .unsupported?: unsupported += 1
                    case nil: break
                    }
                    if let reply = content.replyTo {
                        replies += 1
                        if reply.peerId == nil && state.messages[reply.messageId] == nil { repliesNotStored += 1 }
                    }
                    if content.forward != nil { forwards += 1 }
                    if let album = content.groupedId { albums.insert(album) }
                    if !content.reactions.isEmpty { reacted += 1 }
                }
                let newest = state.messages.values.sorted { $0.id > $1.id }.prefix(rows)
                let score = newest.reduce(0) { total, message in
                    let content = message.content
                    return total + (content.media != nil ? 2 : 0) + (content.replyTo != nil ? 2 : 0) + (content.reactions.isEmpty ? 0 : 2)
                        + (content.forward != nil ? 1 : 0)
                }
                if score > (best?.score ?? -1) { best = (score, peerId, state) }
            }
            var lines: [String] = []
            var title = ""
            if let best {
                title = (try names.name(best.peerId)).map { "\($0) (\(best.peerId))" } ?? "\(best.peerId)"
                for message in best.state.messages.values.sorted(by: { $0.id > $1.id }).prefix(rows) {
                    let author = try message.authorId.flatMap { try names.name($0) } ?? message.authorId.map { "\($0)" } ?? "?"
                    let content = message.content
                    let forwardName = try content.forward.flatMap { forward in try forward.fromId.flatMap { try names.name($0) } ?? forward.fromName }
                    let replyStored = content.replyTo.map { $0.peerId != nil || best.state.messages[$0.messageId] != nil } ?? true
                    let parts = MessageFormat.contentParts(content, replyStored: replyStored, forwardName: forwardName)
                    lines.append("#\(message.id)  \(author): \(MessageFormat.oneLine(message.text))"
                                 + (message.editVersion > 0 ? "  [edited]" : "") + parts.map { "  " + $0 }.joined())
                }
            }
            let shared = photos.values.filter { $0 > 1 }.count
            let counts = "\(photos.values.reduce(0, +)) photos (\(shared) shared by several messages), \(files) files, \(links) link previews, "
                + "\(unsupported) unsupported media kept as placeholders, \(replies) replies (\(repliesNotStored) to messages not stored), "
                + "\(forwards) forwards, \(albums.count) albums, \(reacted) messages with reactions"
            return Result(title: title, lines: lines, counts: counts, failedSends: failedSends)
        }
    }
}
