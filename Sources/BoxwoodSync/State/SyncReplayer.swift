import Boxwood

/// Why a batch was not replayed.
enum ReplayRejection: Error {
    /// The stored cursors differ from the ones the batch was built on (another batch or process moved them).
    case cursorMoved
}

/// What a replayed batch leaves to do after its commit.
struct ReplayResult: Sendable {
    /// The events to emit.
    var events: [SyncEvent] = []
    /// Chats that got messages while their place in the chat list was not known (unlisted, or listed below the
    /// list's hole): their dialogs (read state, settings, the hole below their messages) are to be fetched
    /// (``SyncChatListHoles``). Empty while the whole list is known.
    var discoveredChats: Set<PeerId> = []
}

/// Replays a batch inside one Postbox transaction (Telegram's `replayFinalState`): verifies that the stored
/// cursors are still the ones the batch was computed from, applies the mutations in order — data first —
/// and writes the cursors last. Returns the events to emit after the commit.
struct SyncReplayer {
    let accountPeerId: PeerId

    func replay(_ batch: SyncMutableState, in transaction: Transaction) throws -> ReplayResult {
        let stored = try transaction.getState() as? SyncAccountState
        guard stored == batch.initialState else { throw ReplayRejection.cursorMoved }
        for (peerId, initial) in batch.initialChannelPts {
            guard try SyncStorage.channelPts(peerId, in: transaction) == initial else { throw ReplayRejection.cursorMoved }
        }
        if batch.resetsChats {
            // A send or read answered after the batch's dialogs were fetched is newer than they are.
            guard try SyncStorage.storedAnswers(in: transaction) == batch.initialStoredAnswers else { throw ReplayRejection.cursorMoved }
        }
        var recorder = EventRecorder()
        // The generation the chats this batch resets are marked with (a rebuild's batches: the one it starts).
        let generation: Int32
        if let attempt = batch.dialogGeneration {
            generation = attempt
            try SyncChatListHoles.noteStarted(attempt, in: transaction)
        } else {
            generation = try SyncChatListHoles.generation(in: transaction)
        }
        // While the chat list has a hole, a chat that gets messages and whose dialog was not fetched in this
        // generation is discovered (see `SyncChatListHoles`).
        let watchesDiscoveries = try batch.addsMessages && !batch.startsDialogGeneration && SyncChatListHoles.topHole(in: transaction) != nil
        var discovered = Set<PeerId>()
        for operation in batch.operations {
            if watchesDiscoveries {
                var peers: [PeerId] = []
                if case let .addMessages(messages, _) = operation { peers = messages.map(\.peerId) }
                if case let .addEncryptedMessages(messages, _) = operation { peers = messages.map(\.chatId) }
                for peerId in Set(peers) where try !SyncChatListHoles.isKnown(peerId, generation: generation, in: transaction) {
                    discovered.insert(peerId)
                }
            }
            try apply(operation, in: transaction, events: &recorder)
            switch operation {
            case let .resetChat(dialog, _), let .refreshChat(dialog):
                try SyncChatListHoles.markFetched(dialog.peerId, generation: generation, in: transaction)
                discovered.remove(dialog.peerId)
            default:
                break
            }
            if case let .setChatListHole(offset) = operation, batch.startsDialogGeneration {
                try SyncChatListHoles.setGeneration(generation, in: transaction)
                if offset != nil { try SyncChatListHoles.markUnverifiedHistories(generation: generation, in: transaction) }
            }
        }
        if batch.writesCursor, stored != batch.state { try transaction.setState(batch.state) }
        return ReplayResult(events: recorder.events, discoveredChats: discovered)
    }

    /// The peer to store when the server sends `new` (nil: leave the stored one): a new peer always, a known one
    /// only when `overwrite` and it differs. An unchanged peer is not stored again, so the change record does not
    /// list it and the views that show it do not render again (a difference repeats the users and chats of
    /// every message it carries).
    static func merged(_ current: (any Peer)?, _ new: any Peer, overwrite: Bool) -> (any Peer)? {
        guard let current else { return new }
        return overwrite && !current.isEqual(new) ? new : nil
    }

