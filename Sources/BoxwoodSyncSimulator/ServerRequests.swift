import BoxwoodSync
import Boxwood

/// The read requests (dialogs, history) and the exactly-once mutations (send, read).
extension ServerState {
    /// One page of the dialog list: without `offset`, the pinned dialogs (in pin order) and then the newest
    /// unpinned ones; with it, the unpinned dialogs strictly below it. Unpinned dialogs are ordered by their top
    /// message's date, then its id, then the peer id, newest first; a page holds at most `limit` of them (at least
    /// one), with the users and chats its dialogs and top messages mention and the current cursor.
    func dialogs(offset: ApiDialogsOffset?, limit: Int32) -> ApiDialogs {
        let pinned = pinnedPeers.filter { chats[$0] != nil }
        let pinnedSet = Set(pinned)
        let ordered = sortedChatPeers.filter { !pinnedSet.contains($0) }.map(dialogPosition).sorted(by: >)
        let below = offset.map { offset in ordered.filter { $0 < offset } } ?? ordered
        let page = Array(below.prefix(max(1, Int(limit))))
        let peers = (offset == nil ? pinned : []) + page.map(\.peerId)
        var answer = peerDialogs(peers)
        answer.nextOffset = below.count > page.count ? page.last : nil
        return answer
    }

    /// The dialogs of `peers` that have one, in the order asked, with their top messages, the users and chats they
    /// mention and the current cursor.
    func peerDialogs(_ peers: [PeerId]) -> ApiDialogs {
        let pinned = Set(pinnedPeers)
        var seen = Set<PeerId>()
        let known = peers.filter { chats[$0] != nil && seen.insert($0).inserted }
        let dialogs = known.map { peerId in
            var dialog = dialog(for: peerId)
            dialog.pinned = pinned.contains(peerId)
            return dialog
        }
        let messages = dialogs.compactMap { chats[$0.peerId]!.messages[$0.topMessage] }
        let mentioned = usersAndChats(for: known + messages.map(\.fromId))
        return ApiDialogs(dialogs: dialogs, messages: messages, chats: mentioned.chats, users: mentioned.users, state: currentState)
    }

    /// Where a chat's dialog stands in the list: its top message's date and id (0 when the chat is empty).
    private func dialogPosition(_ peerId: PeerId) -> ApiDialogsOffset {
        let top = chats[peerId]?.topMessageId ?? 0
        return ApiDialogsOffset(date: chats[peerId]?.messages[top]?.date ?? 0, id: top, peerId: peerId)
    }

    /// A window of the current messages of `peerId` (see ``SyncTransport/getHistory(peerId:offsetId:addOffset:limit:maxId:minId:)``):
    /// of those with `minId < id < maxId` (`maxId == 0`: unbounded) newest first, `limit` from `addOffset` places
    /// after the first one below `offsetId` (`offsetId == 0`: the newest).
    func history(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32,
                 filter: ApiSearchFilter? = nil, unreadMentionsOnly: Bool = false) -> [ApiMessage] {
        guard let record = chats[peerId], limit > 0 else { return [] }
        let matching = record.messages.values.filter {
            $0.id > minId && (maxId == 0 || $0.id < maxId) && (filter?.matches($0.content) ?? true) && (!unreadMentionsOnly || $0.isUnreadMention)
        }
            .sorted { $0.id > $1.id }
        let position = offsetId == 0 ? 0 : (matching.firstIndex { $0.id < offsetId } ?? matching.count)
        let start = max(0, min(matching.count, position + Int(addOffset)))
        return Array(matching[start..<min(matching.count, start + Int(limit))])
    }

