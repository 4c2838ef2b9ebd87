import ArgumentParser
import Boxwood
import BoxwoodSync

/// `boxwood search DB QUERY [--peer PEERID] [--limit N] [--json]`: full-text search of the message text of a
/// sync database (Postbox's search: every word of the query must match a word of the message as a prefix),
/// newest first. Opens the database read-only.
///
/// Text output, one line per message:
///
///     2:3001 Boxwood devs  #17  2026-11-23T17:00:01Z  Alice Smith: the message text
///
/// (chat id and name, message id, date in UTC, author name — or id when the author is not stored — and the
/// text on one line), then `… more results, raise --limit` when the limit cut the list, or
/// `no messages match "QUERY"`. With `--json`: `{"query", "peer", "limit", "truncated", "results": [{"peer",
/// "peer_int64", "chat", "namespace", "id", "date", "date_text", "author", "author_name", "outgoing", "text"}]}`
/// (`peer`/`author` as `namespace:id`, `chat`/`author_name` null when unknown).
struct Search: ParsableCommand, JSONOutput {
    static let configuration = CommandConfiguration(
        abstract: "Full-text search of the messages of a sync database.",
        discussion: "Every word of QUERY must match the start of a word of the message. Newest first; dates in UTC."
    )

    @Argument(help: "The database directory.") var db: String
    @OptionGroup var encryption: EncryptionOptions
    @Argument(help: "The words to look for.") var query: String
    @Option(help: peerIdHelp) var peer: PeerIdArgument?
    @Option(help: "Show at most N messages.") var limit = 100
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1") }
        if query.allSatisfy({ $0.isWhitespace || $0.isPunctuation }) { throw ValidationError("QUERY must contain a word") }
    }

    /// One search result, read in the transaction.
    struct Found: Sendable {
        let id: MessageId
        let date: Int32
        let chat: String?
        let authorId: PeerId?
        let authorName: String?
        let outgoing: Bool
        let text: String
    }

    func run() throws {
        let database = try SyncDatabase.open(db, encryption: try encryption.parameters())
        defer { database.close() }
        let (query, peerId, limit) = (self.query, peer?.peerId, self.limit)
        let (found, truncated) = try database.read { transaction -> ([Found], Bool) in
            let indices = try transaction.searchMessages(query, peerId: peerId)
            let names = PeerNames(transaction)
            var found: [Found] = []
            for index in indices.prefix(limit) {
                guard let message = try transaction.getMessage(index.id) else { continue }
                found.append(Found(id: message.id, date: message.timestamp, chat: try names.name(message.id.peerId),
                                   authorId: message.authorId, authorName: try message.authorId.flatMap(names.name),
                                   outgoing: !message.flags.contains(.incoming), text: message.text))
            }
            return (found, indices.count > limit)
        }
        if json {
            printJSON(found, truncated: truncated)
        } else {
            printText(found, truncated: truncated)
        }
    }

    private func printText(_ found: [Found], truncated: Bool) {
        if found.isEmpty {
            print("no messages match \(jsonString(query))" + (peer.map { " in \($0.peerId)" } ?? ""))
            return
        }
        for message in found {
            let chat = message.chat.map { "\(message.id.peerId) \($0)" } ?? "\(message.id.peerId)"
            let author = message.authorName ?? message.authorId.map { "\($0)" } ?? "?"
            print("\(chat)  \(MessageFormat.label(namespace: message.id.namespace, id: message.id.id))  "
                + "\(MessageFormat.date(message.date))  \(author): \(MessageFormat.oneLine(message.text))")
        }
        if truncated { print("… more results, raise --limit (now \(limit))") }
    }

    private func printJSON(_ found: [Found], truncated: Bool) {
        var object = JSONObject()
        object.add("query", query)
        object.add("peer", peer.map { "\($0.peerId)" })
        object.add("limit", limit)
        object.add("truncated", truncated)
        object.add("results", found.map { message in
            var row = JSONObject()
            row.add("peer", "\(message.id.peerId)")
            row.add("peer_int64", message.id.peerId.toInt64())
            row.add("chat", message.chat)
            row.add("namespace", message.id.namespace.rawValue)
            row.add("id", message.id.id)
            row.add("date", message.date)
            row.add("date_text", MessageFormat.date(message.date))
            row.add("author", message.authorId.map { "\($0)" })
            row.add("author_name", message.authorName)
            row.add("outgoing", message.outgoing)
            row.add("text", message.text)
            return row
        })
        print(object.text)
    }
}
