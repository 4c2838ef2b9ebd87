import BoxwoodSync
import Boxwood

/// One chat's authoritative state at a snapshot.
public struct SimulatedChatSnapshot: Hashable, Sendable {
    /// The chat's current messages by id.
    public var messages: [Int32: ApiMessage]
    public var readInboxMaxId: Int32
    public var readOutboxMaxId: Int32
    /// Incoming messages with an id above `readInboxMaxId`.
    public var unreadCount: Int32
    /// Muted until this date (0: not muted).
    public var muteUntil: Int32
    /// The account's cloud draft in the chat.
    public var draft: ApiDraft?

    /// A chat state (tests build expected states with it).
    public init(messages: [Int32: ApiMessage], readInboxMaxId: Int32, readOutboxMaxId: Int32, unreadCount: Int32,
                muteUntil: Int32, draft: ApiDraft? = nil) {
        self.draft = draft
        self.messages = messages
        self.readInboxMaxId = readInboxMaxId
        self.readOutboxMaxId = readOutboxMaxId
        self.unreadCount = unreadCount
        self.muteUntil = muteUntil
    }
}

/// The server's authoritative state at one moment, for comparing a client's database with.
public struct SimulatedServerSnapshot: Hashable, Sendable {
    /// The account's cursor (`date` is the logical clock).
    public var state: ApiUpdatesState
    /// The cursor when the simulation started: a client behind it gets `tooLong`.
    public var logStart: ApiUpdatesState
    /// The account's own user.
    public var accountPeerId: PeerId
    /// Every peer the server knows, ascending: the account, users, groups, channels, secret chats.
    public var allPeers: [PeerId]
    /// Every chat with a dialog (users with history, groups, channels, secret chats).
    public var chatStates: [PeerId: SimulatedChatSnapshot]
    /// Each channel's pts.
    public var channelPts: [PeerId: Int32]
    /// Each channel's pts when the simulation started: a channel client behind it gets `tooLong`.
    public var channelLogStartPts: [PeerId: Int32]
    /// Every user, the account included.
    public var users: [PeerId: ApiUser]
    /// Groups and channels.
    public var chats: [PeerId: ApiChat]
    /// The members of each group (other than the account).
    public var groupMembers: [PeerId: [PeerId]]
    /// The user on the other side of each secret chat.
    public var secretChatPartners: [PeerId: PeerId]
    /// The mutations applied (sendMessage/readHistory).
    public var appliedMutations: Set<ClientMutationId>
    /// The pinned chats, in pin order (always in the first page of the dialog list).
    public var pinnedPeers: [PeerId] = []

    /// Where a chat stands in the dialog list (``ApiDialogsOffset``: its top message's date and id, then the peer).
    public func dialogPosition(_ peerId: PeerId) -> ApiDialogsOffset {
        let top = chatStates[peerId]?.messages.keys.max() ?? 0
        return ApiDialogsOffset(date: chatStates[peerId]?.messages[top]?.date ?? 0, id: top, peerId: peerId)
    }
}

extension ServerState {
    /// The authoritative state as a snapshot.
    func snapshot() -> SimulatedServerSnapshot {
        var chatStates: [PeerId: SimulatedChatSnapshot] = [:]
        for (peer, record) in chats {
            chatStates[peer] = SimulatedChatSnapshot(messages: record.messages, readInboxMaxId: record.readInboxMaxId,
                                                     readOutboxMaxId: record.readOutboxMaxId,
                                                     unreadCount: record.unreadCount, muteUntil: record.muteUntil, draft: record.draft)
        }
        return SimulatedServerSnapshot(
            state: currentState, logStart: logStart, accountPeerId: accountPeerId,
            allPeers: ([accountPeerId] + otherUsers + groups + channels + secretChats).sorted(),
            chatStates: chatStates, channelPts: channelPts, channelLogStartPts: channelLogStartPts, users: users,
            chats: chatInfos, groupMembers: groupMembers, secretChatPartners: secretChatPartners,
            appliedMutations: Set(mutationAnswers.keys), pinnedPeers: pinnedPeers.filter { chats[$0] != nil })
    }
}
