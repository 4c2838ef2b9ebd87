import BoxwoodSync
import BoxwoodSyncSimulator
import Boxwood

/// An in-memory client that applies differences and pushes the way a correct client does, checking pts, qts, seq
/// and channel-pts continuity as it goes; its model can be compared with a server snapshot.
struct ReferenceClient {
    var state: ApiUpdatesState
    var chats: [PeerId: SimulatedChatSnapshot]
    var channelPts: [PeerId: Int32]
    var users: [PeerId: ApiUser]
    var chatInfos: [PeerId: ApiChat]
    let accountPeerId: PeerId
    let secretChatPartners: [PeerId: PeerId]
    /// The chat of each account-wide message id (for deleteMessages).
    var messagePeers: [Int32: PeerId] = [:]
    /// Channels announced by `channelTooLong`, to fetch with getChannelDifference.
    var channelsToFetch = Set<PeerId>()
    /// Continuity violations and unexpected answers.
    var issues: [String] = []
    /// Difference answers seen, by kind.
    var slices = 0
    var differences = 0
    var channelDifferenceAnswers = 0

    /// A client whose database equals `snapshot`.
    init(snapshot: SimulatedServerSnapshot) {
        state = snapshot.state
        chats = snapshot.chatStates
        channelPts = snapshot.channelPts
        users = snapshot.users
        chatInfos = snapshot.chats
        accountPeerId = snapshot.accountPeerId
        secretChatPartners = snapshot.secretChatPartners
        for (peer, chat) in snapshot.chatStates where peer.namespace == SyncNamespaces.user || peer.namespace == SyncNamespaces.group {
            for id in chat.messages.keys { messagePeers[id] = peer }
        }
    }

    // MARK: Difference

    /// Calls getDifference until it is up to date (looping slices), then fetches every announced channel.
    mutating func sync(with server: SimulatedServer, ptsTotalLimit: Int32 = 1_000_000, channelLimit: Int32 = 20) async throws {
        loop: while true {
            let answer = try await server.getDifference(pts: state.pts, qts: state.qts, date: state.date, ptsTotalLimit: ptsTotalLimit)
            switch answer {
            case let .empty(date, seq):
                state.date = date
                state.seq = seq
                break loop
            case let .difference(newMessages, encrypted, other, chats, users, newState):
                differences += 1
                applyDifference(newMessages, encrypted, other, chats, users, to: newState)
                break loop
            case let .slice(newMessages, encrypted, other, chats, users, intermediate):
                slices += 1
                applyDifference(newMessages, encrypted, other, chats, users, to: intermediate)
            case .tooLong:
                issues.append("unexpected tooLong at \(state)")
                break loop
            }
        }
        for channel in channelsToFetch.sorted() {
            try await syncChannel(channel, with: server, limit: channelLimit)
        }
        channelsToFetch.removeAll()
    }

    /// Calls getChannelDifference until `final`, checking channel-pts continuity.
    mutating func syncChannel(_ channel: PeerId, with server: SimulatedServer, limit: Int32) async throws {
        while true {
            let before = channelPts[channel] ?? 0
            let answer = try await server.getChannelDifference(channelId: channel, pts: before, limit: limit)
            channelDifferenceAnswers += 1
            switch answer {
            case let .empty(final, pts):
                if !final || pts != before { issues.append("channel \(channel): empty(final: \(final), pts: \(pts)) at \(before)") }
                return
            case let .difference(final, pts, newMessages, otherUpdates, chats, users):
                absorb(users: users, chats: chats)
                var updates = newMessages.map { ApiUpdate.newChannelMessage($0, pts: 0, ptsCount: 1) }
                updates += otherUpdates
                let carried = otherUpdates.compactMap { $0.channelPtsRange?.pts }
                if Int(pts - before) != updates.count || carried != carried.sorted() || carried.contains(where: { $0 <= before || $0 > pts }) {
                    issues.append("channel \(channel): \(updates.count) events for pts \(before) -> \(pts), carried \(carried)")
                }
                for update in updates { apply(update) }
                channelPts[channel] = pts
                if final { return }
            case let .tooLong(dialog, messages, chats, users):
                issues.append("channel \(channel): tooLong at \(before)")
                absorb(users: users, chats: chats)
                var chat = self.chats[channel]!
                chat.messages = Dictionary(uniqueKeysWithValues: messages.map { ($0.id, $0) })
                chat.readInboxMaxId = dialog.readInboxMaxId
                self.chats[channel] = chat
                channelPts[channel] = dialog.pts
                return
            }
        }
    }