    private func apply(_ operation: SyncMutation, in transaction: Transaction, events: inout EventRecorder) throws {
        switch operation {
        case let .mergeUsers(users, overwrite):
            let peers: [any Peer] = users.map(SyncUser.init)
            try transaction.updatePeers(peers, update: { current, new in Self.merged(current, new, overwrite: overwrite) })
        case let .mergeChats(chats, overwrite):
            let peers: [any Peer] = chats.map(SyncChat.init)
            try transaction.updatePeers(peers, update: { current, new in Self.merged(current, new, overwrite: overwrite) })
        case let .addMessages(messages, source):
            let added = try SyncStorage.addMessages(messages, location: .upperHistoryBlock, accountPeerId: accountPeerId, in: transaction)
            events.newMessages(added.filter { !$0.outgoing }.map(\.messageId), source)
        case let .addEncryptedMessages(messages, source):
            let stored = messages.map(SyncStorage.storeMessage(encrypted:))
            var added: [MessageId] = []
            for message in stored {
                guard case let .id(id) = message.id, try transaction.getMessageIndex(id) == nil else { continue }
                try SyncStorage.includeInChatList(id.peerId, in: transaction)
                try transaction.addMessages([message], location: .upperHistoryBlock)
                added.append(id)
            }
            events.newMessages(added, source)
        case let .editMessage(message):
            let id = SyncStorage.messageId(message)
            switch try SyncStorage.updateIfNewer(message, accountPeerId: accountPeerId, in: transaction) {
            case .edited: events.edited(id)
            case .reactions: events.reactions(id)
            case .none, .other: break
            }
        case let .deleteMessagesWithGlobalIds(ids, source):
            var found: [MessageId] = []
            for id in ids { if let messageId = try transaction.getMessageId(globalId: id) { found.append(messageId) } }
            try transaction.deleteMessages(found)
            events.deleted(found, source)
        case let .deleteMessages(ids, source):
            var found: [MessageId] = []
            for id in ids where try transaction.getMessageIndex(id) != nil { found.append(id) }
            try transaction.deleteMessages(found)
            events.deleted(found, source)
        case let .readInbox(messageId, source):
            let before = try transaction.getCombinedPeerReadState(messageId.peerId)
            try SyncStorage.ensureReadState(messageId.peerId, in: transaction)
            try transaction.applyIncomingReadMaxId(messageId)
            if try transaction.getCombinedPeerReadState(messageId.peerId) != before { events.readState(messageId.peerId, source) }
        case let .readOutbox(messageId):
            try SyncStorage.ensureReadState(messageId.peerId, in: transaction)
            try transaction.applyOutgoingReadMaxId(messageId)
        case let .setPinned(peerId, ids, pinned):
            for id in ids {
                let messageId = MessageId(peerId: peerId, namespace: SyncNamespaces.cloudMessages, id: id)
                try SyncStorage.setPinned(messageId, pinned, in: transaction)
            }
        case let .readMessageContentsWithGlobalIds(ids):
            var found: [MessageId] = []
            for id in ids { if let messageId = try transaction.getMessageId(globalId: id) { found.append(messageId) } }
            try markMentionsRead(found, in: transaction)
        case let .readMessageContents(ids):
            try markMentionsRead(ids, in: transaction)
        case let .updatePresence(peerId, status):
            try transaction.updatePeerPresences([peerId: SyncUserPresence(status: status)])
        case let .updateNotifySettings(peerId, muteUntil):
            try transaction.updatePeerNotificationSettings([peerId: SyncNotificationSettings(muteUntil: muteUntil)])
        case let .updateDraft(peerId, draft):
            try SyncDrafts.apply(draft, to: peerId, in: transaction)
        case let .resetChat(dialog, messages):
            try SyncStorage.resetChat(dialog, messages: messages, accountPeerId: accountPeerId, in: transaction)
            try SyncDrafts.apply(dialog.draft, to: dialog.peerId, in: transaction)
        case let .refreshChat(dialog):
            try SyncStorage.refreshChat(dialog, in: transaction)
            try SyncDrafts.apply(dialog.draft, to: dialog.peerId, in: transaction)
        case let .setPinnedChats(peerIds):
            try transaction.setPinnedPeers(groupId: .root, peerIds)
        case let .setChatListHole(offset):
            try SyncChatListHoles.set(below: offset, in: transaction)
        case let .replaceChatListHole(offset, next):
            try SyncChatListHoles.replace(at: offset, next: next, in: transaction)
        case let .updateChannelPts(peerId, pts):
            try SyncStorage.setChannelPts(peerId, pts, in: transaction)
        }
    }

    /// Takes the unread-mention tag off the stored ones of `ids` (those not stored are not counted here, or are
    /// recounted when their chat's mention space is filled: see ``SyncMentions``).
    private func markMentionsRead(_ ids: [MessageId], in transaction: Transaction) throws {
        for (peerId, messages) in Dictionary(grouping: ids, by: \.peerId) {
            try SyncMentions.clearTag(peerId, ids: messages.map(\.id), in: transaction)
        }
    }
}

/// Collects a batch's events, merged per kind and source.
private struct EventRecorder {
    private(set) var events: [SyncEvent] = []

    mutating func newMessages(_ ids: [MessageId], _ source: SyncSource) {
        if !ids.isEmpty { events.append(.newMessages(ids, source)) }
    }

    mutating func deleted(_ ids: [MessageId], _ source: SyncSource) {
        if !ids.isEmpty { events.append(.deletedMessages(ids, source)) }
    }

    mutating func readState(_ peerId: PeerId, _ source: SyncSource) {
        events.append(.readStatesChanged([peerId], source))
    }

    /// Edits and reaction changes are not tied to a source in the mutation: they are reported without one.
    mutating func edited(_ id: MessageId) {
        if case let .editedMessages(ids)? = events.last {
            events[events.count - 1] = .editedMessages(ids + [id])
        } else {
            events.append(.editedMessages([id]))
        }
    }

    mutating func reactions(_ id: MessageId) {
        if case let .reactionsChanged(ids)? = events.last {
            events[events.count - 1] = .reactionsChanged(ids + [id])
        } else {
            events.append(.reactionsChanged([id]))
        }
    }
}
