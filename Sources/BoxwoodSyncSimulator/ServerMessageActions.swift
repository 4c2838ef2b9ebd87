import BoxwoodSync
import Boxwood

/// The account's actions on existing messages — edit, delete for everyone, react — each applied at most once per
/// client mutation id, and refused for good (``SyncTransportError/rejected(reason:)``) the way Telegram refuses them:
/// a message that is not there (`MESSAGE_ID_INVALID`), someone else's message to edit (`MESSAGE_AUTHOR_REQUIRED`),
/// a secret chat (`PEER_ID_INVALID`: these go through the secret-chat layer). A refused request is not stored: asking
/// again is refused again. Like sends, the resulting events are logged (pts or channel pts) and returned in the
/// answer, not pushed to the client that asked.
extension ServerState {
    /// Message `id` of `peerId` that an action may change; refused as Telegram refuses it otherwise.
    private func actionTarget(peerId: PeerId, id: Int32, mustBeOwn: Bool) throws(SyncTransportError) -> ApiMessage {
        guard peerId.namespace != SyncNamespaces.secretChat, let chat = chats[peerId] else { throw .rejected(reason: "PEER_ID_INVALID") }
        guard let message = chat.messages[id] else { throw .rejected(reason: "MESSAGE_ID_INVALID") }
        if mustBeOwn && !message.outgoing { throw .rejected(reason: "MESSAGE_AUTHOR_REQUIRED") }
        return message
    }

    /// Logs `message`'s new version as an edit event and returns it as the answer's updates.
    private mutating func recordEdit(_ message: ApiMessage) -> ApiUpdates {
        let date = tick()
        chats[message.peerId, default: ChatRecord()].messages[message.id] = message
        let update: ApiUpdate
        if message.peerId.namespace == SyncNamespaces.channel {
            update = recordChannelEvent(channelId: message.peerId, date: date) { .editChannelMessage(message, pts: $0, ptsCount: 1) }
        } else {
            update = recordPtsEvent(date: date) { .editMessage(message, pts: $0, ptsCount: 1) }
        }
        return .updates(updates: [update], users: [], chats: [], date: date, seq: 0)
    }

    mutating func editMessage(peerId: PeerId, id: Int32, text: String, mutation: ClientMutationId) throws(SyncTransportError) -> ApiUpdates {
        if case let .edited(answer)? = mutationAnswers[mutation] { return answer }
        var message = try actionTarget(peerId: peerId, id: id, mustBeOwn: true)
        message.text = text
        message.editVersion += 1
        message.content.revision += 1
        message.content.entities = []
        let answer = recordEdit(message)
        mutationAnswers[mutation] = .edited(answer)
        return answer
    }

    mutating func sendReaction(peerId: PeerId, id: Int32, emoji: String?, mutation: ClientMutationId) throws(SyncTransportError) -> ApiUpdates {
        if case let .edited(answer)? = mutationAnswers[mutation] { return answer }
        var message = try actionTarget(peerId: peerId, id: id, mustBeOwn: false)
        message.content.reactions = message.content.reactions.choosing(emoji)
        message.content.revision += 1
        let answer = recordEdit(message)
        mutationAnswers[mutation] = .edited(answer)
        return answer
    }

    /// Deletes the messages of `peerId` that are still there. Users and groups: one pts `deleteMessages` event,
    /// answered with its pts. Channels: one channel pts event, pushed, answered with `pts: nil`. Nothing there: no
    /// event, `pts: nil, ptsCount: 0`.
    mutating func deleteMessages(peerId: PeerId, ids: [Int32], revoke: Bool, mutation: ClientMutationId) throws(SyncTransportError) -> ApiAffectedMessages {
        if case let .deleted(answer)? = mutationAnswers[mutation] { return answer }
        guard peerId.namespace != SyncNamespaces.secretChat, let chat = chats[peerId] else { throw .rejected(reason: "PEER_ID_INVALID") }
        let present = Set(ids).filter { chat.messages[$0] != nil }.sorted()
        // For everyone, someone else's message of a group or channel takes an admin, which the account is not. (For
        // the account only, any message; in this one-account simulation both remove it from the account's history.)
        if revoke, peerId.namespace != SyncNamespaces.user, present.contains(where: { chat.messages[$0]?.outgoing == false }) {
            throw .rejected(reason: "MESSAGE_DELETE_FORBIDDEN")
        }
        deletions.append((peerId, present, revoke))
        var answer = ApiAffectedMessages(pts: nil, ptsCount: 0)
        if !present.isEmpty {
            let date = tick()
            for id in present {
                recentlyDeleted[peerId] = chats[peerId]?.messages.removeValue(forKey: id)
                if Self.isCommonBox(peerId) { messagePeers[id] = nil }
            }
            if peerId.namespace == SyncNamespaces.channel {
                let update = recordChannelEvent(channelId: peerId, date: date) {
                    .deleteChannelMessages(channelId: peerId, ids: present, pts: $0, ptsCount: 1)
                }
                pushSingle(update, date: date)
            } else {
                _ = recordPtsEvent(date: date) { .deleteMessages(ids: present, pts: $0, ptsCount: 1) }
                answer = ApiAffectedMessages(pts: pts, ptsCount: 1)
            }
        }
        mutationAnswers[mutation] = .deleted(answer)
        return answer
    }
}
