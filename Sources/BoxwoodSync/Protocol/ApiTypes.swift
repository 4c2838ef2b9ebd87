import Boxwood

/// Peer and message namespaces of the synced account (Telegram's `Namespaces`).
public enum SyncNamespaces {
    /// A user (private chat).
    public static let user = PeerId.Namespace(0)
    /// A basic group: its messages share the account's message-id and pts sequence.
    public static let group = PeerId.Namespace(1)
    /// A channel (or supergroup): its own message ids and its own pts.
    public static let channel = PeerId.Namespace(2)
    /// A secret chat: messages arrive through qts.
    public static let secretChat = PeerId.Namespace(3)
    /// Messages the server has (ids assigned by the server).
    public static let cloudMessages: MessageId.Namespace = 0
    /// Messages created on this device and not yet acknowledged by the server.
    public static let localMessages: MessageId.Namespace = 1
}

/// A message as the server describes it.
public struct ApiMessage: Hashable, Sendable, Codable {
    /// The server id: account-wide for users and groups, per channel for channels, per secret chat for secret chats.
    public var id: Int32
    /// The chat the message is in.
    public var peerId: PeerId
    /// The author.
    public var fromId: PeerId
    public var date: Int32
    public var text: String
    /// Sent by the account itself.
    public var outgoing: Bool
    /// 0 until the message is edited; each edit increments it.
    public var editVersion: Int32
    /// Pinned in its chat.
    public var pinned: Bool
    /// The client's random id, echoed back for messages the account sent (0 when unknown).
    public var randomId: Int64
    /// Media, formatting, reply, forward, reactions, album and counters.
    public var content: ApiMessageContent
    /// The message mentions the account (a mention of it, or a reply to its message; Telegram's `mentioned`). Set by
    /// the server when the message is sent; an edit does not change it.
    public var mentioned: Bool
    /// The account has not yet seen the message's mention or media (Telegram's `media_unread`); it only ever goes
    /// from true to false (``ApiUpdate/readMessagesContents(ids:pts:ptsCount:)``).
    public var mediaUnread: Bool

    /// An unread mention of the account: incoming, mentioning it, not yet seen. Counted in a dialog's
    /// ``ApiDialog/unreadMentionsCount`` and returned by ``SyncTransport/getUnreadMentions(peerId:offsetId:addOffset:limit:maxId:minId:)``.
    public var isUnreadMention: Bool { mentioned && mediaUnread && !outgoing }

    public init(id: Int32, peerId: PeerId, fromId: PeerId, date: Int32, text: String, outgoing: Bool,
                editVersion: Int32 = 0, pinned: Bool = false, randomId: Int64 = 0, content: ApiMessageContent = ApiMessageContent(),
                mentioned: Bool = false, mediaUnread: Bool = false) {
        self.id = id
        self.peerId = peerId
        self.fromId = fromId
        self.date = date
        self.text = text
        self.outgoing = outgoing
        self.editVersion = editVersion
        self.pinned = pinned
        self.randomId = randomId
        self.content = content
        self.mentioned = mentioned
        self.mediaUnread = mediaUnread
    }
}

extension ApiMessage {
    private enum CodingKeys: String, CodingKey {
        case id, peerId, fromId, date, text, outgoing, editVersion, pinned, randomId, content, mentioned, mediaUnread
    }

    /// Decodes what the synthesized coding writes; the flags added later (`mentioned`, `mediaUnread`) are false when
    /// absent (a peer of an older build, the fuzz corpus).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try container.decode(Int32.self, forKey: .id), peerId: try container.decode(PeerId.self, forKey: .peerId),
                  fromId: try container.decode(PeerId.self, forKey: .fromId), date: try container.decode(Int32.self, forKey: .date),
                  text: try container.decode(String.self, forKey: .text), outgoing: try container.decode(Bool.self, forKey: .outgoing),
                  editVersion: try container.decode(Int32.self, forKey: .editVersion), pinned: try container.decode(Bool.self, forKey: .pinned),
                  randomId: try container.decode(Int64.self, forKey: .randomId),
                  content: try container.decode(ApiMessageContent.self, forKey: .content),
                  mentioned: try container.decodeIfPresent(Bool.self, forKey: .mentioned) ?? false,
                  mediaUnread: try container.decodeIfPresent(Bool.self, forKey: .mediaUnread) ?? false)
    }
}

/// A user as the server describes it.
public struct ApiUser: Hashable, Sendable, Codable {
    public var id: PeerId
    public var firstName: String
    public var lastName: String
    public var username: String?

    public init(id: PeerId, firstName: String, lastName: String, username: String?) {
        self.id = id
        self.firstName = firstName
        self.lastName = lastName
        self.username = username
    }
}

/// A group or channel as the server describes it.
public struct ApiChat: Hashable, Sendable, Codable {
    public var id: PeerId
    public var title: String

