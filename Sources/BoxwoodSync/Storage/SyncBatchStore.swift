import Boxwood

/// The cursors a batch is built on, as stored.
struct StoredCursors: Sendable {
    /// The account's common-box cursor; nil before the first sync.
    let cursor: SyncAccountState?
    /// The stored pts of the channels asked for (nil inside: the channel has none yet).
    let channels: [PeerId: Int32?]
    /// The stored ``SyncStoredAnswers`` count.
    let storedAnswers: Int64
}

/// What replaying a batch did.
enum BatchReplay: Sendable {
    /// The batch is stored; its events are to be emitted (and its discovered chats fetched).
    case committed(ReplayResult)
    /// The stored cursors were no longer the ones the batch was built on (another batch or process moved them):
    /// nothing was stored, and the batch is to be built again from the stored state.
    case cursorMoved
}

/// The state manager's reads and writes of its cursors: the cursors a batch starts from, and the replay of a
/// batch in one transaction that first checks they did not move (``SyncReplayer``). A moved cursor is an outcome
/// (``BatchReplay/cursorMoved``); anything the database refuses is a ``SyncStorageError``.
struct SyncBatchStore: Sendable {
    let store: any SyncStore
    let replayer: SyncReplayer

    /// The stored cursor, the stored pts of `channels` and the stored send-answer count, read in one transaction.
    func cursors(channels: Set<PeerId>) async throws(SyncStorageError) -> StoredCursors {
        try await store.run(.readCursors) { transaction in
            var pts: [PeerId: Int32?] = [:]
            for channelId in channels { pts[channelId] = .some(try SyncStorage.channelPts(channelId, in: transaction)) }
            return StoredCursors(cursor: try transaction.getState() as? SyncAccountState, channels: pts,
                                 storedAnswers: try SyncStorage.storedAnswers(in: transaction))
        }
    }

    /// Replays `batch` in one transaction.
    func replay(_ batch: SyncMutableState) async throws(SyncStorageError) -> BatchReplay {
        let replayer = replayer
        do {
            return .committed(try await store.engineTransaction { transaction in try replayer.replay(batch, in: transaction) })
        } catch ReplayRejection.cursorMoved {
            return .cursorMoved
        } catch {
            throw SyncStorageError(.replayBatch, error: error)
        }
    }
}
