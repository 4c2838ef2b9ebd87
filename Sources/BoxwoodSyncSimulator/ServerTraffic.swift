import BoxwoodSync
import Boxwood

/// The kinds of events the simulated traffic is made of.
public enum SimulatedEventKind: String, CaseIterable, Hashable, Sendable {
    /// A user sends the account a private message (pts).
    case incomingPrivateMessage
    /// A member writes in a group (pts).
    case incomingGroupMessage
    /// The account writes to a user or group from another device (pts).
    case outgoingMessageFromOtherDevice
    /// A message of a user, group (pts) or channel (channel pts) is edited.
    case editMessage
    /// 1–3 messages of a user, group (pts) or channel (channel pts) are deleted.
    case deleteMessages
    /// The account reads a user or group chat on another device (pts).
    case readInboxFromOtherDevice
    /// The other side reads the account's messages (pts).
    case readOutbox
    /// A message of a user or group is pinned or unpinned (pts).
    case pinMessage
    /// Someone reacts to a message of a user, group (pts) or channel (channel pts), or the account changes its
    /// reaction on another device; now and then the update is for a message deleted before (bad input).
    case reactToMessage
    /// A secret-chat message arrives (qts).
    case encryptedMessage
    /// A channel posts (channel pts).
    case channelPost
    /// The account reads a channel on another device (channel pts).
    case channelReadFromOtherDevice
    /// A user goes online or offline (pushed only; in no log).
    case userStatus
    /// A user changes their name or username (seq).
    case userNameChange
    /// The account mutes or unmutes a chat (seq).
    case notifySettingsChange
    /// A group or channel is renamed (seq).
    case chatTitleChange
    /// The account types, changes or clears a draft on another device (seq).
    case draftFromOtherDevice
    /// The account saw mentions on another device: all of a chat's, or one (pts or channel pts).
    case readMentionsFromOtherDevice

    /// How often the kind occurs relative to the others.
    var weight: Int {
        switch self {
        case .incomingPrivateMessage: return 18
        case .incomingGroupMessage: return 14
        case .outgoingMessageFromOtherDevice: return 8
        case .editMessage: return 8
        case .deleteMessages: return 5
        case .readInboxFromOtherDevice: return 7
        case .readOutbox: return 6
        case .pinMessage: return 4
        case .reactToMessage: return 6
        case .encryptedMessage: return 6
        case .channelPost: return 12
        case .channelReadFromOtherDevice: return 4
        case .userStatus: return 5
        case .userNameChange: return 2
        case .notifySettingsChange: return 2
        case .chatTitleChange: return 2
        case .draftFromOtherDevice: return 3
        case .readMentionsFromOtherDevice: return 3
        }
    }
}

/// Random traffic: each event updates the authoritative state, is logged, and is pushed.
extension ServerState {
    /// `count` random events (an impossible pick, e.g. an edit with no messages, becomes an incoming message).
    mutating func generate(events count: Int) {
        let kinds = SimulatedEventKind.allCases
        let weights = kinds.map(\.weight)
        for _ in 0..<max(0, count) {
            releaseHeldPushes(probability: faults.delayedRelease)
            let kind = kinds[trafficRandom.weightedIndex(weights)]
            if !perform(kind) { _ = perform(.incomingPrivateMessage) }
        }
        flushCombinedPush()
    }

    /// One event of each of `kinds`, with one flush of merged seq events at the end; how many were possible.
    mutating func generate(sequence kinds: [SimulatedEventKind]) -> Int {
        var performed = 0
        for kind in kinds {
            releaseHeldPushes(probability: faults.delayedRelease)
            if perform(kind) { performed += 1 }
        }
        flushCombinedPush()
        return performed
    }

    /// One event of `kind`; false when it is impossible right now (nothing happens then).
    mutating func generate(_ kind: SimulatedEventKind) -> Bool {
        releaseHeldPushes(probability: faults.delayedRelease)
        let performed = perform(kind)
        flushCombinedPush()
        return performed
    }