    public init(id: PeerId, title: String) {
        self.id = id
        self.title = title
    }
}

/// Whether a user is online.
public enum ApiUserStatus: Hashable, Sendable, Codable {
    case online(expires: Int32)
    case offline(wasOnline: Int32)
}

/// A message of a secret chat (delivered through qts).
public struct ApiEncryptedMessage: Hashable, Sendable, Codable {
    /// The secret chat (namespace ``SyncNamespaces/secretChat``).
    public var chatId: PeerId
    /// The message's id inside the secret chat (assigned by the server in order).
    public var id: Int32
    public var randomId: Int64
    public var date: Int32
    public var text: String

    public init(chatId: PeerId, id: Int32, randomId: Int64, date: Int32, text: String) {
        self.chatId = chatId
        self.id = id
        self.randomId = randomId
        self.date = date
        self.text = text
    }
}

/// The account's update cursor on the server.
public struct ApiUpdatesState: Hashable, Sendable, Codable {
    public var pts: Int32
    public var qts: Int32
    public var date: Int32
    public var seq: Int32

    public init(pts: Int32, qts: Int32, date: Int32, seq: Int32) {
        self.pts = pts
        self.qts = qts
        self.date = date
        self.seq = seq
    }
}

/// One chat of the dialog list: its newest message and read state (and, for a channel, its pts).
public struct ApiDialog: Hashable, Sendable, Codable {
    public var peerId: PeerId
    /// The newest message id (0: the chat is empty).
    public var topMessage: Int32
    public var readInboxMaxId: Int32
    public var readOutboxMaxId: Int32
    public var unreadCount: Int32
    /// A channel's pts (nil for other chats).
    public var pts: Int32?
    /// Muted until this date (0: not muted).
    public var muteUntil: Int32
    /// Pinned to the top of the list (pinned dialogs come first in the first page of `getDialogs`, in pin order).
    public var pinned: Bool
    /// The account's cloud draft in this chat, nil when none.
    public var draft: ApiDraft?
    /// The chat's unread mentions of the account (``ApiMessage/isUnreadMention``), stored or not.
    public var unreadMentionsCount: Int32

    public init(peerId: PeerId, topMessage: Int32, readInboxMaxId: Int32, readOutboxMaxId: Int32, unreadCount: Int32,
                pts: Int32?, muteUntil: Int32, pinned: Bool = false, draft: ApiDraft? = nil, unreadMentionsCount: Int32 = 0) {
        self.peerId = peerId
        self.topMessage = topMessage
        self.readInboxMaxId = readInboxMaxId
        self.readOutboxMaxId = readOutboxMaxId
        self.unreadCount = unreadCount
        self.pts = pts
        self.muteUntil = muteUntil
        self.pinned = pinned
        self.draft = draft
        self.unreadMentionsCount = unreadMentionsCount
    }
}

extension ApiDialog {
    private enum CodingKeys: String, CodingKey {
        case peerId, topMessage, readInboxMaxId, readOutboxMaxId, unreadCount, pts, muteUntil, pinned, draft, unreadMentionsCount
    }

    /// Decodes what the synthesized coding writes; fields added later (`pinned`, `draft`, `unreadMentionsCount`) take their defaults when
    /// absent (a peer of an older build, the fuzz corpus).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(peerId: try container.decode(PeerId.self, forKey: .peerId), topMessage: try container.decode(Int32.self, forKey: .topMessage),
                  readInboxMaxId: try container.decode(Int32.self, forKey: .readInboxMaxId),
                  readOutboxMaxId: try container.decode(Int32.self, forKey: .readOutboxMaxId),
                  unreadCount: try container.decode(Int32.self, forKey: .unreadCount), pts: try container.decodeIfPresent(Int32.self, forKey: .pts),
                  muteUntil: try container.decode(Int32.self, forKey: .muteUntil),
                  pinned: try container.decodeIfPresent(Bool.self, forKey: .pinned) ?? false,
                  draft: try container.decodeIfPresent(ApiDraft.self, forKey: .draft),
                  unreadMentionsCount: try container.decodeIfPresent(Int32.self, forKey: .unreadMentionsCount) ?? 0)
    }
}

/// A cloud draft (Telegram's `draftMessage`): the text the account was typing in a chat, on any of its devices.
public struct ApiDraft: Hashable, Sendable, Codable {
    public var text: String
    /// When it was saved (server time).
    public var date: Int32

    public init(text: String, date: Int32) {
        self.text = text
        self.date = date
    }
}

/// Identifies one outbound mutation of one client installation; the server applies each at most once.
public struct ClientMutationId: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The installation (random, persisted with the database).
    public var clientId: Int64
    /// Monotonic per installation, persisted before the request is sent.
    public var sequence: Int64

    public init(clientId: Int64, sequence: Int64) {
        self.clientId = clientId
        self.sequence = sequence
    }

    public var description: String { "\(clientId):\(sequence)" }
}
