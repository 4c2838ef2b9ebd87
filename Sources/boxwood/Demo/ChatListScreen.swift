import Boxwood
import BoxwoodSync

/// One row of the demo's chat list: a chat's name, unread and unread-mention counts and newest message (with its
/// media, reply mark and reactions), or its draft.
struct ChatListRow: Sendable {
    let name: String
    let unread: Int32
    /// Unread mentions of the account (shown as `@n`).
    var mentions: Int32 = 0
    let preview: String
    let muted: Bool
}

/// Turns a chat-list view snapshot into the demo's rows: the snapshot carries each chat's peer, rendered top
/// message, read state and notification settings, so nothing is read again.
enum ChatListScreen {
    static func rows(_ view: ChatListView) -> [ChatListRow] {
        view.entries.compactMap { entry -> ChatListRow? in
            guard case let .chat(item) = entry else { return nil }
            let name = (item.peer as? SyncUser)?.displayName ?? (item.peer as? SyncChat)?.title
                ?? (item.peerId.namespace == SyncNamespaces.secretChat ? "🔒 secret chat \(item.peerId.id)" : "\(item.peerId)")
            var preview = ""
            if let message = item.topMessage {
                let content = SyncMessageContent.content(of: message)
                let label = SyncMessageContent.previewLabel(content.media).map { $0 + " " } ?? ""
                let reply = content.replyTo != nil ? "↩ " : ""
                preview = (message.flags.contains(.incoming) ? "" : "you: ") + reply + label + message.text
                if let reactions = MessageFormat.reactions(content.reactions) { preview += "  " + reactions }
                if message.flags.contains(.unsent) { preview = "⏳ " + preview }
                if message.flags.contains(.failed) { preview = "❗ not sent: " + preview }
            }
            // A draft (typed here or on another device) leads the row, as Telegram shows it.
            if let draft = item.embeddedState { preview = "✏️ draft: " + draft.text }
            let muted = (item.notificationSettings as? SyncNotificationSettings).map { $0.muteUntil != 0 } ?? false
            return ChatListRow(name: name, unread: item.unreadCount, mentions: item.mentionCount, preview: preview, muted: muted)
        }
    }

    /// The rows as terminal lines of at most `width` columns.
    static func render(_ rows: [ChatListRow], width: Int) -> [String] {
        rows.map { row in
            let badge = (row.unread > 0 ? " (\(row.unread))" : "") + (row.mentions > 0 ? " @\(row.mentions)" : "")
            let head = (row.muted ? "🔕 " : "") + row.name + badge
            let name = String(head.prefix(28)).padding(toLength: 30, withPad: " ", startingAt: 0)
            let room = max(10, width - 32)
            let preview = row.preview.count > room ? String(row.preview.prefix(room - 1)) + "…" : row.preview
            return "  " + name + preview
        }
    }
}