    /// `count` incoming messages in one chat (a random user, group or channel when `peerId` is nil; a secret chat
    /// gets encrypted messages).
    mutating func generateBurst(messages count: Int, peerId: PeerId?) {
        let target = peerId ?? trafficRandom.element(of: otherUsers + groups + channels)!
        for _ in 0..<max(0, count) {
            releaseHeldPushes(probability: faults.delayedRelease)
            switch target.namespace {
            case SyncNamespaces.user: incomingMessage(peerId: target, fromId: target)
            case SyncNamespaces.group:
                incomingMessage(peerId: target, fromId: trafficRandom.element(of: groupMembers[target] ?? otherUsers)!)
            case SyncNamespaces.channel: channelPost(channelId: target)
            case SyncNamespaces.secretChat: encryptedMessage(chatId: target)
            default: preconditionFailure("no chat \(target)")
            }
        }
        flushCombinedPush()
    }

    private mutating func perform(_ kind: SimulatedEventKind) -> Bool {
        switch kind {
        case .incomingPrivateMessage:
            let user = trafficRandom.element(of: otherUsers)!
            incomingMessage(peerId: user, fromId: user, albums: true)
            return true
        case .incomingGroupMessage:
            guard let group = trafficRandom.element(of: groups) else { return false }
            incomingMessage(peerId: group, fromId: trafficRandom.element(of: groupMembers[group]!)!, albums: true)
            return true
        case .outgoingMessageFromOtherDevice:
            return outgoingMessageFromOtherDevice()
        case .editMessage:
            return editMessage()
        case .deleteMessages:
            return deleteMessages()
        case .readInboxFromOtherDevice:
            return readInboxFromOtherDevice()
        case .readOutbox:
            return readOutbox()
        case .pinMessage:
            return pinMessage()
        case .reactToMessage:
            return reactToMessage()
        case .encryptedMessage:
            guard let chat = trafficRandom.element(of: secretChats) else { return false }
            encryptedMessage(chatId: chat)
            return true
        case .channelPost:
            guard let channel = trafficRandom.element(of: channels) else { return false }
            channelPost(channelId: channel)
            return true
        case .channelReadFromOtherDevice:
            return channelRead()
        case .userStatus:
            userStatus()
            return true
        case .userNameChange:
            userNameChange()
            return true
        case .notifySettingsChange:
            notifySettingsChange()
            return true
        case .chatTitleChange:
            return chatTitleChange()
        case .draftFromOtherDevice:
            return draftFromOtherDevice()
        case .readMentionsFromOtherDevice:
            return readMentionsFromOtherDevice()
        }
    }

    // MARK: Messages

    /// A new message from `fromId` in `peerId`; with `albums`, now and then an album of 2–3 photos sent together
    /// (bursts make exactly the messages they are asked for).
    private mutating func incomingMessage(peerId: PeerId, fromId: PeerId, albums: Bool = false) {
        let album: [ApiMessageContent?] = albums && contentRandom.chance(0.04) ? albumContents(count: contentRandom.int(in: 2...3)) : [nil]
        let text = Vocabulary.text(&trafficRandom)
        for content in album {
            let date = tick()
            let message = createCommonBoxMessage(peerId: peerId, fromId: fromId, outgoing: false, text: text, date: date,
                                                 content: content)
            createdIncoming[peerId, default: []].insert(message.id)
            _ = recordPtsEvent(date: date) { .newMessage(message, pts: $0, ptsCount: 1) }
            pushNewMessage(message, pts: pts)
        }
    }

    private mutating func outgoingMessageFromOtherDevice() -> Bool {
        let candidates = sortedChatPeers.filter(Self.isCommonBox)
        guard let peer = trafficRandom.element(of: candidates) else { return false }
        let date = tick()
        let message = createCommonBoxMessage(peerId: peer, fromId: accountPeerId, outgoing: true,
                                             text: Vocabulary.text(&trafficRandom), date: date)
        _ = recordPtsEvent(date: date) { .newMessage(message, pts: $0, ptsCount: 1) }
        pushNewMessage(message, pts: pts)
        return true
    }

