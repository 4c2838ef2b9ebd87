import BoxwoodSync
import Boxwood

/// Creating messages in each box, and the users and chats an update refers to.
extension ServerState {
    /// A new message of a user or group chat with the next account-wide id; stored (creating the user's dialog if
    /// needed), not logged. `content` nil: random content (`newContent`).
    mutating func createCommonBoxMessage(peerId: PeerId, fromId: PeerId, outgoing: Bool, text: String, date: Int32,
                                         randomId: Int64 = 0, content: ApiMessageContent? = nil) -> ApiMessage {
        let content = content ?? newContent(peerId: peerId, text: text, date: date)
        let mentioned = mentionsAccount(peerId: peerId, outgoing: outgoing, content: content)
        let message = ApiMessage(id: nextMessageId, peerId: peerId, fromId: fromId, date: date, text: text,
                                 outgoing: outgoing, randomId: randomId, content: content, mentioned: mentioned, mediaUnread: mentioned)
        nextMessageId += 1
        chats[peerId, default: ChatRecord()].add(message)
        messagePeers[message.id] = peerId
        return message
    }

    /// A new message of a channel with the channel's next id; stored, not logged. `content` nil: random content.
    mutating func createChannelMessage(channelId: PeerId, fromId: PeerId, outgoing: Bool, text: String, date: Int32,
                                       randomId: Int64 = 0, content: ApiMessageContent? = nil) -> ApiMessage {
        let content = content ?? newContent(peerId: channelId, text: text, date: date)
        let id = channelNextMessageId[channelId] ?? 1
        channelNextMessageId[channelId] = id + 1
        let mentioned = mentionsAccount(peerId: channelId, outgoing: outgoing, content: content)
        let message = ApiMessage(id: id, peerId: channelId, fromId: fromId, date: date, text: text, outgoing: outgoing,
                                 randomId: randomId, content: content, mentioned: mentioned, mediaUnread: mentioned)
        chats[channelId, default: ChatRecord()].add(message)
        return message
    }

    /// A new message of a secret chat with the chat's next id; stored, not logged.
    mutating func createSecretChatMessage(chatId: PeerId, outgoing: Bool, text: String, date: Int32,
                                          randomId: Int64) -> ApiMessage {
        let id = secretNextMessageId[chatId] ?? 1
        secretNextMessageId[chatId] = id + 1
        let fromId = outgoing ? accountPeerId : secretChatPartners[chatId]!
        let message = ApiMessage(id: id, peerId: chatId, fromId: fromId, date: date, text: text, outgoing: outgoing,
                                 randomId: randomId)
        chats[chatId, default: ChatRecord()].add(message)
        return message
    }

    /// The peers `update` mentions (for the `users`/`chats` lists of answers and pushes).
    func referencedPeers(_ update: ApiUpdate) -> [PeerId] {
        switch update {
        case let .newMessage(message, _, _), let .editMessage(message, _, _),
             let .newChannelMessage(message, _, _), let .editChannelMessage(message, _, _):
            return [message.peerId, message.fromId]
        case .deleteMessages, .messageId, .readMessagesContents:
            return []
        case let .readHistoryInbox(peerId, _, _, _), let .readHistoryOutbox(peerId, _, _, _),
             let .pinnedMessages(peerId, _, _, _, _), let .notifySettings(peerId, _), let .draftMessage(peerId, _):
            return [peerId]
        case let .newEncryptedMessage(message, _):
            return [message.chatId]
        case let .deleteChannelMessages(channelId, _, _, _), let .readChannelInbox(channelId, _, _, _),
             let .channelTooLong(channelId, _), let .readChannelMessagesContents(channelId, _, _, _):
            return [channelId]
        case let .userStatus(userId, _), let .userName(userId, _, _, _):
            return [userId]
        case let .chatTitle(chatId, _):
            return [chatId]
        }
    }

    /// The users and chats (ascending) describing `peers`: users as themselves, groups and channels as chats,
    /// secret chats as their partner user.
    func usersAndChats(for peers: some Sequence<PeerId>) -> (users: [ApiUser], chats: [ApiChat]) {
        var userIds = Set<PeerId>()
        var chatIds = Set<PeerId>()
        for peer in peers {
            switch peer.namespace {
            case SyncNamespaces.user: userIds.insert(peer)
            case SyncNamespaces.group, SyncNamespaces.channel: chatIds.insert(peer)
            case SyncNamespaces.secretChat:
                if let partner = secretChatPartners[peer] { userIds.insert(partner) }
            default: break
            }
        }
        return (userIds.sorted().compactMap { users[$0] }, chatIds.sorted().compactMap { chatInfos[$0] })
    }

    /// The users and chats referenced by `updates`.
    func usersAndChats(referencedBy updates: [ApiUpdate]) -> (users: [ApiUser], chats: [ApiChat]) {
        usersAndChats(for: updates.flatMap { referencedPeers($0) })
    }

    /// The dialog entry of a chat.
    func dialog(for peerId: PeerId) -> ApiDialog {
        let record = chats[peerId] ?? ChatRecord()
        return ApiDialog(peerId: peerId, topMessage: record.topMessageId, readInboxMaxId: record.readInboxMaxId,
                         readOutboxMaxId: record.readOutboxMaxId, unreadCount: record.unreadCount,
                         pts: channelPts[peerId], muteUntil: record.muteUntil, draft: record.draft,
                         unreadMentionsCount: Int32(unreadMentionIds(peerId).count))
    }
}
