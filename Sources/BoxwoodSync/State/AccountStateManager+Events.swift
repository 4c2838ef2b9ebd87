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
        case let .committed(events):
            statistics.commits += 1
            for event in events { eventContinuation.yield(event) }
            return .committed
        case .cursorMoved:
            statistics.discardedBatches += 1
            return .discarded
        }
    }

    /// Emits a storage failure on ``events`` and logs it as an error (``SyncLog``: metadata `operation`, `error`,
    /// `account`, and `peer` plus `details` when given): one that ended an operation of the queue, or one of the
    /// work around it (a hole fill, an outbound answer). It is not rethrown: the work is tried again later.
    func deliver(_ failure: SyncStorageError, peerId: PeerId? = nil, details: String? = nil) {
        var metadata: Logger.Metadata = ["operation": "\(failure.operation.rawValue)", "error": "\(failure.cause)",
                                         "account": "\(accountPeerId)"]
        if let peerId { metadata["peer"] = "\(peerId)" }
        if let details { metadata["details"] = "\(details)" }
        SyncLog.logger.error("sync storage failed; the work is tried again later", metadata: metadata)
        eventContinuation.yield(.storageFailed(failure))
    }

    /// Reports an outbound operation the server refused for good: on ``events`` and, as a warning, in the log.
    func report(_ failure: OutboundFailure) {
        SyncLog.logger.warning("the server refused an outbound operation; it was given up", metadata: [
            "action": "\(failure.action.rawValue)", "peer": "\(failure.peerId)", "reason": "\(failure.reason)", "account": "\(accountPeerId)",
        ])
        eventContinuation.yield(.outboundFailed(failure))
    }

    func recordHoleFill(messages: Int) {
        statistics.holesFilled += 1
        statistics.messagesFetchedForHoles += messages
    }
}
