import Boxwood

/// Edits, deletions and reactions (tag ``SyncOperationLogTags/messageActions``), and what the queue does when the
/// server refuses an operation for good.
///
/// Each action changes the local copy at once (the user sees it) and stores an entry in the same transaction; the
/// entry is sent with its persisted mutation id, the server's answer (the edit update, the deletion's pts step) goes
/// to the state manager like any update, and the entry is removed. A refused edit or reaction puts back what the
/// entry recorded, unless the message changed since; a refused deletion leaves the messages deleted here (a
/// deletion for this device). A message the server refuses to send is flagged failed with the reason and can be sent
/// again with ``resendMessage(_:)``.
extension OutboundQueue {
    // MARK: What the app calls

    /// Replaces the text of the account's own cloud message `id` (shown at once) and queues the edit.
    public func editMessage(_ id: MessageId, text: String) async throws {
        try await store.transaction { transaction in
            guard let message = try transaction.getMessage(id), id.namespace == SyncNamespaces.cloudMessages else {
                throw OutboundError.messageNotFound(id)
            }
            let mutation = try SyncStorage.nextMutation(in: transaction)
            try transaction.updateMessage(id, SyncStorage.restored(message, text: text))
            _ = try transaction.operationLogAddEntry(peerId: id.peerId, tag: SyncOperationLogTags.messageActions, tagMergedIndex: .automatic,
                                                     contents: EditMessageOperation(messageId: id.id, text: text, previousText: message.text,
                                                                                    mutation: mutation.sequence))
        }
    }

    /// Deletes messages of one chat here at once and, for cloud messages, queues deleting them on the server: for
    /// everyone (`forEveryone`, the default) or for this account only (its other devices too). A deletion for
    /// everyone the server refuses (someone else's message in a group or channel) is sent again for this account
    /// only: the messages stay deleted here.
    public func deleteMessages(_ ids: [MessageId], forEveryone: Bool = true) async throws {
        guard let peerId = ids.first?.peerId else { return }
        guard ids.allSatisfy({ $0.peerId == peerId }) else { throw OutboundError.mixedChats }
        try await store.transaction { transaction in
            try transaction.deleteMessages(ids)
            let cloud = ids.filter { $0.namespace == SyncNamespaces.cloudMessages }.map(\.id)
            // Unsent local copies have nothing on the server; their send entries are dropped with them.
            for id in ids where id.namespace == SyncNamespaces.localMessages {
                try Self.removeSendEntries(peerId: peerId, localId: id, in: transaction)
            }
            guard !cloud.isEmpty, peerId.namespace != SyncNamespaces.secretChat else { return }
            let mutation = try SyncStorage.nextMutation(in: transaction)
            _ = try transaction.operationLogAddEntry(peerId: peerId, tag: SyncOperationLogTags.messageActions, tagMergedIndex: .automatic,
                                                     contents: DeleteMessagesOperation(ids: cloud, mutation: mutation.sequence, revoke: forEveryone))
        }
    }

    /// Sets the account's reaction on cloud message `id` (nil: takes it back), shown at once, and queues it.
    public func setReaction(_ id: MessageId, emoji: String?) async throws {
        try await store.transaction { transaction in
            guard let message = try transaction.getMessage(id), id.namespace == SyncNamespaces.cloudMessages else {
                throw OutboundError.messageNotFound(id)
            }
            let previous = SyncMessageContent.content(of: message).reactions
            let mutation = try SyncStorage.nextMutation(in: transaction)
            try transaction.updateMessage(id, SyncStorage.restored(message, reactions: previous.choosing(emoji)))
            _ = try transaction.operationLogAddEntry(peerId: id.peerId, tag: SyncOperationLogTags.messageActions, tagMergedIndex: .automatic,
                                                     contents: SendReactionOperation(messageId: id.id, emoji: emoji, previousReactions: previous,
                                                                                     mutation: mutation.sequence))
        }
    }

