import Boxwood

/// The rebuild from the dialog list (first start, difference `tooLong`), page by page.
///
/// The cursor taken is the first page's: everything that changes while the later pages are read is after it, so the
/// difference that follows the rebuild brings it again (replaying it over the pages is idempotent: stored messages
/// are skipped or updated only when newer, read positions only move forward, deletions of gone messages do nothing).
///
/// One thing the pages alone can miss: a chat that gets a new message while the list is read jumps from below the
/// page being read to the top, above it, and no page holds it — its read position, settings and the hole below its
/// top would stay unknown (or stale). Such a chat got a new message after the cursor, so when the server's cursor
/// moved while paging (a later page carries a different one), the rebuild reads the difference from the cursor (without applying it) and fetches the dialogs of the
/// chats with new messages that no page held (`getPeerDialogs`). A chat whose activity the difference does not
/// announce (a channel the account has not joined, kept polled) can jump the same way: so every chat listed here
/// that no page held is fetched too — without it, such a chat kept the read position and settings it had before.
///
/// Each page is its own transaction, replayed only while the stored cursor is still the one the rebuild started
/// from; only the closing one writes the new cursor. A process killed between pages therefore still has its old
/// cursor (none on a first start, the one that got `tooLong` after it) and rebuilds again.
extension AccountStateManager {
    /// Rebuilds every chat of the dialog list, page by page, and then takes the first page's cursor: stored messages
    /// stay, but everything below each chat's newest message becomes a hole to fill. `expected` is the stored
    /// cursor (nil: none yet) and `storedAnswers` the stored send-answer count read before the first request (see
    /// ``SyncStoredAnswers``); a page replayed after either changed is discarded, and so is the rest of the rebuild.
    ///
    /// A page whose next offset does not move down the list (it repeats or goes back; a hostile or broken server)
    /// would be asked for again for ever: it is counted in ``SyncStatistics/implausibleAnswers`` and taken as the
    /// last page.
    ///
    /// - Returns: `.committed` once every page and the cursor are stored; `.discarded` when a page was not, or when
    ///   the difference since the cursor is already too long to read (the rebuild is to start again).
    func resetFromDialogs(expected: SyncAccountState?, storedAnswers: Int64) async throws(SyncError) -> CommitOutcome {
        let limit = configuration.dialogsPageSize
        var offset: ApiDialogsOffset?
        var cursor: SyncAccountState?
        var moved = false
        var stored = Set<PeerId>()
        var pages = 0
        // Where the rest of the list starts when the rebuild stops before its end (the chat list's hole).
        var holeOffset: ApiDialogsOffset?
        let generation: Int32
        do {
            generation = try await batches.store.run(.readCursors) { transaction in try SyncChatListHoles.nextGeneration(in: transaction) }
        } catch {
            throw .storage(error)
        }
        while true {
            let page = try await request("getDialogs") { [transport, offset] () async throws(SyncTransportError) in
                try await transport.getDialogs(offset: offset, limit: limit)
            }
            statistics.dialogPages += 1
            let pageState = SyncAccountState(page.state)
            // Any step of the server's clock (a channel post moves no account counter) may have moved a chat.
            if let cursor, (pageState.pts, pageState.qts, pageState.date) != (cursor.pts, cursor.qts, cursor.date) { moved = true }
            cursor = cursor ?? pageState
            var last = page.nextOffset == nil
            if let next = page.nextOffset, !Self.moves(from: offset, to: next, dialogs: page.dialogs) {
                statistics.implausibleAnswers += 1
                last = true
            }
            var batch = SyncMutableState(initialState: expected, state: pageState, storedAnswers: storedAnswers, writesCursor: false)
            batch.dialogGeneration = generation
            Self.add(page, pinned: offset == nil, to: &batch)
            if try await commit(batch) == .discarded { return .discarded }
            stored.formUnion(page.dialogs.map(\.peerId))
            pages += 1
            if last { break }
            offset = page.nextOffset
            if pages >= max(1, configuration.dialogPagesAtReset) {
                holeOffset = page.nextOffset
                break
            }
        }
        guard let cursor else { return .discarded }
        var closing = SyncMutableState(initialState: expected, state: cursor, storedAnswers: storedAnswers)
        closing.dialogGeneration = generation
        // Listed chats below the hole stay as they are until a page reaches them; those above it must be the server's.
        var candidates = try await listedChats(above: holeOffset)
        if moved {
            guard let touched = try await chatsWithNewMessages(since: cursor) else { return .discarded }
            candidates.formUnion(touched)
        }
        let missed = candidates.subtracting(stored).sorted()
        for start in stride(from: 0, to: missed.count, by: Int(max(1, limit))) {
            let peers = Array(missed[start..<min(missed.count, start + Int(max(1, limit)))])
            var answer = try await request("getPeerDialogs") { [transport] () async throws(SyncTransportError) in
                try await transport.getPeerDialogs(peers: peers)
            }
            answer.dialogs = answer.dialogs.filter { peers.contains($0.peerId) }
            Self.add(answer, pinned: false, to: &closing)
        }
        closing.add(.setChatListHole(below: holeOffset))
        return try await commit(closing)
    }