    private mutating func encryptedMessage(chatId: PeerId) {
        let date = tick()
        let message = createSecretChatMessage(chatId: chatId, outgoing: false, text: Vocabulary.text(&trafficRandom),
                                              date: date, randomId: trafficRandom.nonZeroInt64())
        createdIncoming[chatId, default: []].insert(message.id)
        let encrypted = ApiEncryptedMessage(chatId: chatId, id: message.id, randomId: message.randomId, date: date,
                                            text: message.text)
        pushSingle(recordQtsEvent(date: date, message: encrypted), date: date)
    }

    private mutating func channelPost(channelId: PeerId) {
        let date = tick()
        let message = createChannelMessage(channelId: channelId, fromId: channelId, outgoing: false,
                                           text: Vocabulary.text(&trafficRandom), date: date)
        createdIncoming[channelId, default: []].insert(message.id)
        let update = recordChannelEvent(channelId: channelId, date: date) { .newChannelMessage(message, pts: $0, ptsCount: 1) }
        pushSingle(update, date: date)
    }

    private mutating func editMessage() -> Bool {
        let candidates = sortedChatPeers.filter {
            $0.namespace != SyncNamespaces.secretChat && !(chats[$0]!.messages.isEmpty)
        }
        guard let peer = trafficRandom.element(of: candidates),
              let id = trafficRandom.element(of: chats[peer]!.sortedIds()) else { return false }
        let date = tick()
        var message = chats[peer]!.messages[id]!
        message.text = Vocabulary.text(&trafficRandom)
        message.editVersion += 1
        message.content.revision += 1
        // The new text's entities (the old ones may not fit it).
        message.content.entities = []
        chats[peer]!.messages[id] = message
        let edited = message
        if peer.namespace == SyncNamespaces.channel {
            pushSingle(recordChannelEvent(channelId: peer, date: date) { .editChannelMessage(edited, pts: $0, ptsCount: 1) },
                       date: date)
        } else {
            pushSingle(recordPtsEvent(date: date) { .editMessage(edited, pts: $0, ptsCount: 1) }, date: date)
        }
        return true
    }

    private mutating func deleteMessages() -> Bool {
        let candidates = sortedChatPeers.filter {
            $0.namespace != SyncNamespaces.secretChat && !(chats[$0]!.messages.isEmpty)
        }
        guard let peer = trafficRandom.element(of: candidates) else { return false }
        let ids = trafficRandom.sample(chats[peer]!.sortedIds(), count: trafficRandom.int(in: 1...3)).sorted()
        let date = tick()
        for id in ids {
            recentlyDeleted[peer] = chats[peer]!.messages[id]
            chats[peer]!.messages[id] = nil
            if Self.isCommonBox(peer) { messagePeers[id] = nil }
        }
        if peer.namespace == SyncNamespaces.channel {
            pushSingle(recordChannelEvent(channelId: peer, date: date) {
                .deleteChannelMessages(channelId: peer, ids: ids, pts: $0, ptsCount: 1)
            }, date: date)
        } else {
            pushSingle(recordPtsEvent(date: date) { .deleteMessages(ids: ids, pts: $0, ptsCount: 1) }, date: date)
        }
        return true
    }

    private mutating func pinMessage() -> Bool {
        let candidates = sortedChatPeers.filter { Self.isCommonBox($0) && !(chats[$0]!.messages.isEmpty) }
        guard let peer = trafficRandom.element(of: candidates),
              let id = trafficRandom.element(of: chats[peer]!.sortedIds()) else { return false }
        let date = tick()
        let pinned = !chats[peer]!.messages[id]!.pinned
        chats[peer]!.messages[id]!.pinned = pinned
        pushSingle(recordPtsEvent(date: date) { .pinnedMessages(peerId: peer, ids: [id], pinned: pinned, pts: $0, ptsCount: 1) },
                   date: date)
        return true
    }

    // MARK: Read states

    private mutating func readInboxFromOtherDevice() -> Bool {
        let candidates = sortedChatPeers.filter { Self.isCommonBox($0) && chats[$0]!.unreadCount > 0 }
        guard let peer = trafficRandom.element(of: candidates) else { return false }
        let record = chats[peer]!
        let maxId = trafficRandom.element(of: record.sortedIds { !$0.outgoing && $0.id > record.readInboxMaxId })!
        let date = tick()
        chats[peer]!.readInboxMaxId = maxId
        pushSingle(recordPtsEvent(date: date) { .readHistoryInbox(peerId: peer, maxId: maxId, pts: $0, ptsCount: 1) },
                   date: date)
        return true
    }

