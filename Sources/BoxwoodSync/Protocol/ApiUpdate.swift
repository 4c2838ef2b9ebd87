import Boxwood

/// One update of the slice of the update API Boxwood implements.
public enum ApiUpdate: Hashable, Sendable, Codable {
    // pts (the account's common message box)
    case newMessage(ApiMessage, pts: Int32, ptsCount: Int32)
    case editMessage(ApiMessage, pts: Int32, ptsCount: Int32)
    /// Ids are account-wide (users and groups), so the peer is found through the global-id index.
    case deleteMessages(ids: [Int32], pts: Int32, ptsCount: Int32)
    /// The account read incoming messages of `peerId` up to `maxId` (on any device).
    case readHistoryInbox(peerId: PeerId, maxId: Int32, pts: Int32, ptsCount: Int32)
    /// The other side read the account's messages up to `maxId`.
    case readHistoryOutbox(peerId: PeerId, maxId: Int32, pts: Int32, ptsCount: Int32)
    case pinnedMessages(peerId: PeerId, ids: [Int32], pinned: Bool, pts: Int32, ptsCount: Int32)
    /// The account saw these messages' mentions (or media) on some device: they are no longer unread mentions
    /// (``ApiMessage/mediaUnread`` false). Ids are account-wide, as for deletions; empty ids only move pts.
    case readMessagesContents(ids: [Int32], pts: Int32, ptsCount: Int32)
    // qts
    case newEncryptedMessage(ApiEncryptedMessage, qts: Int32)
    // channel pts
    case newChannelMessage(ApiMessage, pts: Int32, ptsCount: Int32)
    case editChannelMessage(ApiMessage, pts: Int32, ptsCount: Int32)
    case deleteChannelMessages(channelId: PeerId, ids: [Int32], pts: Int32, ptsCount: Int32)
    /// The account read a channel up to `maxId` (Boxwood counts it as one channel pts event, unlike Telegram).
    case readChannelInbox(channelId: PeerId, maxId: Int32, pts: Int32, ptsCount: Int32)
    /// ``readMessagesContents(ids:pts:ptsCount:)`` in a channel (a channel pts event in Boxwood, unlike Telegram).
    case readChannelMessagesContents(channelId: PeerId, ids: [Int32], pts: Int32, ptsCount: Int32)
    /// The channel has updates the client must fetch with getChannelDifference (`pts`: the server's, if sent).
    case channelTooLong(channelId: PeerId, pts: Int32?)
    // seq / date
    case userStatus(userId: PeerId, status: ApiUserStatus)
    case userName(userId: PeerId, firstName: String, lastName: String, username: String?)
    case notifySettings(peerId: PeerId, muteUntil: Int32)
    case chatTitle(chatId: PeerId, title: String)
    /// The account's cloud draft in a chat changed on one of its devices (nil: cleared); seq-ordered, no pts.
    case draftMessage(peerId: PeerId, draft: ApiDraft?)
    /// Maps a sent message's random id to its server id (in answers to sendMessage).
    case messageId(id: Int32, randomId: Int64)

    /// The pts this update moves the account's common box to and by how much (nil: not a pts update).
    public var ptsRange: (pts: Int32, count: Int32)? {
        switch self {
        case let .newMessage(_, pts, count), let .editMessage(_, pts, count), let .deleteMessages(_, pts, count),
             let .readHistoryInbox(_, _, pts, count), let .readHistoryOutbox(_, _, pts, count),
             let .pinnedMessages(_, _, _, pts, count), let .readMessagesContents(_, pts, count):
            return (pts, count)
        default:
            return nil
        }
    }

    /// The qts this update moves the secret-chat box to (it always counts 1).
    public var qts: Int32? {
        if case let .newEncryptedMessage(_, qts) = self { return qts }
        return nil
    }

    /// The channel and the channel pts (and count) this update carries.
    public var channelPtsRange: (channelId: PeerId, pts: Int32, count: Int32)? {
        switch self {
        case let .newChannelMessage(message, pts, count), let .editChannelMessage(message, pts, count):
            return (message.peerId, pts, count)
        case let .deleteChannelMessages(channelId, _, pts, count):
            return (channelId, pts, count)
        case let .readChannelInbox(channelId, _, pts, count), let .readChannelMessagesContents(channelId, _, pts, count):
            return (channelId, pts, count)
        default:
            return nil
        }
    }
}

/// The seven formats a server pushes updates in (Telegram's `Updates`).
public enum ApiUpdates: Hashable, Sendable, Codable {
    /// A batch with its own seq (`seq == 0`: not ordered by seq).
    case updates(updates: [ApiUpdate], users: [ApiUser], chats: [ApiChat], date: Int32, seq: Int32)
    /// Several batches merged: they cover seq `seqStart...seq`.
    case updatesCombined(updates: [ApiUpdate], users: [ApiUser], chats: [ApiChat], date: Int32, seqStart: Int32, seq: Int32)
    /// One update without users/chats and without seq.
    case updateShort(update: ApiUpdate, date: Int32)
    /// A new private message, fields inlined (`userId` is the other side).
    case updateShortMessage(id: Int32, userId: PeerId, text: String, outgoing: Bool, pts: Int32, ptsCount: Int32, date: Int32)
    /// A new group message, fields inlined.
    case updateShortChatMessage(id: Int32, fromId: PeerId, chatId: PeerId, text: String, outgoing: Bool, pts: Int32, ptsCount: Int32, date: Int32)
    /// The answer to sending a message to a user or group: its id and the pts it took.
    case updateShortSentMessage(id: Int32, pts: Int32, ptsCount: Int32, date: Int32)
    /// Too many updates to push: the client must call getDifference.
    case updatesTooLong
}

/// The answer to `getDifference`.
public enum ApiDifference: Hashable, Sendable, Codable {
    /// Nothing new.
    case empty(date: Int32, seq: Int32)
    /// Everything since the given cursor; `state` is the new cursor.
    case difference(newMessages: [ApiMessage], newEncryptedMessages: [ApiEncryptedMessage], otherUpdates: [ApiUpdate],
                    chats: [ApiChat], users: [ApiUser], state: ApiUpdatesState)
    /// Part of it; apply, store `intermediateState`, and call again.
    case slice(newMessages: [ApiMessage], newEncryptedMessages: [ApiEncryptedMessage], otherUpdates: [ApiUpdate],
               chats: [ApiChat], users: [ApiUser], intermediateState: ApiUpdatesState)
    /// Too far behind for a difference: the client resets its cursor to `pts` (and refetches dialogs).
    case tooLong(pts: Int32)
}

/// The answer to `getChannelDifference`.
public enum ApiChannelDifference: Hashable, Sendable, Codable {
    case empty(final: Bool, pts: Int32)
    case difference(final: Bool, pts: Int32, newMessages: [ApiMessage], otherUpdates: [ApiUpdate], chats: [ApiChat], users: [ApiUser])
    /// Too far behind: the dialog (with the channel's current pts) and its newest messages; the rest is a hole.
    case tooLong(dialog: ApiDialog, messages: [ApiMessage], chats: [ApiChat], users: [ApiUser])
}

/// The answer to `readHistory`: for users and groups the pts the read took (channels: pts nil).
public struct ApiAffectedMessages: Hashable, Sendable, Codable {
    public var pts: Int32?
    public var ptsCount: Int32

    public init(pts: Int32?, ptsCount: Int32) {
        self.pts = pts
        self.ptsCount = ptsCount
    }
}
