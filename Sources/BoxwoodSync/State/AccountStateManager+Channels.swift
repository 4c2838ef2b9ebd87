import Boxwood

/// getChannelDifference: each channel caught up from its own stored pts, on its own branch of the batch, several
/// channels at once (at most ``SyncConfiguration/maxConcurrentChannelFetches``), merged back in channel order.
extension AccountStateManager {
    /// Catches up `channels` whose gap did not fill, in one batch.
    ///
    /// - Throws: ``SyncError/storage(_:)`` when the database refused the read or the commit;
    ///   ``SyncError/stopped`` when the manager stopped.
    func pollChannels(_ channels: Set<PeerId>) async throws(SyncError) {
        let stored = try await storedCursors(channels: [])
        guard let cursor = stored.cursor else { return }
        var batch = SyncMutableState(initialState: cursor, state: cursor, storedAnswers: stored.storedAnswers)
        try await fetchChannels(channels, into: &batch)
        if !batch.isEmpty, try await commit(batch) == .discarded { enqueueBack(.pollChannels(channels)) }
    }

    /// Fetches each channel's difference on its own branch of the batch and merges the branches back in channel
    /// order. Every fetch runs to its end; then the first failure, if any, is thrown and the batch is unchanged.
    func fetchChannels(_ channels: Set<PeerId>, into batch: inout SyncMutableState) async throws(SyncError) {
        let missing = channels.filter { batch.channelPts[$0] == nil }
        if !missing.isEmpty {
            let stored = try await storedCursors(channels: missing)
            for channelId in missing.sorted() { batch.loadChannel(channelId, storedPts: stored.channels[channelId] ?? nil) }
        }
        let base = batch
        let ordered = channels.sorted()
        var branches: [PeerId: SyncMutableState] = [:]
        let limit = configuration.maxConcurrentChannelFetches
        var failure: SyncError?
        await withTaskGroup(of: (PeerId, Result<SyncMutableState, SyncError>).self) { group in
            var next = 0
            func launch() {
                let channelId = ordered[next]
                next += 1
                group.addTask { (channelId, await self.channelBranchResult(channelId, base: base)) }
            }
            while next < ordered.count && next < limit { launch() }
            for await (channelId, branch) in group {
                switch branch {
                case let .success(branch): branches[channelId] = branch
                case let .failure(error): failure = failure ?? error
                }
                if next < ordered.count { launch() }
            }
        }
        if let failure { throw failure }
        for channelId in ordered { if let branch = branches[channelId] { batch.merge(branch) } }
    }

    /// `channelBranch` as a result. (A typed `do`/`catch` inside the task's closure instead produced garbage
    /// channel ids in release builds — swift 6.3 — which dropped every branch's progress.)
    private func channelBranchResult(_ channelId: PeerId, base: SyncMutableState) async -> Result<SyncMutableState, SyncError> {
        do throws(SyncError) {
            return .success(try await channelBranch(channelId, base: base))
        } catch {
            return .failure(error)
        }
    }

    /// One channel's difference, looped until `final`, on a branch of `base`.
    private func channelBranch(_ channelId: PeerId, base: SyncMutableState) async throws(SyncError) -> SyncMutableState {
        var branch = base.branch()
        var pts = branch.channelPts[channelId] ?? 0
        let limit = configuration.channelDifferenceLimit
        while true {
            statistics.channelDifferenceRequests += 1
            let requestPts = pts
            let difference = try await request("getChannelDifference", peerId: channelId) { [transport] () async throws(SyncTransportError) in
                try await transport.getChannelDifference(channelId: channelId, pts: requestPts, limit: limit)
            }
            switch difference {
            case let .empty(_, serverPts):
                if branch.channelPts[channelId] != serverPts { branch.setChannelPts(channelId, serverPts) }
                return branch
            case let .difference(final, newPts, messages, other, chats, users):
                if !users.isEmpty { branch.add(.mergeUsers(users, overwrite: false)) }
                if !chats.isEmpty { branch.add(.mergeChats(chats, overwrite: false)) }
                if !messages.isEmpty { branch.add(.addMessages(messages, .catchUp)) }
                for update in other { UpdateReducer.applyChannel(update, to: &branch, source: .catchUp) }
                statistics.updatesApplied += messages.count + other.count
                branch.setChannelPts(channelId, newPts)
                if final { return branch }
                if newPts <= requestPts {
                    // A non-final answer that does not move the channel's pts would be asked for again for ever.
                    statistics.implausibleAnswers += 1
                    return branch
                }
                pts = newPts
            case let .tooLong(dialog, messages, chats, users):
                statistics.channelTooLong += 1
                // Fetched now, like a page of dialogs: current (a chat below the chat list's hole may have missed a
                // rename while the client was away).
                if !users.isEmpty { branch.add(.mergeUsers(users, overwrite: true)) }
                if !chats.isEmpty { branch.add(.mergeChats(chats, overwrite: true)) }
                branch.add(.resetChat(dialog, messages: messages))
                branch.setChannelPts(channelId, dialog.pts ?? pts)
                return branch
            }
        }
    }
}
