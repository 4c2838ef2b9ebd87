import Boxwood

/// Filling chats' unread-mention spaces as soon as their count is not known to be exact (see ``SyncMentions``): a
/// chat whose dialog gave unread mentions while a mention hole remains. The chats come from each committed batch that
/// reset chats, and once per start from a scan of the chat list (a process killed before a fill ended). Each chat's
/// space is fetched with `getUnreadMentions` from the top, one page per operation step, until no hole is left; the
/// last page recounts the chat from its stored tags.
extension AccountStateManager {
    /// Remembers the chats of `batch`'s resets that have unread mentions to fetch, and queues the fill.
    func scheduleMentionFills(after batch: SyncMutableState) {
        let peers = batch.resetDialogs.filter { $0.unreadMentionsCount > 0 }.map(\.peerId)
        guard !peers.isEmpty else { return }
        mentionFillsPending.formUnion(peers)
        queueMentionFills()
    }

    /// Queues the fill operation unless one is queued.
    func queueMentionFills() {
        guard !operations.contains(where: { if case .fillMentions = $0 { return true }; return false }) else { return }
        enqueueBack(.fillMentions)
    }

    /// Fills the mention spaces of the pending chats (after scanning the chat list once per start).
    func fillPendingMentions() async throws(SyncError) {
        if !mentionSpacesScanned {
            let scanned: [PeerId]
            do {
                scanned = try await batches.store.run(.readCursors) { transaction in
                    try transaction.getChatListIndices(groupId: .root).map(\.messageIndex.id.peerId)
                        .filter { try SyncMentions.needsFill($0, in: transaction) }
                }
            } catch {
                throw .storage(error)
            }
            mentionFillsPending.formUnion(scanned)
            mentionSpacesScanned = true
        }
        while !stopped, let peerId = mentionFillsPending.min() {
            try await fillMentionSpace(of: peerId)
            mentionFillsPending.remove(peerId)
        }
    }

    /// Fetches the chat's unread mentions page by page, from its highest mention hole down, until its space has no
    /// hole (or an answer proves nothing: the chat is left for the next start).
    private func fillMentionSpace(of peerId: PeerId) async throws(SyncError) {
        let store = batches.store
        let accountPeerId = accountPeerId
        let limit = configuration.holeFillPageSize
        while !stopped {
            let holes: [ClosedRange<Int32>]
            do {
                holes = try await store.run(.readCursors) { transaction in
                    try SyncMentions.needsFill(peerId, in: transaction) ? try SyncMentions.holes(peerId, in: transaction) : []
                }
            } catch {
                throw .storage(error)
            }
            guard let hole = holes.max(by: { $0.upperBound < $1.upperBound }) else { return }
            let page = HoleFillPage(range: hole, direction: .upperToLower, limit: limit)
            let messages = try await request("getUnreadMentions", peerId: peerId) { [transport] () async throws(SyncTransportError) in
                try await transport.getUnreadMentions(peerId: peerId, offsetId: page.offsetId, addOffset: page.addOffset, limit: page.limit,
                                                      maxId: page.maxId, minId: page.minId)
            }
            statistics.mentionPagesFetched += 1
            guard let filled = page.filledRange(messages, peerId: peerId) else { return }
            let news: [MessageId]
            do {
                news = try await store.run(.fillHole) { transaction in
                    let news = try SyncStorage.unstoredNews(messages, peerId: peerId, in: transaction)
                    _ = try SyncMentions.fill(peerId, range: filled, messages: messages, accountPeerId: accountPeerId, in: transaction)
                    return try SyncStorage.storedIds(news, in: transaction)
                }
            } catch {
                throw .storage(error)
            }
            await reportFetchedNews(news)
        }
    }
}