    private mutating func applyDifference(_ newMessages: [ApiMessage], _ encrypted: [ApiEncryptedMessage], _ other: [ApiUpdate],
                                          _ chats: [ApiChat], _ users: [ApiUser], to newState: ApiUpdatesState) {
        let carried = other.compactMap { $0.ptsRange?.pts }
        let ptsEvents = newMessages.count + carried.count
        if Int(newState.pts - state.pts) != ptsEvents {
            issues.append("difference moves pts \(state.pts) -> \(newState.pts) with \(ptsEvents) pts events")
        }
        if carried != carried.sorted() || carried.contains(where: { $0 <= state.pts || $0 > newState.pts }) {
            issues.append("difference pts out of order or range: \(carried) for \(state.pts) -> \(newState.pts)")
        }
        if Int(newState.qts - state.qts) != encrypted.count {
            issues.append("difference moves qts \(state.qts) -> \(newState.qts) with \(encrypted.count) messages")
        }
        if newState.date < state.date || newState.seq < state.seq {
            issues.append("difference moves date/seq backwards: \(state) -> \(newState)")
        }
        absorb(users: users, chats: chats)
        for message in newMessages { insert(message) }
        for message in encrypted { insert(secretChatMessage(message)) }
        for update in other { apply(update) }
        state = newState
    }

    // MARK: Pushes

    /// Applies one push, checking that it continues the pts/qts/seq/channel-pts sequences exactly.
    mutating func apply(push: ApiUpdates) {
        switch push {
        case let .updateShortMessage(id, userId, text, outgoing, pts, ptsCount, date):
            advancePts(to: pts, count: ptsCount)
            insert(ApiMessage(id: id, peerId: userId, fromId: outgoing ? accountPeerId : userId, date: date, text: text,
                              outgoing: outgoing))
        case let .updateShortChatMessage(id, fromId, chatId, text, outgoing, pts, ptsCount, date):
            advancePts(to: pts, count: ptsCount)
            insert(ApiMessage(id: id, peerId: chatId, fromId: fromId, date: date, text: text, outgoing: outgoing))
        case let .updateShort(update, _):
            applyPushed(update)
        case let .updates(updates, users, chats, _, seq):
            absorb(users: users, chats: chats)
            if seq != 0 {
                if seq != state.seq + 1 { issues.append("push seq \(seq) after \(state.seq)") }
                state.seq = seq
            }
            for update in updates { applyPushed(update) }
        case let .updatesCombined(updates, users, chats, _, seqStart, seq):
            absorb(users: users, chats: chats)
            if seqStart != state.seq + 1 || Int(seq - seqStart) + 1 != updates.count {
                issues.append("combined push seq \(seqStart)...\(seq) after \(state.seq) with \(updates.count) updates")
            }
            state.seq = seq
            for update in updates { applyPushed(update) }
        case .updateShortSentMessage:
            issues.append("updateShortSentMessage pushed")
        case .updatesTooLong:
            issues.append("updatesTooLong pushed")
        }
    }

    private mutating func applyPushed(_ update: ApiUpdate) {
        if let range = update.ptsRange { advancePts(to: range.pts, count: range.count) }
        if let qts = update.qts {
            if qts != state.qts + 1 { issues.append("push qts \(qts) after \(state.qts)") }
            state.qts = qts
        }
        if let range = update.channelPtsRange {
            let current = channelPts[range.channelId] ?? 0
            if range.pts != current + range.count { issues.append("push channel \(range.channelId) pts \(range.pts) after \(current)") }
            channelPts[range.channelId] = range.pts
        }
        apply(update)
    }

    private mutating func advancePts(to pts: Int32, count: Int32) {
        if pts != state.pts + count { issues.append("push pts \(pts) (count \(count)) after \(state.pts)") }
        state.pts = pts
    }

    // MARK: Applying updates

