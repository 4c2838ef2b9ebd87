import Boxwood

/// Sends what the user did offline-first (Telegram's managed operation-log consumers): sending a message stores
/// a local copy and an operation-log entry in one transaction; reading a chat stores the read position and an
/// entry; editing, deleting and reacting change the local copy and store an entry (`OutboundQueue+MessageActions`).
/// A consumer watches each tag's merged queue, sends each entry with its persisted client mutation id (retrying
/// until the server answers; the server applies each id at most once), stores the answer and removes the entry in
/// one transaction. Entries survive restarts and are sent again. An entry the server refuses for good
/// (``SyncTransportError/rejected(reason:)``) is removed with its local consequence — a message to send is
/// flagged failed with the reason, a refused edit or reaction is undone — and reported as
/// ``SyncEvent/outboundFailed(_:)``.
public actor OutboundQueue {
    /// An operation-log entry: its chat, queue and index.
    struct EntryKey: Hashable {
        let peerId: PeerId
        let tag: PeerOperationLogTag
        let tagLocalIndex: Int32
    }

    private let postbox: Postbox
    /// Where operations and answers are stored (the Postbox unless a test puts a store in front of it).
    let store: any SyncStore
    let manager: AccountStateManager
    let transport: any SyncTransport
    private var inFlight: Set<EntryKey> = []
    private var busyPeers: Set<PeerId> = []
    private var latest: [PeerOperationLogTag: [PeerOperationLogEntry]] = [:]
    private var watchTasks: [Task<Void, Never>] = []
    /// The task sending each entry in flight, cancelled by ``stop()``.
    private var sendTasks: [EntryKey: Task<Void, Never>] = [:]
    /// Operations whose answer was stored.
    public private(set) var completed = 0
    /// The uploads this queue is running, by entry (see ``uploadsInProgress``).
    var uploadProgress: [EntryKey: SyncUploadProgress] = [:]

    /// The uploads running now, with their acknowledged parts (for a progress bar).
    public var uploadsInProgress: [SyncUploadProgress] { Array(uploadProgress.values) }

    /// A queue watching `postbox`'s operation logs; its transactions run on `store` (`postbox` unless given).
    public init(postbox: Postbox, store: (any SyncStore)? = nil, manager: AccountStateManager, transport: any SyncTransport) {
        self.postbox = postbox
        self.store = store ?? postbox
        self.manager = manager
        self.transport = transport
    }

    // MARK: What the app calls

    /// Stores `text` as an unsent local message of `peerId` and queues sending it; returns the local id.
    @discardableResult
    public func sendMessage(peerId: PeerId, text: String, timestamp: Int32) async throws -> MessageId {
        let accountPeerId = manager.accountPeerId
        return try await store.transaction { transaction in
            let mutation = try SyncStorage.nextMutation(in: transaction)
            let randomId = Int64.random(in: 1...Int64.max)
            let local = StoreMessage(id: .partial(peerId, SyncNamespaces.localMessages), globallyUniqueId: randomId,
                                     timestamp: timestamp, flags: [.unsent], authorId: accountPeerId, text: text,
                                     attributes: [SyncMessageAttribute(editVersion: 0)])
            try SyncStorage.includeInChatList(peerId, in: transaction)
            let result = try transaction.addMessages([local], location: .random)
            _ = try transaction.operationLogAddEntry(peerId: peerId, tag: SyncOperationLogTags.sendMessage, tagMergedIndex: .automatic,
                                                     contents: SendMessageOperation(randomId: randomId, text: text, mutation: mutation.sequence))
            guard let id = result.idsByGloballyUniqueId[randomId] else { throw OutboundError.localMessageNotStored }
            return id
        }
    }

    /// Marks the chat read up to `maxId` locally and queues telling the server (replacing an unsent older one).
    public func markRead(peerId: PeerId, maxId: Int32) async throws {
        try await store.transaction { transaction in
            try SyncStorage.markInboxRead(peerId, maxId: maxId, in: transaction)
            try transaction.operationLogRemoveAllEntries(peerId: peerId, tag: SyncOperationLogTags.synchronizeReadState)
            let mutation = try SyncStorage.nextMutation(in: transaction)
            _ = try transaction.operationLogAddEntry(peerId: peerId, tag: SyncOperationLogTags.synchronizeReadState, tagMergedIndex: .automatic,
                                                     contents: SynchronizeReadStateOperation(maxId: maxId, mutation: mutation.sequence))
        }
    }

    // MARK: Consumers

    /// Starts the consumers of both queues (entries left by an earlier run are sent again).
    public func start() {
        guard watchTasks.isEmpty else { return }
        for tag in [SyncOperationLogTags.sendMessage, SyncOperationLogTags.synchronizeReadState, SyncOperationLogTags.messageActions,
                    SyncOperationLogTags.drafts, SyncOperationLogTags.readMentions] {
            let stream = postbox.view(.peerMergedOperationLog(tag: tag, limit: 100))
            watchTasks.append(Task { [weak self] in
                do {
                    for try await view in stream {
                        guard let self else { return }
                        await self.update(tag: tag, entries: view.entries)
                    }
                } catch {
                    await self?.watchFailed(error)
                }
            })
        }
    }

    /// The error that stopped watching a queue (nil while it works): the consumers stop with it; entries stay
    /// queued in the database for the next start.
    public private(set) var failure: (any Error)?

    private func watchFailed(_ error: any Error) {
        SyncLog.logger.error("the outbound queue stopped: its operation-log view failed", metadata: ["error": "\(error)"])
        failure = error
        stop()
    }

    /// Stops the consumers promptly: the watches and the sends in flight are cancelled and nothing new starts.
    /// The entries stay queued in the database; the next ``start()`` sends them.
    public func stop() {
        for task in watchTasks { task.cancel() }
        watchTasks = []
        for task in sendTasks.values { task.cancel() }
        latest = [:]
    }

    /// Whether the consumers run (between ``start()`` and ``stop()``).
    private var isRunning: Bool { !watchTasks.isEmpty }

    /// Whether an entry is being sent or waits in a queue the consumer has seen.
    public var isBusy: Bool { !inFlight.isEmpty || latest.values.contains { !$0.isEmpty } }

    private func update(tag: PeerOperationLogTag, entries: [PeerOperationLogEntry]) {
        latest[tag] = entries
        schedule()
    }

    /// Starts the first waiting entry of every peer that has nothing in flight (one request per peer at a time,
    /// in queue order).
    private func schedule() {
        guard isRunning else { return }
        for tag in latest.keys.sorted() {
            for entry in latest[tag] ?? [] {
                let key = EntryKey(peerId: entry.peerId, tag: entry.tag, tagLocalIndex: entry.tagLocalIndex)
                guard !inFlight.contains(key), !busyPeers.contains(entry.peerId) else { continue }
                inFlight.insert(key)
                busyPeers.insert(entry.peerId)
                let contents = entry.contents
                sendTasks[key] = Task { await self.process(key: key, contents: contents) }
            }
        }
    }

    /// Sends one entry and stores the answer. A storage failure is emitted on the manager's events and the entry
    /// is left in its queue, tried again after ``SyncConfiguration/retryInitialDelay`` (not at once: a database
    /// that keeps failing is not hammered).
    private func process(key: EntryKey, contents: any PostboxCoding) async {
        var stored = false
        do throws(SyncError) {
            if let operation = contents as? SendMessageOperation {
                stored = try await send(operation, key: key)
            } else if let operation = contents as? SynchronizeReadStateOperation {
                stored = try await read(operation, key: key)
            } else if let operation = contents as? EditMessageOperation {
                stored = try await edit(operation, key: key)
            } else if let operation = contents as? DeleteMessagesOperation {
                stored = try await delete(operation, key: key)
            } else if let operation = contents as? SendReactionOperation {
                stored = try await react(operation, key: key)
            } else if let operation = contents as? SendMediaOperation {
                stored = try await uploadAndSend(operation, key: key)
            } else if let operation = contents as? ForwardMessagesOperation {
                stored = try await forward(operation, key: key)
            } else if let operation = contents as? SaveDraftOperation {
                stored = try await saveDraft(operation, key: key)
            } else if let operation = contents as? ReadMentionsOperation {
                stored = try await readMentions(operation, key: key)
            }
            // A message sent to a chat below the chat list's hole moves it up: its dialog is fetched (a secret chat's
            // send brings no update that would discover it).
            if stored, contents is SendMessageOperation || contents is SendMediaOperation || contents is ForwardMessagesOperation {
                try await manager.discoverIfUnknown(key.peerId)
            }
            // Unknown contents (a newer app version): the entry is left.
        } catch let .rejected(operation, reason) {
            // A refusal the operation did not handle itself (a read position): the entry is given up.
            let failure = OutboundFailure(peerId: key.peerId, action: .send, messageIds: [], reason: "\(operation): \(reason)")
            do throws(SyncError) {
                try await giveUp(key, failure: failure) { _ in }
                stored = true
            } catch {
                try? await Task.sleep(for: manager.configuration.retryInitialDelay)
            }
        } catch let .storage(failure) {
            let kind = contents is SendMessageOperation || contents is SendMediaOperation || contents is ForwardMessagesOperation ? "send"
                : contents is SynchronizeReadStateOperation || contents is ReadMentionsOperation ? "read" : "message action"
            await manager.deliver(failure, peerId: key.peerId, details: "outbound \(kind) entry \(key.tagLocalIndex)")
            // Throws only when cancelled; the entry is tried again either way.
            try? await Task.sleep(for: manager.configuration.retryInitialDelay)
        } catch {
            // `.stopped`: the manager stopped, so every send would end the same way at once: the queue stops (the
            // entry is left for the next run) instead of starting the entry again and again.
            stop()
        }
        if stored { completed += 1 }
        sendTasks[key] = nil
        busyPeers.remove(key.peerId)
        if let entries = latest[key.tag] {
            latest[key.tag] = entries.filter { !($0.peerId == key.peerId && $0.tagLocalIndex == key.tagLocalIndex) || !stored }
        }
        inFlight.remove(key)
        schedule()
    }

    /// The persisted mutation id `sequence` of this installation; nil when no client id is stored (the entry
    /// cannot have been written by this installation's ``sendMessage(peerId:text:timestamp:)`` or
    /// ``markRead(peerId:maxId:)``, which create it in the entry's transaction, so it is left unsent).
    func mutationId(_ sequence: Int64) async throws(SyncError) -> ClientMutationId? {
        let clientId: Int64?
        do {
            clientId = try await store.run(.readClientIdentity) { transaction in try SyncStorage.clientId(in: transaction) }
        } catch {
            throw .storage(error)
        }
        return clientId.map { ClientMutationId(clientId: $0, sequence: sequence) }
    }

    /// Stores the server's answer to an entry and removes the entry, in one transaction.
    func storeAnswer(_ body: @escaping @Sendable (Transaction) throws -> Void) async -> SyncStorageError? {
        do {
            try await store.run(.storeOutboundAnswer, body)
            return nil
        } catch {
            return error
        }
    }

    /// Sends a message and stores the server's copy; false when it cannot be sent (no client id).
    private func send(_ operation: SendMessageOperation, key: EntryKey) async throws(SyncError) -> Bool {
        guard let mutation = try await mutationId(operation.mutation) else { return false }
        let transport = transport
        let answer: ApiUpdates
        do throws(SyncError) {
            answer = try await manager.request("sendMessage", peerId: key.peerId) { () async throws(SyncTransportError) in
                try await transport.sendMessage(peerId: key.peerId, text: operation.text, randomId: operation.randomId, mutation: mutation)
            }
        } catch let .rejected(_, reason) {
            try await markFailed(randomIds: [operation.randomId], reason: reason, key: key)
            return true
        }
        let accountPeerId = manager.accountPeerId
        // The server's copy of the message: inlined fields (users, groups) or the channel message in the answer.
        var cloud: ApiMessage?
        var ptsUpdate: ApiUpdates?
        switch answer {
        case let .updateShortSentMessage(id, pts, ptsCount, date):
            let message = ApiMessage(id: id, peerId: key.peerId, fromId: accountPeerId, date: date, text: operation.text,
                                     outgoing: true, randomId: operation.randomId)
            cloud = message
            // The pts step carries its content: if a reset from an older dialog list removed the copy stored
            // below, applying the step stores it again.
            ptsUpdate = .updates(updates: [.newMessage(message, pts: pts, ptsCount: ptsCount)], users: [], chats: [], date: date, seq: 0)
        case let .updates(updates, _, _, date, _):
            for case let .newChannelMessage(message, _, _) in updates where message.randomId == operation.randomId { cloud = message }
            if cloud == nil {
                // Only the id (a secret chat: no pts): the server copy is the local one under that id.
                for case let .messageId(id, randomId) in updates where randomId == operation.randomId {
                    cloud = ApiMessage(id: id, peerId: key.peerId, fromId: accountPeerId, date: date, text: operation.text,
                                       outgoing: true, randomId: operation.randomId)
                }
            }
            ptsUpdate = answer
        default:
            ptsUpdate = answer
        }
        let failure = await storeAnswer { [cloud] transaction in
            if let cloud {
                _ = try SyncStorage.addMessages([cloud], location: .random, accountPeerId: accountPeerId, in: transaction)
                // A reset built from a dialog list fetched before this answer must not replay over it.
                try SyncStorage.recordStoredAnswer(in: transaction)
            }
            try transaction.operationLogRemoveEntry(peerId: key.peerId, tag: key.tag, tagLocalIndex: key.tagLocalIndex)
        }
        // The answer's updates go to the manager even when storing it failed: they carry the message.
        if let ptsUpdate { await manager.addUpdates(ptsUpdate) }
        if let failure { throw .storage(failure) }
        return true
    }

    /// Sends a read position and stores it again; false when it cannot be sent (no client id).
    private func read(_ operation: SynchronizeReadStateOperation, key: EntryKey) async throws(SyncError) -> Bool {
        guard let mutation = try await mutationId(operation.mutation) else { return false }
        let transport = transport
        let answer = try await manager.request("readHistory", peerId: key.peerId) { () async throws(SyncTransportError) in
            try await transport.readHistory(peerId: key.peerId, maxId: operation.maxId, mutation: mutation)
        }
        let failure = await storeAnswer { transaction in
            // A reset from a dialog list fetched before the server applied this read may have put an older
            // position back (a secret chat's read has no pts step to correct it): the position applies again
            // (read positions only move forward), and a reset still in flight is refetched.
            try SyncStorage.markInboxRead(key.peerId, maxId: operation.maxId, in: transaction)
            try SyncStorage.recordStoredAnswer(in: transaction)
            try transaction.operationLogRemoveEntry(peerId: key.peerId, tag: key.tag, tagLocalIndex: key.tagLocalIndex)
        }
        if let pts = answer.pts {
            // With its content (the read position), so a reset that restored an older position is corrected.
            await manager.addUpdates(.updates(updates: [.readHistoryInbox(peerId: key.peerId, maxId: operation.maxId, pts: pts, ptsCount: answer.ptsCount)],
                                              users: [], chats: [], date: 0, seq: 0))
        }
        if let failure { throw .storage(failure) }
        return true
    }
}

/// Outbound failures the app sees.
public enum OutboundError: Error, Sendable {
    /// The local copy of a message could not be stored.
    case localMessageNotStored
    /// The message to edit, react to or send again is not stored (or is not one the action applies to: an edit or
    /// a reaction needs a cloud message, a resend a failed local one).
    case messageNotFound(MessageId)
    /// One deletion (or forward) holds messages of several chats.
    case mixedChats
    /// The file to send cannot be read (gone, not readable, or changed since it was queued), with the system's
    /// reason. Thrown by ``OutboundQueue/sendMedia(peerId:file:caption:timestamp:)``; found during the upload, it is
    /// the reason the message is flagged failed.
    case fileUnreadable(path: String, reason: String)
    /// The file is empty, or larger than the server takes (``ApiUploadLimits``).
    case fileSizeUnsupported(path: String, size: Int64)
}
