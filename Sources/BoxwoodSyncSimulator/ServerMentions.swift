import BoxwoodSync
import Boxwood

/// Mentions of the account: an incoming message of a group or channel that names the account (a `mentionName` entity)
/// or replies to one of its messages is `mentioned` and starts unread (`mediaUnread`); reading it (here, on another
/// device, or all of a chat at once) is a pts event of the chat's box with the ids read.
extension ServerState {
    /// The share of group and channel messages whose content names the account.
    static let mentionRate = 0.12

    /// Whether a new message of `peerId` with `content` mentions the account.
    func mentionsAccount(peerId: PeerId, outgoing: Bool, content: ApiMessageContent) -> Bool {
        guard !outgoing, peerId.namespace == SyncNamespaces.group || peerId.namespace == SyncNamespaces.channel else { return false }
        if content.entities.contains(where: { $0.kind == .mentionName(accountPeerId) }) { return true }
        guard let replied = content.replyTo?.messageId, let message = chats[peerId]?.messages[replied] else { return false }
        return message.outgoing
    }

    /// The chat's unread mentions, ascending.
    func unreadMentionIds(_ peerId: PeerId, upTo maxId: Int32 = .max) -> [Int32] {
        chats[peerId]?.sortedIds { $0.isUnreadMention && $0.id <= maxId } ?? []
    }

    /// Marks the mentions of `ids` of the chat seen (those that are unread mentions) and logs the read as a pts event
    /// of the chat's box (pushed when `push`); returns the event's answer (a channel's: no pts, as for reads).
    @discardableResult
    mutating func readMentions(peerId: PeerId, ids: [Int32], push: Bool) -> ApiAffectedMessages {
        let read = ids.filter { chats[peerId]?.messages[$0]?.isUnreadMention == true }.sorted()
        for id in read { chats[peerId]!.messages[id]!.mediaUnread = false }
        let date = tick()
        if peerId.namespace == SyncNamespaces.channel {
            let update = recordChannelEvent(channelId: peerId, date: date) {
                .readChannelMessagesContents(channelId: peerId, ids: read, pts: $0, ptsCount: 1)
            }
            // Like a channel read, pushed to the account's sessions (the sender's included).
            pushSingle(update, date: date)
            return ApiAffectedMessages(pts: nil, ptsCount: 0)
        }
        let update = recordPtsEvent(date: date) { .readMessagesContents(ids: read, pts: $0, ptsCount: 1) }
        if push { pushSingle(update, date: date) }
        return ApiAffectedMessages(pts: pts, ptsCount: 1)
    }

    /// `readMentions` / `readMessageContents` from the client, at most once per `mutation`; refused for a secret chat
    /// or a chat without a dialog.
    mutating func readMentions(peerId: PeerId, maxId: Int32?, ids: [Int32], mutation: ClientMutationId) throws(SyncTransportError) -> ApiAffectedMessages {
        if let stored = mutationAnswers[mutation] {
            guard case let .read(answer) = stored else { throw .rejected(reason: "MUTATION_REUSED") }
            return answer
        }
        guard peerId.namespace != SyncNamespaces.secretChat, chats[peerId] != nil else { throw .rejected(reason: "PEER_ID_INVALID") }
        let answer = readMentions(peerId: peerId, ids: maxId.map { unreadMentionIds(peerId, upTo: $0) } ?? ids, push: false)
        mutationAnswers[mutation] = .read(answer)
        return answer
    }

    /// Another device of the account saw the chat's newest `count` unread mentions; returns their ids.
    mutating func readMentionsFromOtherDevice(peerId: PeerId, count: Int) -> [Int32] {
        let ids = Array(unreadMentionIds(peerId).suffix(max(0, count)))
        guard !ids.isEmpty else { return [] }
        readMentions(peerId: peerId, ids: ids, push: true)
        return ids
    }

    /// Another device of the account saw mentions: all of a chat's, or one.
    mutating func readMentionsFromOtherDevice() -> Bool {
        let candidates = sortedChatPeers.filter { !unreadMentionIds($0).isEmpty }
        guard let peer = trafficRandom.element(of: candidates) else { return false }
        let unread = unreadMentionIds(peer)
        let ids = trafficRandom.chance(0.5) ? unread : [trafficRandom.element(of: unread)!]
        readMentions(peerId: peer, ids: ids, push: true)
        return true
    }
}