    mutating func apply(_ update: ApiUpdate) {
        switch update {
        case let .newMessage(message, _, _), let .newChannelMessage(message, _, _):
            insert(message)
        case let .editMessage(message, _, _), let .editChannelMessage(message, _, _):
            // An edit of a message the client does not have is ignored (it is in a hole).
            if chats[message.peerId]?.messages[message.id] != nil { chats[message.peerId]!.messages[message.id] = message }
        case let .deleteMessages(ids, _, _):
            for id in ids {
                if let peer = messagePeers.removeValue(forKey: id) { chats[peer]?.messages[id] = nil }
            }
        case let .readHistoryInbox(peerId, maxId, _, _), let .readChannelInbox(peerId, maxId, _, _):
            chats[peerId, default: Self.emptyChat].readInboxMaxId = max(chats[peerId]?.readInboxMaxId ?? 0, maxId)
        case let .readHistoryOutbox(peerId, maxId, _, _):
            chats[peerId, default: Self.emptyChat].readOutboxMaxId = max(chats[peerId]?.readOutboxMaxId ?? 0, maxId)
        case let .pinnedMessages(peerId, ids, pinned, _, _):
            for id in ids { chats[peerId]?.messages[id]?.pinned = pinned }
        case let .newEncryptedMessage(message, _):
            insert(secretChatMessage(message))
        case let .deleteChannelMessages(channelId, ids, _, _):
            for id in ids { chats[channelId]?.messages[id] = nil }
        case let .readMessagesContents(ids, _, _):
            for id in ids {
                if let peer = messagePeers[id] { chats[peer]?.messages[id]?.mediaUnread = false }
            }
        case let .readChannelMessagesContents(channelId, ids, _, _):
            for id in ids { chats[channelId]?.messages[id]?.mediaUnread = false }
        case let .channelTooLong(channelId, _):
            channelsToFetch.insert(channelId)
        case .userStatus, .messageId:
            break
        case let .userName(userId, firstName, lastName, username):
            users[userId] = ApiUser(id: userId, firstName: firstName, lastName: lastName, username: username)
        case let .notifySettings(peerId, muteUntil):
            chats[peerId, default: Self.emptyChat].muteUntil = muteUntil
        case let .draftMessage(peerId, draft):
            chats[peerId, default: Self.emptyChat].draft = draft
        case let .chatTitle(chatId, title):
            chatInfos[chatId] = ApiChat(id: chatId, title: title)
        }
    }

    private static var emptyChat: SimulatedChatSnapshot {
        SimulatedChatSnapshot(messages: [:], readInboxMaxId: 0, readOutboxMaxId: 0, unreadCount: 0, muteUntil: 0)
    }

    private mutating func insert(_ message: ApiMessage) {
        chats[message.peerId, default: Self.emptyChat].messages[message.id] = message
        if message.peerId.namespace == SyncNamespaces.user || message.peerId.namespace == SyncNamespaces.group {
            messagePeers[message.id] = message.peerId
        }
    }

    private func secretChatMessage(_ message: ApiEncryptedMessage) -> ApiMessage {
        ApiMessage(id: message.id, peerId: message.chatId, fromId: secretChatPartners[message.chatId]!, date: message.date,
                   text: message.text, outgoing: false, randomId: message.randomId)
    }

    private mutating func absorb(users: [ApiUser], chats: [ApiChat]) {
        for user in users { self.users[user.id] = user }
        for chat in chats { chatInfos[chat.id] = chat }
    }

    // MARK: Comparing

    /// The client's chats with unread counts computed from its own messages and read markers.
    var chatStates: [PeerId: SimulatedChatSnapshot] {
        chats.mapValues { chat in
            var chat = chat
            chat.unreadCount = Int32(chat.messages.values.filter { !$0.outgoing && $0.id > chat.readInboxMaxId }.count)
            return chat
        }
    }

    /// Where the client's model differs from `snapshot` (empty: identical), restricted to chats `isIncluded` accepts.
    func mismatches(with snapshot: SimulatedServerSnapshot, checkCursor: Bool = true,
                    chatsIncluded isIncluded: (PeerId) -> Bool = { _ in true }) -> [String] {
        var result: [String] = []
        let mine = chatStates.filter { isIncluded($0.key) }
        let theirs = snapshot.chatStates.filter { isIncluded($0.key) }
        for peer in Set(mine.keys).union(theirs.keys).sorted() where mine[peer] != theirs[peer] {
            guard let a = mine[peer], let b = theirs[peer] else {
                result.append("chat \(peer): client has \(mine[peer] != nil), server has \(theirs[peer] != nil)")
                continue
            }
            let differing = Set(a.messages.keys).union(b.messages.keys).filter { a.messages[$0] != b.messages[$0] }.sorted()
            result.append("chat \(peer): messages differ at \(differing.prefix(5)) (\(a.messages.count) vs \(b.messages.count)), "
                + "inbox \(a.readInboxMaxId)/\(b.readInboxMaxId), outbox \(a.readOutboxMaxId)/\(b.readOutboxMaxId), "
                + "unread \(a.unreadCount)/\(b.unreadCount), mute \(a.muteUntil)/\(b.muteUntil)")
        }
        if users != snapshot.users { result.append("users differ") }
        if chatInfos != snapshot.chats { result.append("chats differ") }
        if channelPts != snapshot.channelPts { result.append("channel pts \(channelPts) vs \(snapshot.channelPts)") }
        if checkCursor && state != snapshot.state { result.append("cursor \(state) vs \(snapshot.state)") }
        return result
    }
}