    /// The chats listed in the root chat list here (read from the chat-list index alone, no row rendered); with an
    /// offset, only those listed above it.
    private func listedChats(above offset: ApiDialogsOffset?) async throws(SyncError) -> Set<PeerId> {
        do {
            return try await batches.store.run(.readCursors) { transaction in
                let indices = try offset.map { try transaction.getChatListIndices(groupId: .root, above: SyncChatListHoles.index($0)) }
                    ?? transaction.getChatListIndices(groupId: .root)
                return Set(indices.map(\.messageIndex.id.peerId))
            }
        } catch {
            throw .storage(error)
        }
    }

    /// Whether a page's next offset is a real step down the list: the page holds a dialog, and the offset is below
    /// the one the page was asked with.
    static func moves(from offset: ApiDialogsOffset?, to next: ApiDialogsOffset, dialogs: [ApiDialog]) -> Bool {
        guard !dialogs.isEmpty else { return false }
        guard let offset else { return true }
        return next < offset
    }

    /// Adds a page's users, chats and chat resets to `batch`; `pinned` (the first page) also sets the pinned chats.
    static func add(_ page: ApiDialogs, pinned: Bool, to batch: inout SyncMutableState) {
        if !page.users.isEmpty { batch.add(.mergeUsers(page.users, overwrite: true)) }
        if !page.chats.isEmpty { batch.add(.mergeChats(page.chats, overwrite: true)) }
        let messagesByPeer = Dictionary(grouping: page.messages, by: \.peerId)
        for dialog in page.dialogs {
            batch.add(.resetChat(dialog, messages: messagesByPeer[dialog.peerId] ?? []))
        }
        if pinned { batch.add(.setPinnedChats(page.dialogs.filter(\.pinned).map(\.peerId))) }
    }

    /// The chats with a new message (or channel activity) since `cursor`, read from the difference without applying
    /// it; nil when the difference is too long. A slice that does not move the cursor ends the reading (counted in
    /// ``SyncStatistics/implausibleAnswers``).
    private func chatsWithNewMessages(since cursor: SyncAccountState) async throws(SyncError) -> Set<PeerId>? {
        let limit = configuration.ptsTotalLimit
        var from = cursor
        var peers = Set<PeerId>()
        while true {
            statistics.differenceRequests += 1
            let difference = try await request("getDifference") { [transport, from] () async throws(SyncTransportError) in
                try await transport.getDifference(pts: from.pts, qts: from.qts, date: from.date, ptsTotalLimit: limit)
            }
            switch difference {
            case .empty:
                return peers
            case let .difference(messages, encrypted, other, _, _, _):
                Self.collect(messages, encrypted, other, into: &peers)
                return peers
            case let .slice(messages, encrypted, other, _, _, state):
                Self.collect(messages, encrypted, other, into: &peers)
                let next = SyncAccountState(state)
                guard next.isAhead(of: from) else {
                    statistics.implausibleAnswers += 1
                    return peers
                }
                from = next
            case .tooLong:
                return nil
            }
        }
    }

    private static func collect(_ messages: [ApiMessage], _ encrypted: [ApiEncryptedMessage], _ other: [ApiUpdate],
                                into peers: inout Set<PeerId>) {
        peers.formUnion(messages.map(\.peerId))
        peers.formUnion(encrypted.map(\.chatId))
        for update in other {
            switch update {
            case let .newMessage(message, _, _), let .newChannelMessage(message, _, _): peers.insert(message.peerId)
            case let .newEncryptedMessage(message, _): peers.insert(message.chatId)
            case let .channelTooLong(channelId, _): peers.insert(channelId)
            default: break
            }
        }
    }
}