    private mutating func readOutbox() -> Bool {
        let candidates = sortedChatPeers.filter { peer in
            let record = chats[peer]!
            return Self.isCommonBox(peer) && record.messages.values.contains { $0.outgoing && $0.id > record.readOutboxMaxId }
        }
        guard let peer = trafficRandom.element(of: candidates) else { return false }
        let record = chats[peer]!
        let maxId = trafficRandom.element(of: record.sortedIds { $0.outgoing && $0.id > record.readOutboxMaxId })!
        let date = tick()
        chats[peer]!.readOutboxMaxId = maxId
        pushSingle(recordPtsEvent(date: date) { .readHistoryOutbox(peerId: peer, maxId: maxId, pts: $0, ptsCount: 1) },
                   date: date)
        return true
    }

    private mutating func channelRead() -> Bool {
        let candidates = channels.filter { chats[$0]!.unreadCount > 0 }
        guard let channel = trafficRandom.element(of: candidates) else { return false }
        let record = chats[channel]!
        let maxId = trafficRandom.element(of: record.sortedIds { !$0.outgoing && $0.id > record.readInboxMaxId })!
        let date = tick()
        chats[channel]!.readInboxMaxId = maxId
        pushSingle(recordChannelEvent(channelId: channel, date: date) {
            .readChannelInbox(channelId: channel, maxId: maxId, pts: $0, ptsCount: 1)
        }, date: date)
        return true
    }

    // MARK: Users, settings, titles

    private mutating func userStatus() {
        let user = trafficRandom.element(of: otherUsers)!
        let date = tick()
        let status: ApiUserStatus = trafficRandom.chance(0.5) ? .online(expires: date + 300) : .offline(wasOnline: date)
        pushSingle(.userStatus(userId: user, status: status), date: date)
    }

    private mutating func userNameChange() {
        let userId = trafficRandom.element(of: otherUsers)!
        var user = users[userId]!
        if trafficRandom.chance(0.5) {
            user.firstName = trafficRandom.element(of: Vocabulary.firstNames)!
        } else {
            user.username = Vocabulary.username(&trafficRandom, firstName: user.firstName)
        }
        let date = tick()
        users[userId] = user
        let update = ApiUpdate.userName(userId: userId, firstName: user.firstName, lastName: user.lastName,
                                        username: user.username)
        pushSeqEvent(update, seq: recordSeqEvent(date: date, update), date: date)
    }

    private mutating func notifySettingsChange() {
        let peer = trafficRandom.element(of: sortedChatPeers)!
        let date = tick()
        let muteUntil: Int32 = chats[peer]!.muteUntil > date ? 0
            : (trafficRandom.chance(0.5) ? Int32.max : date + trafficRandom.int32(in: 3_600...604_800))
        chats[peer]!.muteUntil = muteUntil
        let update = ApiUpdate.notifySettings(peerId: peer, muteUntil: muteUntil)
        pushSeqEvent(update, seq: recordSeqEvent(date: date, update), date: date)
    }

    private mutating func draftFromOtherDevice() -> Bool {
        guard let peer = trafficRandom.element(of: sortedChatPeers.filter({ $0.namespace != SyncNamespaces.secretChat })) else { return false }
        let clear = chats[peer]?.draft != nil && trafficRandom.chance(0.3)
        let text = clear ? "" : Vocabulary.text(&trafficRandom)
        _ = saveDraft(peerId: peer, text: text)
        return true
    }

    private mutating func chatTitleChange() -> Bool {
        guard let chat = trafficRandom.element(of: groups + channels) else { return false }
        let title = Vocabulary.title(&trafficRandom, kind: chat.namespace == SyncNamespaces.group ? "Group" : "Channel")
        let date = tick()
        chatInfos[chat]!.title = title
        let update = ApiUpdate.chatTitle(chatId: chat, title: title)
        pushSeqEvent(update, seq: recordSeqEvent(date: date, update), date: date)
        return true
    }
}
