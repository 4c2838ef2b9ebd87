import ArgumentParser
import Boxwood
import BoxwoodSync

/// `boxwood history DB PEERID [--limit N] [--json]`: a chat of a sync database as stored, newest first: the
/// messages (with author names from the stored users), the holes (ranges of message ids not known to be
/// complete, which the sync layer fetches on demand) at their position, and messages still waiting to be
/// sent at the top. Opens the database read-only.
///
/// Text output:
///
///     chat 2:3001 "Boxwood devs" (channel): 240 messages stored, 1 hole, 2 unread; dates in UTC
///     local#3  2026-11-23T17:05:00Z  Me: on its way  [unsent]
///     #300  2026-11-23T17:00:01Z  Alice Smith: hello  [pinned] [edited]
///     #301  2026-11-23T17:00:09Z  Bob Jones: look  [photo 1280×960]  ↩ #300  👍 2 ❤️ 1*
///     #302  2026-11-23T17:01:00Z  Bob Jones: fwd  ⇢ from "News"  [album 7000012]  ↩ #12 (not stored)
///     …
///     … hole 1–60 …
///
/// A message the server refused to send shows `[failed: REASON]` instead of `[unsent]`.
///
/// `--limit N` shows the newest N messages (holes do not count) and ends with `… N older messages not
/// shown …` when it cut. With `--json`: `{"peer", "peer_int64", "title", "kind", "messages_stored", "holes",
/// "unread_count", "truncated", "rows": [...]}`, rows in display order, each `{"type": "message", "namespace",
/// "id", "date", "date_text", "author", "author_name", "outgoing", "pinned", "edited", "edit_version",
/// "unsent", "text", "media", "entities", "reply_to", "reply_stored", "forward_from", "forward_name", "album",
/// "reactions", "views", "forwards"}` (absent parts null; `reactions` a list of `{"emoji", "count", "chosen"}`) or
/// `{"type": "hole", "from", "to"}`. A reply is "(not stored)" when the replied message is not in the
/// database — deleted, or in a hole. A chat the database knows nothing about is an error
/// (exit 1).
struct History: ParsableCommand, JSONOutput {
    static let configuration = CommandConfiguration(
        abstract: "Show a chat of a sync database: messages newest first, with its holes.",
        discussion: "PEERID is namespace:id (2:3001) or the packed Int64 form. Dates in UTC."
    )

    @Argument(help: "The database directory.") var db: String
    @OptionGroup var encryption: EncryptionOptions
    @Argument(help: peerIdHelp) var peer: PeerIdArgument
    @Option(help: "Show the newest N messages.") var limit = 100
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    /// What the transaction reads: the chat's stored state with names resolved.
    struct Chat: Sendable {
        let title: String?
        let isKnown: Bool
        let state: LocalChatState
        let authorNames: [PeerId: String]
    }

    func run() throws {
        let peerId = peer.peerId
        let database = try SyncDatabase.open(db, encryption: try encryption.parameters())
        defer { database.close() }
        let chat = try database.read { transaction -> Chat in
            let state = try SyncInspector.chatState(peerId, in: transaction)
            let names = PeerNames(transaction)
            var authorNames: [PeerId: String] = [:]
            let all = Array(state.messages.values) + state.unsent + state.failed
            for author in Set(all.compactMap(\.authorId) + all.compactMap { $0.content.forward?.fromId }) {
                if let name = try names.name(author) { authorNames[author] = name }
            }
            let stored = try transaction.getPeer(peerId)
            return Chat(title: MessageFormat.name(of: stored), isKnown: stored != nil || !state.messages.isEmpty || !state.unsent.isEmpty || !state.failed.isEmpty,
                        state: state, authorNames: authorNames)
        }
        guard chat.isKnown else {
            throw CommandFailure(status: ExitStatus.failure, "no chat \(peerId) (no stored peer and no messages)", place: db)
        }
        let rows = HistoryRows(chat.state, limit: limit)
        if json {
            printJSON(chat, rows)
        } else {
            printText(chat, rows)
        }
    }

    private func printText(_ chat: Chat, _ rows: HistoryRows) {
        let state = chat.state
        var summary = "chat \(state.peerId)"
        if let title = chat.title { summary += " \(jsonString(title))" }
        summary += " (\(MessageFormat.kind(of: state.peerId))): \(counted(state.messages.count, "message")) stored, "
            + counted(state.holes.count, "hole")
        if !state.unsent.isEmpty { summary += ", \(state.unsent.count) unsent" }
        if !state.failed.isEmpty { summary += ", \(state.failed.count) failed" }
        if let unread = state.unreadCount { summary += ", \(unread) unread" }
        print(summary + "; dates in UTC")
        for row in rows.rows {
            switch row {
            case let .message(message, unsent):
                var line = MessageFormat.label(namespace: unsent ? SyncNamespaces.localMessages : SyncNamespaces.cloudMessages, id: message.id)
                line += "  \(MessageFormat.date(message.date))  \(author(of: message, in: chat)): \(MessageFormat.oneLine(message.text))"
                if message.pinned { line += "  [pinned]" }
                if message.editVersion > 0 { line += "  [edited]" }
                if unsent { line += message.failureReason.map { "  [failed: \($0)]" } ?? "  [unsent]" }
                for part in contentParts(of: message, in: chat) { line += "  " + part }
                print(line)
            case let .hole(range):
                print("… hole \(range.lowerBound)–\(range.upperBound) …")
            }
        }
        if rows.omitted > 0 { print("… \(counted(rows.omitted, "older message")) not shown (raise --limit) …") }
    }

