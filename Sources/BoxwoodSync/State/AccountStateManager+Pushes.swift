import Boxwood

/// What processing pushed updates came to.
private enum ProcessedUpdates {
    /// Nothing is synced yet: the first difference poll brings everything.
    case notSynced
    /// The batch was discarded because the stored cursors moved.
    case discarded
    /// The batch is stored (or had nothing to store); the outcome says what is held back and whether to poll.
    case committed(ReduceOutcome)
}

/// Pushed updates: reduced against the stored cursors into one batch, with the updates behind a gap held back
/// until the gap fills or ``SyncConfiguration/gapWait`` ends. Updates that a storage failure kept from being stored
/// are held the same way, so they are tried again after the wait — at most ``SyncConfiguration/gapPollLimit``
/// rounds, after which they are dropped (the next difference brings them: no cursor moved past them).
extension AccountStateManager {
    func addUpdateGroups(_ groups: [UpdateGroup]) {
        guard !stopped, !groups.isEmpty else { return }
        lastActivity = .now
        if collecting != nil {
            collecting?.append(contentsOf: groups)
        } else if case let .collect(existing)? = operations.last {
            operations[operations.count - 1] = .collect(existing + groups)
        } else {
            enqueueBack(.collect(groups))
        }
    }

    /// Processes `groups` with the updates held back so far.
    ///
    /// - Throws: ``SyncError/storage(_:)`` when the database refused the read or the commit; the updates are
    ///   held and tried again after the gap wait.
    func processGroups(_ groups: [UpdateGroup]) async throws(SyncError) {
        let all = heldBack + groups
        heldBack = []
        guard !all.isEmpty else { return }
        let processed: ProcessedUpdates
        do {
            processed = try await reduceAndCommit(all)
        } catch {
            heldBack = all
            if case .storage = error { waitForHeldBack() }
            throw error
        }
        switch processed {
        case .notSynced:
            enqueueFront(.pollDifference(waiters: []))
        case .discarded:
            heldBack = all
            enqueueFront(.pollDifference(waiters: []))
        case let .committed(outcome):
            heldBack = outcome.heldBack
            if outcome.reset { enqueueFront(.pollDifference(waiters: [])) }
            if heldBack.isEmpty {
                gapPollsInARow = 0
                gapTimer?.cancel()
                gapTimer = nil
            } else if gapTimer == nil {
                statistics.gapsDetected += 1
                waitForHeldBack()
            }
        }
    }

    /// Reduces the updates against the stored cursors (fetching the channels they say to) and commits the batch.
    private func reduceAndCommit(_ all: [UpdateGroup]) async throws(SyncError) -> ProcessedUpdates {
        var channelIds = Set<PeerId>()
        for case let .withChannelPts(updates, _, _) in all {
            for update in updates { if let range = update.channelPtsRange { channelIds.insert(range.channelId) } }
        }
        let stored = try await storedCursors(channels: channelIds)
        guard let cursor = stored.cursor else { return .notSynced }
        var batch = SyncMutableState(initialState: cursor, state: cursor, storedAnswers: stored.storedAnswers)
        for channelId in channelIds.sorted() { batch.loadChannel(channelId, storedPts: stored.channels[channelId] ?? nil) }
        let outcome = UpdateReducer.reduce(all, into: &batch, source: .realtime)
        statistics.updatesApplied += outcome.applied
        statistics.duplicatesSkipped += outcome.duplicates
        statistics.implausibleUpdates += outcome.implausible.count
        if !outcome.channelsToFetch.isEmpty {
            try await fetchChannels(outcome.channelsToFetch, into: &batch)
        }
        if !batch.isEmpty, try await commit(batch) == .discarded { return .discarded }
        return .committed(outcome)
    }

    /// Looks at the held updates again after ``SyncConfiguration/gapWait`` (unless a wait is running).
    private func waitForHeldBack() {
        guard gapTimer == nil else { return }
        let wait = configuration.gapWait
        gapTimer = Task { [weak self] in
            // Throws only when cancelled (the gap filled), which the guard checks.
            try? await Task.sleep(for: wait)
            guard !Task.isCancelled, let self else { return }
            await self.gapWaitEnded()
        }
    }

    /// The gap did not fill in time: fetch what is missing (the common box by getDifference, each channel by
    /// getChannelDifference), then look at the held updates again.
    ///
    /// A poll fetches everything the server had when it answered, so an update held before it is released by
    /// it — unless the update claims counters the server never reaches (a hostile or broken server: pts
    /// `Int32.max`, say). Waiting and polling again would then go on for ever, the manager never idle: after
    /// ``SyncConfiguration/gapPollLimit`` such rounds in a row the held updates are dropped instead, and the
    /// polls run once more. Nothing is lost by dropping: no cursor moved past them.
    private func gapWaitEnded() {
        gapTimer = nil
        guard !heldBack.isEmpty, !stopped else { checkIdle(); return }
        var commonGap = false
        var channels = Set<PeerId>()
        for group in heldBack {
            switch group {
            case let .withChannelPts(updates, _, _):
                for update in updates { if let range = update.channelPtsRange { channels.insert(range.channelId) } }
            case .reset:
                break
            default:
                commonGap = true
            }
        }
        gapPollsInARow += 1
        if gapPollsInARow > configuration.gapPollLimit {
            statistics.heldUpdatesDropped += heldBack.count
            heldBack = []
            gapPollsInARow = 0
        } else {
            enqueueBack(.process([]))
        }
        if !channels.isEmpty { enqueueFront(.pollChannels(channels)) }
        if commonGap { enqueueFront(.pollDifference(waiters: [])) }
        checkIdle()
    }
}
