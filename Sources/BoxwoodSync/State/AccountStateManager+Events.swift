import Boxwood
import Logging

/// Whether a batch was stored.
enum CommitOutcome {
    case committed
    /// The stored cursors moved since the batch was built: it was thrown away, to be built again.
    case discarded
}

/// Event delivery: a batch's events are emitted only after its commit, in commit order; a storage failure that
/// ends an operation is emitted as ``SyncEvent/storageFailed(_:)``.
extension AccountStateManager {
    /// The stored cursors `channels` and the send-answer count a batch is built on.
    func storedCursors(channels: Set<PeerId>) async throws(SyncError) -> StoredCursors {
        do {
            return try await batches.cursors(channels: channels)
        } catch {
            throw .storage(error)
        }
    }

    /// Replays a batch in one transaction and emits its events.
    ///
    /// - Throws: ``SyncError/storage(_:)`` when the database refused it (nothing of it was stored).
    func commit(_ batch: SyncMutableState) async throws(SyncError) -> CommitOutcome {
        let replay: BatchReplay
        do {
            replay = try await batches.replay(batch)
        } catch {
            throw .storage(error)
        }
        switch replay {
        case let .committed(result):
            statistics.commits += 1
            scheduleMentionFills(after: batch)
            scheduleDialogRefresh(result.discoveredChats)
            for event in result.events { eventContinuation.yield(event) }
            await notify(result.events)
            return .committed
        case .cursorMoved:
            statistics.discardedBatches += 1
            return .discarded
        }
    }

    /// Reports messages a fetch stored before their updates (``SyncStorage/unstoredNews(_:peerId:in:)``) as new,
    /// caught up.
    func reportFetchedNews(_ ids: [MessageId]) async {
        guard !ids.isEmpty else { return }
        let events: [SyncEvent] = [.newMessages(ids, .catchUp)]
        for event in events { eventContinuation.yield(event) }
        await notify(events)
    }

    /// Emits a storage failure on ``events`` and logs it as an error (``SyncLog``: metadata `operation`, `error`,
    /// `account`, and `peer` plus `details` when given): one that ended an operation of the queue, or one of the
    /// work around it (a hole fill, an outbound answer). It is not rethrown: the work is tried again later.
    ///
    /// A refusal by the master fence (``SyncStorageError/Cause/mastershipLost(_:)``) is not a failure to report
    /// here: the client stops syncing and reports ``SyncEvent/mastershipLost(_:)`` once.
    func deliver(_ failure: SyncStorageError, peerId: PeerId? = nil, details: String? = nil) {
        if case .mastershipLost = failure.cause { return }
        var metadata: Logger.Metadata = ["operation": "\(failure.operation.rawValue)", "error": "\(failure.cause)",
                                         "account": "\(accountPeerId)"]
        if let peerId { metadata["peer"] = "\(peerId)" }
        if let details { metadata["details"] = "\(details)" }
        SyncLog.logger.error("sync storage failed; the work is tried again later", metadata: metadata)
        eventContinuation.yield(.storageFailed(failure))
        notificationCenter.post([.storageFailed(failure)])
    }

    /// Posts a committed batch's events as notifications, with the new and edited messages read in one transaction
    /// (only when someone subscribed). A read the database refuses is posted as a storage failure, and the messages
    /// with the blank summary of a message that cannot be read.
    private func notify(_ events: [SyncEvent]) async {
        guard notificationCenter.hasSubscribers, !events.isEmpty else { return }
        var ids: [MessageId] = []
        var reacted: [MessageId] = []
        for event in events {
            switch event {
            case let .newMessages(new, _): ids += new
            case let .editedMessages(edited): ids += edited
            case let .reactionsChanged(changed): reacted += changed
            default: break
            }
        }
        var summaries: [MessageId: SyncMessageSummary] = [:]
        var reactions: [MessageId: [ApiReaction]] = [:]
        var kinds: [SyncNotification.Kind] = []
        if !ids.isEmpty || !reacted.isEmpty {
            let (summarized, withReactions) = (ids, reacted)
            do {
                (summaries, reactions) = try await batches.store.run(.readNotificationContent) { transaction in
                    var read: [MessageId: SyncMessageSummary] = [:]
                    for id in summarized { read[id] = try SyncMessageSummary.read(id, in: transaction) }
                    var current: [MessageId: [ApiReaction]] = [:]
                    for id in withReactions {
                        if let message = try transaction.getMessage(id) { current[id] = SyncMessageContent.content(of: message).reactions }
                    }
                    return (read, current)
                }
            } catch {
                kinds.append(.storageFailed(error))
            }
        }
        func summary(_ id: MessageId) -> SyncMessageSummary {
            summaries[id] ?? SyncMessageSummary(id: id, chatTitle: nil, authorName: nil, preview: "", outgoing: false)
        }
        for event in events {
            switch event {
            case let .newMessages(new, source): kinds += new.map { .newMessage(summary($0), source) }
            case let .editedMessages(edited): kinds += edited.map { .edited(summary($0)) }
            case let .deletedMessages(deleted, source): kinds.append(.deleted(deleted, source))
            case let .readStatesChanged(peers, source): kinds += peers.sorted().map { .read($0, source) }
            case let .reactionsChanged(changed): kinds += changed.map { .reactions($0, reactions[$0] ?? []) }
            case let .storageFailed(failure): kinds.append(.storageFailed(failure))
            case let .outboundFailed(failure): kinds.append(.outboundFailed(failure))
            case let .mastershipLost(holder): kinds.append(.mastershipLost(holder))
            }
        }
        notificationCenter.post(kinds)
    }

    /// Reports an outbound operation the server refused for good: on ``events`` and, as a warning, in the log.
    func report(_ failure: OutboundFailure) {
        SyncLog.logger.warning("the server refused an outbound operation; it was given up", metadata: [
            "action": "\(failure.action.rawValue)", "peer": "\(failure.peerId)", "reason": "\(failure.reason)", "account": "\(accountPeerId)",
        ])
        eventContinuation.yield(.outboundFailed(failure))
        notificationCenter.post([.outboundFailed(failure)])
    }

    func recordHoleFill(messages: Int) {
        statistics.holesFilled += 1
        statistics.messagesFetchedForHoles += messages
    }
}