    /// Sends a message that failed (``MessageFlags/failed``) again: it is unsent once more, without its failure
    /// reason, and queued with a new mutation id (a file is uploaded again, a forwarded copy forwarded again).
    public func resendMessage(_ id: MessageId) async throws {
        try await store.transaction { transaction in
            guard let message = try transaction.getMessage(id), message.flags.contains(.failed), let randomId = message.globallyUniqueId else {
                throw OutboundError.messageNotFound(id)
            }
            let mutation = try SyncStorage.nextMutation(in: transaction)
            var flags = message.flags
            flags.remove(.failed)
            flags.insert(.unsent)
            let failure = message.attributes.lazy.compactMap { $0 as? SyncSendFailureAttribute }.first
            try transaction.updateMessage(id, SyncStorage.restored(message, flags: flags,
                                                                   attributes: message.attributes.filter { !($0 is SyncSendFailureAttribute) }))
            // A file is uploaded again from its first part, a forwarded copy forwarded again, text sent again.
            let operation: any PostboxCoding
            if let media = failure?.resendMedia {
                operation = SendMediaOperation(randomId: media.randomId, fileId: media.fileId, path: media.path, fileName: media.fileName,
                                               mimeType: media.mimeType, size: media.size, partSize: media.partSize, caption: media.caption,
                                               mutation: mutation.sequence, nextPart: 0)
            } else if let forward = failure?.resendForward {
                operation = ForwardMessagesOperation(fromPeerId: forward.fromPeerId, ids: forward.ids, randomIds: forward.randomIds,
                                                     mutation: mutation.sequence)
            } else {
                operation = SendMessageOperation(randomId: randomId, text: message.text, mutation: mutation.sequence)
            }
            _ = try transaction.operationLogAddEntry(peerId: id.peerId, tag: SyncOperationLogTags.sendMessage, tagMergedIndex: .automatic,
                                                     contents: operation)
        }
    }

    private static func removeSendEntries(peerId: PeerId, localId: MessageId, in transaction: Transaction) throws {
        guard let randomId = try transaction.getMessage(localId)?.globallyUniqueId else { return }
        var matching: [Int32] = []
        try transaction.operationLogEnumerateEntries(peerId: peerId, tag: SyncOperationLogTags.sendMessage) { entry in
            if (entry.contents as? SendMessageOperation)?.randomId == randomId { matching.append(entry.tagLocalIndex) }
            return true
        }
        for index in matching { _ = try transaction.operationLogRemoveEntry(peerId: peerId, tag: SyncOperationLogTags.sendMessage, tagLocalIndex: index) }
    }

    // MARK: Consumers

    /// Sends an edit; its answer (the edit update) goes to the state manager. Refused: the old text is put back
    /// unless the message changed since (a newer version from the server, another edit).
    func edit(_ operation: EditMessageOperation, key: EntryKey) async throws(SyncError) -> Bool {
        let id = MessageId(peerId: key.peerId, namespace: SyncNamespaces.cloudMessages, id: operation.messageId)
        let transport = transport
        return try await sendAction("editMessage", .edit, sequence: operation.mutation, key: key, messageIds: [id], call: { mutation async throws(SyncTransportError) in
            try await transport.editMessage(peerId: key.peerId, id: operation.messageId, text: operation.text, mutation: mutation)
        }, undo: { transaction in
            if let message = try transaction.getMessage(id), message.text == operation.text {
                try transaction.updateMessage(id, SyncStorage.restored(message, text: operation.previousText))
            }
        })
    }

    /// Sends a deletion; the answer's pts step (users and groups) goes to the state manager. Refused: the messages
    /// stay deleted here.
    func delete(_ operation: DeleteMessagesOperation, key: EntryKey) async throws(SyncError) -> Bool {
        let ids = operation.ids.map { MessageId(peerId: key.peerId, namespace: SyncNamespaces.cloudMessages, id: $0) }
        let transport = transport
        return try await sendAction("deleteMessages", .delete, sequence: operation.mutation, key: key, messageIds: ids, call: { mutation async throws(SyncTransportError) in
            let answer = try await transport.deleteMessages(peerId: key.peerId, ids: operation.ids, revoke: operation.revoke, mutation: mutation)
            guard let pts = answer.pts, answer.ptsCount > 0 else { return nil }
            return .updates(updates: [.deleteMessages(ids: operation.ids, pts: pts, ptsCount: answer.ptsCount)], users: [], chats: [], date: 0, seq: 0)
        }, undo: { transaction in
            // Refused for everyone: deleted for this account instead (they stay deleted here, as the user asked).
            guard operation.revoke else { return }
            let retry = try SyncStorage.nextMutation(in: transaction)
            _ = try transaction.operationLogAddEntry(peerId: key.peerId, tag: SyncOperationLogTags.messageActions, tagMergedIndex: .automatic,
                                                     contents: DeleteMessagesOperation(ids: operation.ids, mutation: retry.sequence, revoke: false))
        })
    }

