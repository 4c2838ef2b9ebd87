import Boxwood

/// The chat list's hole (``SyncChatListHoles``): a rebuild fetches ``SyncConfiguration/dialogPagesAtReset`` pages of
/// the dialog list and leaves the rest as a hole; a chat-list view that shows it has the next page fetched
/// (``fillChatListHole(_:)``, called by ``ChatListHoleFiller``).
///
/// A chat below the hole that gets a message moves above it, to the top of the list — but the pages below the hole
/// will not hold it (on the server it is at the top too), and what is stored about it (its read state, settings, the
/// hole below its messages) is unknown or stale. The batch that stores such a message reports the chat discovered
/// (``ReplayResult/discoveredChats``), and its dialog is fetched (`getPeerDialogs`) and taken without touching the
/// history (``SyncStorage/refreshChat(_:in:)``): its messages keep arriving by update, in order, and the holes its
/// history already has (all of it, for a chat never stored or left from an earlier sync) are filled as views ask.
///
/// Pages and dialogs fetched here are applied like a rebuild's pages: each in one batch over the stored cursor, which
/// it does not move; what changed on the server after the cursor comes again from the next difference, and replaying
/// it over the fetched state is idempotent.
extension AccountStateManager {
    /// Fetches and stores the page of the dialog list below `hole` as one operation of the queue: its chats are reset
    /// and the hole moves down to the page's next offset (or goes, on the last page). Nothing happens when the hole is
    /// gone (an earlier fill or a rebuild replaced it); a page discarded because the cursor moved is asked for again
    /// by the next look at the view.
    public func fillChatListHole(_ hole: ChatListHole) async throws(SyncError) {
        try await perform { () async throws(SyncError) in
            try await self.fillChatListHoleNow(hole)
        }
    }

    private func fillChatListHoleNow(_ hole: ChatListHole) async throws(SyncError) {
        let holes: [ChatListHole]
        do {
            holes = try await batches.store.run(.readCursors) { transaction in try transaction.getChatListHoles(groupId: .root) }
        } catch {
            throw .storage(error)
        }
        guard holes.contains(hole) else { return }
        let stored = try await storedCursors(channels: [])
        guard let cursor = stored.cursor else { return }
        let offset = SyncChatListHoles.offset(hole)
        let limit = configuration.dialogsPageSize
        let page = try await request("getDialogs") { [transport] () async throws(SyncTransportError) in
            try await transport.getDialogs(offset: offset, limit: limit)
        }
        statistics.dialogPages += 1
        var next = page.nextOffset
        if let proposed = next, !Self.moves(from: offset, to: proposed, dialogs: page.dialogs) {
            statistics.implausibleAnswers += 1
            next = nil
        }
        var batch = SyncMutableState(initialState: cursor, state: cursor, storedAnswers: stored.storedAnswers, writesCursor: false)
        Self.add(page, pinned: false, to: &batch)
        batch.add(.replaceChatListHole(at: offset, next: next))
        _ = try await commit(batch)
    }

    /// Remembers chats discovered below the hole and queues fetching their dialogs.
    func scheduleDialogRefresh(_ peers: Set<PeerId>) {
        guard !peers.isEmpty else { return }
        dialogRefreshPending.formUnion(peers)
        guard !operations.contains(where: { if case .refreshDialogs = $0 { return true }; return false }) else { return }
        enqueueBack(.refreshDialogs)
    }

    /// Whether the chat list has a hole and the chat's dialog was not fetched in this generation (never, or only by
    /// an earlier rebuild).
    private func isUnknownBelowHole(_ peerId: PeerId) async throws(SyncError) -> Bool {
        do {
            return try await batches.store.run(.readCursors) { transaction in
                guard try SyncChatListHoles.topHole(in: transaction) != nil else { return false }
                return try !SyncChatListHoles.isKnown(peerId, generation: SyncChatListHoles.generation(in: transaction), in: transaction)
            }
        } catch {
            throw .storage(error)
        }
    }

    /// Queues fetching the chat's dialog when the chat list has a hole and the chat's dialog is not known: activity
    /// of this device in it (a send) moved it up the list, and a secret chat's send brings no update that would
    /// discover it.
    public func discoverIfUnknown(_ peerId: PeerId) async throws(SyncError) {
        if try await isUnknownBelowHole(peerId) { scheduleDialogRefresh([peerId]) }
    }

    /// Fetches the dialogs of the discovered chats, a page (``SyncConfiguration/dialogsPageSize``) at a time, and takes
    /// them (``SyncMutation/refreshChat(_:)``); a batch discarded because the cursor moved is fetched again.
    func refreshPendingDialogs() async throws(SyncError) {
        let size = Int(max(1, configuration.dialogsPageSize))
        while !stopped, !dialogRefreshPending.isEmpty {
            let peers = Array(dialogRefreshPending.sorted().prefix(size))
            let stored = try await storedCursors(channels: [])
            guard let cursor = stored.cursor else { return }
            var answer = try await request("getPeerDialogs") { [transport] () async throws(SyncTransportError) in
                try await transport.getPeerDialogs(peers: peers)
            }
            answer.dialogs = answer.dialogs.filter { peers.contains($0.peerId) }
            var batch = SyncMutableState(initialState: cursor, state: cursor, storedAnswers: stored.storedAnswers, writesCursor: false)
            // The dialogs only: the chats' messages come by update, in order (storing the dialog's top message here
            // would store messages whose updates are still on the way, unreported).
            if !answer.users.isEmpty { batch.add(.mergeUsers(answer.users, overwrite: true)) }
            if !answer.chats.isEmpty { batch.add(.mergeChats(answer.chats, overwrite: true)) }
            for dialog in answer.dialogs { batch.add(.refreshChat(dialog)) }
            if try await commit(batch) == .committed { dialogRefreshPending.subtract(peers) }
        }
    }
}
