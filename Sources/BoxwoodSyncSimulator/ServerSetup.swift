import BoxwoodSync
import Boxwood

/// Building the world the simulation starts from.
extension ServerState {
    /// The first date of the logical clock.
    static let clockStart: Int32 = 1_700_000_000

    /// A world built from `configuration.seed`: users, groups, channels, secret chats, their histories (partly
    /// read) and non-trivial counters. The log starts empty: the events that built the histories are not available.
    init(configuration: SimulatedServerConfiguration) {
        var random = DeterministicRandom(seed: configuration.seed, stream: 0)
        self.configuration = configuration
        faults = configuration.faults
        pushRandom = DeterministicRandom(seed: configuration.seed, stream: 1)
        requestRandom = DeterministicRandom(seed: configuration.seed, stream: 2)
        contentRandom = DeterministicRandom(seed: configuration.seed, stream: 3)

        let account = PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(Int64(random.int(in: 1...999))))
        accountPeerId = account
        otherUsers = (0..<configuration.users).map { PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(Int64(1_001 + $0))) }
        groups = (0..<configuration.groups).map { PeerId(namespace: SyncNamespaces.group, id: PeerId.Id(Int64(2_001 + $0))) }
        channels = (0..<configuration.channels).map { PeerId(namespace: SyncNamespaces.channel, id: PeerId.Id(Int64(3_001 + $0))) }
        secretChats = (0..<configuration.secretChats).map {
            PeerId(namespace: SyncNamespaces.secretChat, id: PeerId.Id(Int64(4_001 + $0)))
        }

        var users = [account: ApiUser(id: account, firstName: "Me", lastName: "", username: "me")]
        for user in otherUsers {
            let firstName = random.element(of: Vocabulary.firstNames)!
            users[user] = ApiUser(id: user, firstName: firstName, lastName: random.element(of: Vocabulary.lastNames)!,
                                  username: Vocabulary.username(&random, firstName: firstName))
        }
        self.users = users

        var chatInfos: [PeerId: ApiChat] = [:]
        var members: [PeerId: [PeerId]] = [:]
        let otherUsers = self.otherUsers
        for group in groups {
            chatInfos[group] = ApiChat(id: group, title: Vocabulary.title(&random, kind: "Group"))
            let count = random.int(in: min(2, otherUsers.count)...min(6, otherUsers.count))
            members[group] = random.sample(otherUsers, count: count).sorted()
        }
        for channel in channels {
            chatInfos[channel] = ApiChat(id: channel, title: Vocabulary.title(&random, kind: "Channel"))
        }
        self.chatInfos = chatInfos
        groupMembers = members
        var partners: [PeerId: PeerId] = [:]
        for chat in secretChats { partners[chat] = random.element(of: otherUsers)! }
        secretChatPartners = partners

        clock = Self.clockStart
        pts = random.int32(in: 1_000...1_999)
        qts = random.int32(in: 100...299)
        seq = random.int32(in: 20...99)
        nextMessageId = random.int32(in: 1...500)
        var channelPts: [PeerId: Int32] = [:]
        var channelNextMessageId: [PeerId: Int32] = [:]
        for channel in channels {
            channelPts[channel] = random.int32(in: 100...999)
            channelNextMessageId[channel] = random.int32(in: 1...100)
        }
        self.channelPts = channelPts
        self.channelNextMessageId = channelNextMessageId
        secretNextMessageId = [:]
        chats = [:]
        messagePeers = [:]
        accountLog = []
        channelLogs = [:]
        mutationAnswers = [:]
        createdIncoming = [:]
        connection = nil
        heldPushes = []
        pendingCombinedPush = nil
        faultStats = SimulatedFaultStats()
        trafficRandom = random
        logStart = ApiUpdatesState(pts: 0, qts: 0, date: 0, seq: 0)
        channelLogStartPts = [:]

        buildInitialHistories()
        logStart = currentState
        self.channelLogStartPts = self.channelPts
    }

    /// Fills every chat with 20–200 (configurable) messages with interleaved dates, then sets read states, pins and
    /// mutes.
    private mutating func buildInitialHistories() {
        var userChats = otherUsers.filter { _ in trafficRandom.chance(0.8) }
        if userChats.isEmpty { userChats = [otherUsers[0]] }
        var pool: [PeerId] = []
        for peer in userChats + groups + channels + secretChats {
            chats[peer] = ChatRecord()
            pool += Array(repeating: peer, count: trafficRandom.int(in: configuration.initialHistory))
        }
        trafficRandom.shuffle(&pool)
        for peer in pool {
            let date = tick()
            let text = Vocabulary.text(&trafficRandom)
            switch peer.namespace {
            case SyncNamespaces.user:
                let outgoing = trafficRandom.chance(0.35)
                _ = createCommonBoxMessage(peerId: peer, fromId: outgoing ? accountPeerId : peer, outgoing: outgoing,
                                           text: text, date: date)
            case SyncNamespaces.group:
                let outgoing = trafficRandom.chance(0.25)
                let author = outgoing ? accountPeerId : trafficRandom.element(of: groupMembers[peer]!)!
                _ = createCommonBoxMessage(peerId: peer, fromId: author, outgoing: outgoing, text: text, date: date)
            case SyncNamespaces.channel:
                _ = createChannelMessage(channelId: peer, fromId: peer, outgoing: false, text: text, date: date)
            default:
                _ = createSecretChatMessage(chatId: peer, outgoing: trafficRandom.chance(0.3), text: text, date: date,
                                            randomId: trafficRandom.nonZeroInt64())
            }
        }
        for peer in sortedChatPeers {
            var record = chats[peer]!
            record.readInboxMaxId = initialReadMarker(record.sortedIds { !$0.outgoing })
            record.readOutboxMaxId = initialReadMarker(record.sortedIds { $0.outgoing })
            if Self.isCommonBox(peer), trafficRandom.chance(0.3), let id = trafficRandom.element(of: record.sortedIds()) {
                record.messages[id]?.pinned = true
            }
            record.muteUntil = trafficRandom.chance(0.25) ? Int32.max : 0
            chats[peer] = record
        }
    }

    /// A read marker over `ids` (ascending): everything read, or the first 50–100%.
    private mutating func initialReadMarker(_ ids: [Int32]) -> Int32 {
        guard let last = ids.last else { return 0 }
        if trafficRandom.chance(0.4) { return last }
        let readCount = Int(Double(ids.count) * (0.5 + 0.5 * trafficRandom.unit()))
        return readCount == 0 ? 0 : ids[readCount - 1]
    }
}
