import Boxwood
import BoxwoodSync

/// One row of the demo's chat list: a chat's name, unread count and newest message.
struct ChatListRow: Sendable {
    let name: String
    let unread: Int32
    let preview: String
    let muted: Bool
}

/// Reads the rows of a chat-list view snapshot (names, read states, newest messages) in one transaction.
enum ChatListScreen {
    static func rows(_ view: ChatListView, postbox: Postbox) async throws -> [ChatListRow] {
        try await postbox.transaction { transaction in
            var rows: [ChatListRow] = []
            for entry in view.entries {
                guard case let .chat(peerId, _, top) = entry else { continue }
                let peer = try transaction.getPeer(peerId)
                let name = (peer as? SyncUser)?.displayName ?? (peer as? SyncChat)?.title
                    ?? (peerId.namespace == SyncNamespaces.secretChat ? "🔒 secret chat \(peerId.id)" : "\(peerId)")
                var unread: Int32 = 0
                if let state = try transaction.getCombinedPeerReadState(peerId) { unread = state.states.values.reduce(0) { $0 + $1.count } }
                var preview = ""
                if let top, let message = try transaction.getMessage(top.id) {
                    preview = (message.flags.contains(.incoming) ? "" : "you: ") + message.text
                    if message.flags.contains(.unsent) { preview = "⏳ " + preview }
                }
                let muted = (try transaction.getPeerNotificationSettings(peerId) as? SyncNotificationSettings).map { $0.muteUntil != 0 } ?? false
                rows.append(ChatListRow(name: name, unread: unread, preview: preview, muted: muted))
            }
            return rows
        }
    }

    /// The rows as terminal lines of at most `width` columns.
    static func render(_ rows: [ChatListRow], width: Int) -> [String] {
        rows.map { row in
            let badge = row.unread > 0 ? " (\(row.unread))" : ""
            let head = (row.muted ? "🔕 " : "") + row.name + badge
            let name = String(head.prefix(28)).padding(toLength: 30, withPad: " ", startingAt: 0)
            let room = max(10, width - 32)
            let preview = row.preview.count > room ? String(row.preview.prefix(room - 1)) + "…" : row.preview
            return "  " + name + preview
        }
    }
}
