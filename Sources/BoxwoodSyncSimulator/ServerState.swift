import BoxwoodSync
import Boxwood

/// One chat's authoritative state on the server.
struct ChatRecord {
    /// Current messages by id (edits replace them, deletes remove them).
    var messages: [Int32: ApiMessage] = [:]
    var readInboxMaxId: Int32 = 0
    var readOutboxMaxId: Int32 = 0
    var muteUntil: Int32 = 0
    /// The account's cloud draft in the chat.
    var draft: ApiDraft?

    /// The newest message id (0: empty).
    var topMessageId: Int32 { messages.keys.max() ?? 0 }
    /// The highest id the chat ever had. Ids are never reused, so a deleted newest message does not lower it:
    /// a read up to that id (sent before the delete was seen) is a valid position.
    private(set) var highestMessageId: Int32 = 0

    /// Stores a new message.
    mutating func add(_ message: ApiMessage) {
        messages[message.id] = message
        highestMessageId = max(highestMessageId, message.id)
    }

    /// Incoming messages newer than the inbox read marker.
    var unreadCount: Int32 {
        Int32(messages.values.reduce(0) { $0 + (!$1.outgoing && $1.id > readInboxMaxId ? 1 : 0) })
    }

    /// Ids of the messages matching `isIncluded`, ascending (sorted so random picks are deterministic).
    func sortedIds(where isIncluded: (ApiMessage) -> Bool = { _ in true }) -> [Int32] {
        messages.values.filter(isIncluded).map(\.id).sorted()
    }
}

/// The stored answer of an applied mutation, returned again when the mutation is repeated.
enum MutationAnswer {
    case sent(ApiUpdates)
    case read(ApiAffectedMessages)
    /// An edit or a reaction: the message's edit update.
    case edited(ApiUpdates)
    case deleted(ApiAffectedMessages)
}

/// A seq-ordered push being merged with the following ones into one `updatesCombined`.
struct PendingCombinedPush {
    var updates: [ApiUpdate]
    var seqStart: Int32
    var seq: Int32
    var date: Int32
    /// How many seq events to merge before sending.
    var target: Int
}

/// Everything the simulated server knows; mutated only under ``SimulatedServer``'s lock.
struct ServerState {
    let configuration: SimulatedServerConfiguration
    var faults: SimulatedFaults

    /// World building and traffic (what happens, and in which push format).
    var trafficRandom: DeterministicRandom
    /// Push faults.
    var pushRandom: DeterministicRandom
    /// Request faults.
    var requestRandom: DeterministicRandom
    /// Message content (media, entities, replies, forwards, reactions; see `ServerContent.swift`).
    var contentRandom = DeterministicRandom(seed: 0, stream: 3)
    /// Photos sent so far: a later message may carry one again (shared media).
    var photos: [ApiPhoto] = []
    /// The last media id handed out (photos, files, albums).
    var nextMediaId: Int64 = 0
    /// The last message deleted in each chat: the target of a reaction update for a deleted message (bad input).
    var recentlyDeleted: [PeerId: ApiMessage] = [:]

    // The world.
    let accountPeerId: PeerId
    /// Users other than the account, ascending.
    let otherUsers: [PeerId]
    let groups: [PeerId]
    let channels: [PeerId]
    let secretChats: [PeerId]
    /// Members of each group (other than the account), ascending.
    let groupMembers: [PeerId: [PeerId]]
    /// The user on the other side of each secret chat.
    let secretChatPartners: [PeerId: PeerId]
    /// Every user, the account included.
    var users: [PeerId: ApiUser]
    /// Groups and channels.
    var chatInfos: [PeerId: ApiChat]
    /// Every chat that has a dialog (users with history, groups, channels, secret chats).
    var chats: [PeerId: ChatRecord]
    /// The chat of each account-wide message id (users and groups), for deleteMessages.
    var messagePeers: [Int32: PeerId]

    // Counters.
    /// The logical clock: the date of the newest event.
    var clock: Int32
    var pts: Int32
    var qts: Int32
    var seq: Int32
    /// The next account-wide message id (users and groups).
    var nextMessageId: Int32
    var channelPts: [PeerId: Int32]
    var channelNextMessageId: [PeerId: Int32]
    var secretNextMessageId: [PeerId: Int32]

    // Logs.
    /// The account's events in order, since the simulation started.
    var accountLog: [AccountLogEntry]
    /// The cursor when the simulation started: nothing before it is in the log (set once, by the setup).
    var logStart: ApiUpdatesState
    /// Each channel's pts events in order, since the simulation started.
    var channelLogs: [PeerId: [ChannelLogEntry]]
    /// Each channel's pts when the simulation started (set once, by the setup).
    var channelLogStartPts: [PeerId: Int32]

    // Requests.
    var mutationAnswers: [ClientMutationId: MutationAnswer]
    /// Incoming messages created since the simulation started, by chat.
    var createdIncoming: [PeerId: Set<Int32>]
    /// The messages sendMessage created (once per applied mutation), as created, in order.
    var sentMessages: [ApiMessage] = []
    /// The account's deletions as applied: chat, ids still there, for everyone or not.
    var deletions: [(peerId: PeerId, ids: [Int32], revoke: Bool)] = []
    /// Uploads in progress or done, by file id (``ServerUpload``).
    var uploads: [Int64: ServerUpload] = [:]
    /// How many times each part of each upload was received (a resumed upload sends few parts twice).
    var partsReceived: [Int64: [Int32: Int]] = [:]

    // Pushes.
    /// The current push stream (nil: disconnected).
    var connection: AsyncStream<SyncPushEvent>.Continuation?
    /// Pushes the fault layer holds back.
    var heldPushes: [ApiUpdates]
    var pendingCombinedPush: PendingCombinedPush?
    var faultStats: SimulatedFaultStats

    /// The current cursor (`date` is the clock).
    var currentState: ApiUpdatesState {
        ApiUpdatesState(pts: pts, qts: qts, date: clock, seq: seq)
    }

    /// Advances the clock and returns the new event's date.
    mutating func tick() -> Int32 {
        clock += 1
        return clock
    }

    /// Chats with a dialog, ascending (a stable order for random picks and answers).
    var sortedChatPeers: [PeerId] {
        chats.keys.sorted()
    }

    /// The channels whose updates are never pushed (``SimulatedServerConfiguration/unpushedChannels``).
    var unpushedChannels: Set<PeerId> {
        Set(channels.prefix(max(0, configuration.unpushedChannels)))
    }

    /// The pinned chats, in pin order: the first ``SimulatedServerConfiguration/pinnedChats`` groups and channels.
    var pinnedPeers: [PeerId] {
        Array((groups + channels).prefix(max(0, configuration.pinnedChats)))
    }

    /// The channels the account may not post in (``SimulatedServerConfiguration/readOnlyChannels``).
    var readOnlyChannels: Set<PeerId> {
        Set(channels.suffix(max(0, configuration.readOnlyChannels)))
    }

    /// Whether `peerId` belongs to the account's common box (account-wide message ids and pts).
    static func isCommonBox(_ peerId: PeerId) -> Bool {
        peerId.namespace == SyncNamespaces.user || peerId.namespace == SyncNamespaces.group
    }
}
