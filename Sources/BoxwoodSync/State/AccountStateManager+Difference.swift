import Boxwood

/// getDifference: the common box (private chats, groups, secret chats) caught up from the stored cursor, slice by
/// slice, each slice one batch; and, when there is no cursor yet or the server says the gap is too long, the
/// rebuild from the dialog list (`AccountStateManager+Dialogs.swift`).
extension AccountStateManager {
    /// Polls until the server's answer is final.
    ///
    /// - Throws: ``SyncError/storage(_:)`` when the database refused a read or a commit (the batches committed
    ///   before it stay); ``SyncError/stopped`` when the manager stopped.
    func pollDifference() async throws(SyncError) {
        while !stopped {
            let stored = try await storedCursors(channels: [])
            guard let cursor = stored.cursor else {
                // Not synced yet; a reset discarded because the cursor moved is built again from the new one.
                _ = try await resetFromDialogs(expected: nil, storedAnswers: stored.storedAnswers)
                continue
            }
            let limit = configuration.ptsTotalLimit
            statistics.differenceRequests += 1
            let difference = try await request("getDifference") { [transport] () async throws(SyncTransportError) in
                try await transport.getDifference(pts: cursor.pts, qts: cursor.qts, date: cursor.date, ptsTotalLimit: limit)
            }
            var batch = SyncMutableState(initialState: cursor, state: cursor, storedAnswers: stored.storedAnswers)
            var final = true
            switch difference {
            case let .empty(date, seq):
                batch.state.date = date
                batch.state.seq = seq
            case let .difference(messages, encrypted, other, chats, users, state):
                try await build(&batch, messages, encrypted, other, chats, users, SyncAccountState(state))
            case let .slice(messages, encrypted, other, chats, users, state):
                try await build(&batch, messages, encrypted, other, chats, users, SyncAccountState(state))
                final = false
            case .tooLong:
                statistics.differenceTooLong += 1
                if try await resetFromDialogs(expected: cursor, storedAnswers: stored.storedAnswers) == .committed { return }
                continue
            }
            // A batch discarded because the cursor moved is fetched again from the new one.
            if !batch.isEmpty, try await commit(batch) == .discarded { continue }
            if final { return }
            if !batch.state.isAhead(of: cursor) {
                // A slice that does not move the cursor forward would be asked for, and answered, for ever.
                statistics.implausibleAnswers += 1
                return
            }
        }
        throw .stopped
    }

    /// Adds a difference (or slice) to a batch: its messages and updates in order, then the channels it says to
    /// fetch, then its cursor.
    private func build(_ batch: inout SyncMutableState, _ messages: [ApiMessage], _ encrypted: [ApiEncryptedMessage],
                       _ other: [ApiUpdate], _ chats: [ApiChat], _ users: [ApiUser], _ state: SyncAccountState) async throws(SyncError) {
        if !users.isEmpty { batch.add(.mergeUsers(users, overwrite: false)) }
        if !chats.isEmpty { batch.add(.mergeChats(chats, overwrite: false)) }
        if !messages.isEmpty { batch.add(.addMessages(messages, .catchUp)) }
        if !encrypted.isEmpty { batch.add(.addEncryptedMessages(encrypted, .catchUp)) }
        var outcome = ReduceOutcome()
        for update in other {
            if update.ptsRange != nil || update.qts != nil {
                UpdateReducer.applyCommon(update, to: &batch, source: .catchUp)
            } else if update.channelPtsRange == nil {
                UpdateReducer.applyOther(update, to: &batch, outcome: &outcome)
            }
        }
        statistics.updatesApplied += messages.count + encrypted.count + other.count
        batch.state = state
        if !outcome.channelsToFetch.isEmpty {
            try await fetchChannels(outcome.channelsToFetch, into: &batch)
        }
    }
}