    /// Sends a reaction; its answer (the message's edit update) goes to the state manager. Refused: the previous
    /// reactions are put back unless they changed since.
    func react(_ operation: SendReactionOperation, key: EntryKey) async throws(SyncError) -> Bool {
        let id = MessageId(peerId: key.peerId, namespace: SyncNamespaces.cloudMessages, id: operation.messageId)
        let shown = operation.previousReactions.choosing(operation.emoji)
        let transport = transport
        return try await sendAction("sendReaction", .react, sequence: operation.mutation, key: key, messageIds: [id], call: { mutation async throws(SyncTransportError) in
            try await transport.sendReaction(peerId: key.peerId, id: operation.messageId, emoji: operation.emoji, mutation: mutation)
        }, undo: { transaction in
            if let message = try transaction.getMessage(id), SyncMessageContent.content(of: message).reactions == shown {
                try transaction.updateMessage(id, SyncStorage.restored(message, reactions: operation.previousReactions))
            }
        })
    }

    /// Sends one message action with its persisted mutation id (`call`, which returns the updates to hand to the
    /// state manager), then removes its entry; refused for good, removes it with `undo` and reports the refusal.
    /// False when it cannot be sent (no client id).
    private func sendAction(_ operationName: String, _ action: OutboundFailure.Action, sequence: Int64, key: EntryKey, messageIds: [MessageId],
                            call: @escaping @Sendable (ClientMutationId) async throws(SyncTransportError) -> ApiUpdates?,
                            undo: @escaping @Sendable (Transaction) throws -> Void) async throws(SyncError) -> Bool {
        guard let mutation = try await mutationId(sequence) else { return false }
        do throws(SyncError) {
            let answer = try await manager.request(operationName, peerId: key.peerId) { () async throws(SyncTransportError) in try await call(mutation) }
            try await finish(key, answer: answer)
        } catch let .rejected(_, reason) {
            try await giveUp(key, failure: OutboundFailure(peerId: key.peerId, action: action, messageIds: messageIds, reason: reason), undo: undo)
        }
        return true
    }

    /// Flags the local copies `randomIds` of what the server refused to send (or what could not be uploaded) as
    /// failed, with the reason and what a resend queues again (`resendMedia` for a file, `resendForward` by random id
    /// for forwarded copies; text otherwise), and removes the entry.
    func markFailed(randomIds: [Int64], reason: String, key: EntryKey, resendMedia: SendMediaOperation? = nil,
                    resendForward: [Int64: ForwardMessagesOperation] = [:]) async throws(SyncError) {
        var localIds: [(Int64, MessageId)] = []
        for randomId in randomIds {
            if let localId = try await localMessageId(peerId: key.peerId, randomId: randomId) { localIds.append((randomId, localId)) }
        }
        let failedIds = localIds.map(\.1)
        try await giveUp(key, failure: OutboundFailure(peerId: key.peerId, action: .send, messageIds: failedIds, reason: reason)) { [localIds] transaction in
            for (randomId, localId) in localIds {
                guard let message = try transaction.getMessage(localId) else { continue }
                var flags = message.flags
                flags.remove(.unsent)
                flags.insert(.failed)
                let failure = SyncSendFailureAttribute(reason: reason, resendMedia: resendMedia, resendForward: resendForward[randomId])
                try transaction.updateMessage(localId, SyncStorage.restored(message, flags: flags, attributes: message.attributes + [failure]))
            }
        }
    }

    private func localMessageId(peerId: PeerId, randomId: Int64) async throws(SyncError) -> MessageId? {
        do {
            return try await store.run(.readClientIdentity) { transaction in
                try transaction.getMessageId(peerId: peerId, globallyUniqueId: randomId)
            }
        } catch {
            throw .storage(error)
        }
    }

    /// Removes the entry (the answer stored), then hands the answer's updates to the state manager.
    private func finish(_ key: EntryKey, answer: ApiUpdates?) async throws(SyncError) {
        let failure = await storeAnswer { transaction in
            _ = try transaction.operationLogRemoveEntry(peerId: key.peerId, tag: key.tag, tagLocalIndex: key.tagLocalIndex)
        }
        if let answer { await manager.addUpdates(answer) }
        if let failure { throw .storage(failure) }
    }

    /// Removes a refused entry with its local consequence (`undo`) in one transaction and reports the refusal.
    func giveUp(_ key: EntryKey, failure: OutboundFailure, undo: @escaping @Sendable (Transaction) throws -> Void) async throws(SyncError) {
        let storageFailure = await storeAnswer { transaction in
            try undo(transaction)
            _ = try transaction.operationLogRemoveEntry(peerId: key.peerId, tag: key.tag, tagLocalIndex: key.tagLocalIndex)
        }
        if let storageFailure { throw .storage(storageFailure) }
        await manager.report(failure)
    }
}