    private func printJSON(_ chat: Chat, _ rows: HistoryRows) {
        let state = chat.state
        var object = JSONObject()
        object.add("peer", "\(state.peerId)")
        object.add("peer_int64", state.peerId.toInt64())
        object.add("title", chat.title)
        object.add("kind", MessageFormat.kind(of: state.peerId))
        object.add("messages_stored", state.messages.count)
        object.add("holes", state.holes.count)
        object.add("unread_count", state.unreadCount)
        object.add("truncated", rows.omitted > 0)
        object.add("rows", rows.rows.map { row in
            var item = JSONObject()
            switch row {
            case let .message(message, unsent):
                item.add("type", "message")
                item.add("namespace", (unsent ? SyncNamespaces.localMessages : SyncNamespaces.cloudMessages).rawValue)
                item.add("id", message.id)
                item.add("date", message.date)
                item.add("date_text", MessageFormat.date(message.date))
                item.add("author", message.authorId.map { "\($0)" })
                item.add("author_name", message.authorId.flatMap { chat.authorNames[$0] })
                item.add("outgoing", message.outgoing)
                item.add("pinned", message.pinned)
                item.add("edited", message.editVersion > 0)
                item.add("edit_version", message.editVersion)
                item.add("unsent", unsent)
                item.add("text", message.text)
                let content = message.content
                item.add("media", MessageFormat.media(content.media))
                item.add("entities", content.entities.count)
                item.add("reply_to", content.replyTo.map { reply in reply.peerId.map { "\($0)#\(reply.messageId)" } ?? "#\(reply.messageId)" })
                item.add("reply_stored", content.replyTo.map { isStored($0, in: chat) })
                item.add("forward_from", content.forward?.fromId.map { "\($0)" })
                item.add("forward_name", content.forward.flatMap { forwardName($0, in: chat) })
                item.add("album", content.groupedId)
                item.add("reactions", content.reactions.isEmpty ? nil : content.reactions.map { reaction in
                    var object = JSONObject()
                    object.add("emoji", reaction.emoji)
                    object.add("count", reaction.count)
                    object.add("chosen", reaction.chosen)
                    return object
                })
                item.add("views", content.views)
                item.add("forwards", content.forwards)
            case let .hole(range):
                item.add("type", "hole")
                item.add("from", range.lowerBound)
                item.add("to", range.upperBound)
            }
            return item
        })
        print(object.text)
    }

    /// The decorations after a message's text (``MessageFormat/contentParts(_:replyStored:forwardName:)``).
    private func contentParts(of message: LocalMessage, in chat: Chat) -> [String] {
        let content = message.content
        return MessageFormat.contentParts(content, replyStored: content.replyTo.map { isStored($0, in: chat) } ?? true,
                                          forwardName: content.forward.flatMap { forwardName($0, in: chat) })
    }

    /// Whether the message `reply` points at is stored (only known for replies within this chat).
    private func isStored(_ reply: ApiReplyHeader, in chat: Chat) -> Bool {
        reply.peerId == nil ? chat.state.messages[reply.messageId] != nil : true
    }

    /// Who a forwarded message came from: the stored name of its source, or the name the header carries.
    private func forwardName(_ forward: ApiForwardHeader, in chat: Chat) -> String? {
        forward.fromId.flatMap { chat.authorNames[$0] } ?? forward.fromName ?? forward.fromId.map { "\($0)" }
    }

    private func author(of message: LocalMessage, in chat: Chat) -> String {
        guard let authorId = message.authorId else { return "?" }
        return chat.authorNames[authorId] ?? "\(authorId)"
    }
}

/// The rows of a chat in display order (newest first): unsent messages, then cloud messages and holes merged
/// by position (a hole comes before every message below its upper end), cut after `limit` messages.
struct HistoryRows {
    enum Row {
        /// A message; `unsent`: created here and not yet acknowledged by the server (a local id).
        case message(LocalMessage, unsent: Bool)
        case hole(ClosedRange<Int32>)
    }

    private(set) var rows: [Row] = []
    /// Messages left out by the limit.
    private(set) var omitted = 0

    init(_ state: LocalChatState, limit: Int) {
        let unsent = (state.unsent + state.failed).sorted { $0.id > $1.id }
        let messages = state.messages.values.sorted { $0.id > $1.id }
        var holes = state.holes.sorted { $0.upperBound > $1.upperBound }[...]
        var shown = 0
        for message in unsent where shown < limit {
            rows.append(.message(message, unsent: true))
            shown += 1
        }
        for message in messages {
            if shown == limit { break }
            while let hole = holes.first, hole.upperBound > message.id {
                rows.append(.hole(hole))
                holes.removeFirst()
            }
            rows.append(.message(message, unsent: false))
            shown += 1
        }
        omitted = unsent.count + messages.count - shown
        // Holes below the last shown message belong to the part that is shown only when nothing was cut.
        if omitted == 0 { rows += holes.map { .hole($0) } }
    }
}