    /// Sends a message at most once per `mutation` (a repeat returns the stored answer).
    ///
    /// Users and groups: an outgoing message with the next account-wide id and a pts `newMessage` event; the answer
    /// is `updateShortSentMessage`. Channels: a channel message and a channel pts event; the answer is `updates`
    /// with `messageId` and `newChannelMessage`. Secret chats: an outgoing message with the chat's next id, stored in
    /// the chat's history but in no log (qts numbers only incoming secret messages); the answer is `updates` with
    /// `messageId` only. None of these is pushed to the sending client.
    mutating func sendMessage(peerId: PeerId, text: String, randomId: Int64, mutation: ClientMutationId) -> ApiUpdates {
        if let stored = mutationAnswers[mutation] {
            guard case let .sent(answer) = stored else { preconditionFailure("mutation \(mutation) was a readHistory") }
            return answer
        }
        let date = tick()
        let answer: ApiUpdates
        let message: ApiMessage
        switch peerId.namespace {
        case SyncNamespaces.user, SyncNamespaces.group:
            precondition(users[peerId] != nil || chatInfos[peerId] != nil, "sendMessage to unknown peer \(peerId)")
            // What the client sent: text only (the content generator is for other people's messages).
            message = createCommonBoxMessage(peerId: peerId, fromId: accountPeerId, outgoing: true, text: text,
                                             date: date, randomId: randomId, content: ApiMessageContent())
            _ = recordPtsEvent(date: date) { .newMessage(message, pts: $0, ptsCount: 1) }
            answer = .updateShortSentMessage(id: message.id, pts: pts, ptsCount: 1, date: date)
        case SyncNamespaces.channel:
            precondition(channelPts[peerId] != nil, "sendMessage to unknown channel \(peerId)")
            message = createChannelMessage(channelId: peerId, fromId: accountPeerId, outgoing: true, text: text,
                                           date: date, randomId: randomId, content: ApiMessageContent())
            let update = recordChannelEvent(channelId: peerId, date: date) { .newChannelMessage(message, pts: $0, ptsCount: 1) }
            answer = .updates(updates: [.messageId(id: message.id, randomId: randomId), update], users: [], chats: [],
                              date: date, seq: 0)
        case SyncNamespaces.secretChat:
            precondition(secretChatPartners[peerId] != nil, "sendMessage to unknown secret chat \(peerId)")
            message = createSecretChatMessage(chatId: peerId, outgoing: true, text: text, date: date, randomId: randomId)
            answer = .updates(updates: [.messageId(id: message.id, randomId: randomId)], users: [], chats: [],
                              date: date, seq: 0)
        default:
            preconditionFailure("sendMessage to unknown peer \(peerId)")
        }
        mutationAnswers[mutation] = .sent(answer)
        sentMessages.append(message)
        return answer
    }

    /// Marks incoming messages read up to `maxId` (clamped to the highest id the chat ever had, so a read up to
    /// a message deleted since the client saw it keeps its position), at most once per `mutation` (a repeat
    /// returns the stored answer).
    ///
    /// Users and groups: a pts `readHistoryInbox` event (even when the marker does not move), answered with its pts.
    /// Channels: a `readChannelInbox` channel pts event, pushed to the connected client, answered with
    /// `pts: nil, ptsCount: 0`. Secret chats: the marker moves, no event, `pts: nil, ptsCount: 0`.
    mutating func readHistory(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) -> ApiAffectedMessages {
        if let stored = mutationAnswers[mutation] {
            guard case let .read(answer) = stored else { preconditionFailure("mutation \(mutation) was a sendMessage") }
            return answer
        }
        guard let record = chats[peerId] else { preconditionFailure("readHistory of unknown chat \(peerId)") }
        let newMaxId = max(record.readInboxMaxId, min(maxId, record.highestMessageId))
        chats[peerId]!.readInboxMaxId = newMaxId
        let answer: ApiAffectedMessages
        switch peerId.namespace {
        case SyncNamespaces.user, SyncNamespaces.group:
            let date = tick()
            _ = recordPtsEvent(date: date) { .readHistoryInbox(peerId: peerId, maxId: newMaxId, pts: $0, ptsCount: 1) }
            answer = ApiAffectedMessages(pts: pts, ptsCount: 1)
        case SyncNamespaces.channel:
            let date = tick()
            let update = recordChannelEvent(channelId: peerId, date: date) {
                .readChannelInbox(channelId: peerId, maxId: newMaxId, pts: $0, ptsCount: 1)
            }
            pushSingle(update, date: date)
            answer = ApiAffectedMessages(pts: nil, ptsCount: 0)
        default:
            answer = ApiAffectedMessages(pts: nil, ptsCount: 0)
        }
        mutationAnswers[mutation] = .read(answer)
        return answer
    }
}
