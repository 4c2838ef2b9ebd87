import Boxwood
import BoxwoodSync

/// Compares a client's database with the server's authoritative state, for everything in synced ranges: the
/// cursor and every channel's pts; users' names and chats' titles; per chat every message outside the chat's
/// holes (present on both sides with the same text, edit version, pin and direction, and the same content — media,
/// entities, reply, forward, reactions, album, counters and revision, as storing keeps them
/// (``SyncMessageContent/normalized(_:text:)``) — and the same unread mention; none missing, none extra), read
/// positions, each chat's unread-mention count (the chat list's), mute settings and drafts; no message left unsent and
/// no outbound entry left. Chats below the chat list's hole (dialogs not fetched yet) are left out, with their peers.
public struct ConsistencyReport: Sendable, CustomStringConvertible {
    /// What differs, one line each (empty: consistent).
    public var differences: [String] = []
    /// Messages compared (outside holes).
    public var messagesCompared = 0
    /// Server messages not stored because they lie in a hole.
    public var messagesInHoles = 0
    /// Holes left (ranges) over all chats.
    public var holes = 0
    /// Unread mentions on the server over all chats (each chat's count compared).
    public var unreadMentions = 0
    /// Chats not compared because they lie below the chat list's hole (the dialogs not fetched yet).
    public var chatsBelowListHole = 0

    public var isConsistent: Bool { differences.isEmpty }

    public var description: String {
        isConsistent ? "consistent" : "INCONSISTENT " + differences.prefix(5).joined(separator: "; ")
            + (differences.count > 5 ? "; … \(differences.count - 5) more" : "")
    }
}

public enum ConsistencyCheck {
    /// Checks `local` (read with ``SyncInspector``) against `server`.
    public static func compare(local: LocalSyncState, server: SimulatedServerSnapshot) -> ConsistencyReport {
        var report = ConsistencyReport()
        func differ(_ line: String) { report.differences.append(line) }
        if let cursor = local.cursor {
            if cursor.pts != server.state.pts { differ("pts \(cursor.pts) != server \(server.state.pts)") }
            if cursor.qts != server.state.qts { differ("qts \(cursor.qts) != server \(server.state.qts)") }
            if cursor.seq != server.state.seq { differ("seq \(cursor.seq) != server \(server.state.seq)") }
        } else {
            differ("no stored cursor")
        }
        if local.pendingOutbound != 0 { differ("\(local.pendingOutbound) outbound entries left") }
        // Chats below the chat list's hole are not known yet (nor their peers' names, fetched with their dialogs).
        let listHole = local.chatListHoleOffset
        let pinned = Set(server.pinnedPeers)
        func belowListHole(_ peerId: PeerId) -> Bool {
            guard let listHole, server.chatStates[peerId] != nil, !pinned.contains(peerId) else { return false }
            return server.dialogPosition(peerId) < listHole
        }
        for (peerId, user) in server.users where peerId != server.accountPeerId && !belowListHole(peerId) {
            guard server.chatStates[peerId] != nil || local.users[peerId] != nil else { continue }
            guard let stored = local.users[peerId] else { differ("user \(peerId) missing"); continue }
            if stored.firstName != user.firstName || stored.lastName != user.lastName || stored.username != user.username {
                differ("user \(peerId) is \(stored.displayName), server \(user.firstName) \(user.lastName)")
            }
        }
        for (peerId, chat) in server.chats where !belowListHole(peerId) {
            guard let stored = local.titledChats[peerId] else { differ("chat \(peerId) missing"); continue }
            if stored.title != chat.title { differ("chat \(peerId) title \(stored.title) != \(chat.title)") }
        }
        for (peerId, serverChat) in server.chatStates.sorted(by: { $0.key < $1.key }) {
            if belowListHole(peerId) {
                report.chatsBelowListHole += 1
                continue
            }
            guard let chat = local.chats[peerId] else { differ("chat \(peerId) not read"); continue }
            report.holes += chat.holes.count
            if !chat.unsent.isEmpty { differ("\(peerId): \(chat.unsent.count) messages unsent") }
            if let pts = server.channelPts[peerId], chat.channelPts != pts {
                differ("\(peerId): channel pts \(chat.channelPts.map(String.init) ?? "none") != \(pts)")
            }
            for (id, message) in serverChat.messages.sorted(by: { $0.key < $1.key }) {
                guard let stored = chat.messages[id] else {
                    if chat.isInHole(id) { report.messagesInHoles += 1 } else { differ("\(peerId): message \(id) missing outside holes \(chat.holes) stored \(chat.messages.keys.sorted().suffix(6))") }
                    continue
                }
                if chat.isInHole(id) { continue }
                report.messagesCompared += 1
                if stored.text != message.text || stored.editVersion != message.editVersion || stored.pinned != message.pinned
                    || stored.outgoing != message.outgoing {
                    differ("\(peerId): message \(id) differs (v\(stored.editVersion) pinned \(stored.pinned), server v\(message.editVersion) pinned \(message.pinned))")
                } else if stored.content != SyncMessageContent.normalized(message.content, text: message.text) {
                    differ("\(peerId): message \(id) content differs (r\(stored.content.revision): \(stored.content), server r\(message.content.revision): \(message.content))")
                } else if stored.unreadMention != message.isUnreadMention {
                    differ("\(peerId): message \(id) unread mention \(stored.unreadMention) != server \(message.isUnreadMention)")
                }
            }
            for id in chat.messages.keys.sorted() where serverChat.messages[id] == nil && !chat.isInHole(id) {
                differ("\(peerId): message \(id) deleted on the server but stored")
            }
            if chat.readInboxMaxId != serverChat.readInboxMaxId {
                differ("\(peerId): read inbox \(chat.readInboxMaxId.map(String.init) ?? "none") != \(serverChat.readInboxMaxId)")
            }
            if chat.readOutboxMaxId != serverChat.readOutboxMaxId {
                differ("\(peerId): read outbox \(chat.readOutboxMaxId.map(String.init) ?? "none") != \(serverChat.readOutboxMaxId)")
            }
            let serverMentions = Int32(serverChat.messages.values.filter(\.isUnreadMention).count)
            report.unreadMentions += Int(serverMentions)
            if chat.mentionCount != serverMentions {
                differ("\(peerId): \(chat.mentionCount) unread mentions != server \(serverMentions) (mention holes \(chat.mentionHoles))")
            }
            if (chat.muteUntil ?? 0) != serverChat.muteUntil { differ("\(peerId): muted until \(chat.muteUntil ?? 0) != \(serverChat.muteUntil)") }
            if chat.draft != serverChat.draft?.text {
                differ("\(peerId): draft \(chat.draft.map { "\"\($0)\"" } ?? "none") != \(serverChat.draft.map { "\"\($0.text)\"" } ?? "none")")
            }
        }
        return report
    }

    /// Reads the client's database and compares it with the server now.
    public static func check(_ postbox: Postbox, server: SimulatedServer) async throws -> ConsistencyReport {
        let snapshot = server.snapshot()
        let local = try await SyncInspector.read(postbox, peerIds: Array(snapshot.chatStates.keys) + snapshot.allPeers)
        return compare(local: local, server: snapshot)
    }
}
