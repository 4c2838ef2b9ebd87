import Boxwood

/// Unread mentions of the account, per chat: the ``SyncMessageTags/unseenMention`` tag on stored messages, its hole
/// space, and its tag summary (the chat list's ``ChatListItem/mentionCount``).
///
/// The invariant kept here: **the summary's count is exact once the chat's mention space has no hole.** Then every
/// unread mention of the chat is stored with the tag, so every read or deletion of one finds it stored and uncounts
/// it; the count is recounted from the stored tags whenever the last mention hole goes (``recountIfComplete``).
///
/// While a mention hole remains, the count is the server's (a dialog's ``ApiDialog/unreadMentionsCount``, given with
/// the dialog's top message as the summary's `maxId`) adjusted by what happens to stored messages. A read or a
/// deletion of an unread mention that is not stored cannot be uncounted (an account-wide id names no chat), so the
/// count may be too high until the space is filled. The sync client therefore fills a chat's mention space as soon as
/// a dialog gives it a count above zero (``AccountStateManager`` after a reset, and at start); a dialog that says zero
/// needs no fetch: the space is known to be empty below the fetched messages.
enum SyncMentions {
    static let tag = SyncMessageTags.unseenMention
    static let space = MessageHistoryHoleSpace.tag(SyncMessageTags.unseenMention)
    private static let cloud = SyncNamespaces.cloudMessages

    /// The chat's count of unread mentions (0 without a summary).
    static func count(_ peerId: PeerId, in transaction: Transaction) throws -> Int32 {
        try transaction.getMessageTagSummary(peerId: peerId, tagMask: tag, namespace: cloud)?.count ?? 0
    }

    /// The chat's mention holes up to its known top: the newest stored message, or the top message of the dialog that
    /// gave the count (the summary's `maxId`) when that is higher — a dialog taken while the chat's newest messages
    /// are still arriving by update (``refresh(_:in:)``). The space above the known top is the messages still to
    /// come, which updates bring with their tags: filling it would store them before their updates, and it does not
    /// make the count inexact.
    static func holes(_ peerId: PeerId, in transaction: Transaction) throws -> [ClosedRange<Int32>] {
        try holes(peerId, top: try knownTop(peerId, in: transaction), in: transaction)
    }

    /// The highest id the chat's mention space is known up to: its newest stored message, or the summary's `maxId`
    /// when a dialog gave it (version above 0) and it is higher.
    private static func knownTop(_ peerId: PeerId, in transaction: Transaction) throws -> Int32 {
        let stored = try topId(peerId, in: transaction)
        guard let summary = try transaction.getMessageTagSummary(peerId: peerId, tagMask: tag, namespace: cloud), summary.version > 0 else {
            return stored
        }
        return max(stored, summary.range.maxId)
    }

    /// The chat's newest stored cloud message id (0: none).
    private static func topId(_ peerId: PeerId, in transaction: Transaction) throws -> Int32 {
        try transaction.getTopMessageIndex(peerId: peerId, namespace: cloud)?.id.id ?? 0
    }

    /// ``holes(_:in:)`` below a `top` already read.
    private static func holes(_ peerId: PeerId, top: Int32, in transaction: Transaction) throws -> [ClosedRange<Int32>] {
        guard top > 0 else { return [] }
        return try transaction.getHoles(peerId: peerId, namespace: cloud, space: space).compactMap { hole in
            hole.lowerBound <= top ? hole.lowerBound...min(hole.upperBound, top) : nil
        }
    }

    /// Whether the chat's count is not known to be exact: a count was given (by a dialog: the summary was replaced
    /// at least once) and a mention hole is left. Not the count alone: a count above zero can fall to zero before
    /// the fill (a stale tag cleared by a history fill) while an unread mention still lies in the hole.
    static func needsFill(_ peerId: PeerId, in transaction: Transaction) throws -> Bool {
        guard let summary = try transaction.getMessageTagSummary(peerId: peerId, tagMask: tag, namespace: cloud), summary.version > 0 else {
            return false
        }
        return try !holes(peerId, in: transaction).isEmpty
    }

    /// The ids of the chat's stored messages with the tag, ascending.
    static func taggedIds(_ peerId: PeerId, in transaction: Transaction) throws -> [Int32] {
        var ids: [Int32] = []
        var anchor: MessageIndex?
        while true {
            let page = try transaction.getTaggedMessageIndices(peerId: peerId, tag: tag, anchor: anchor, direction: .later,
                                                               limit: SyncStorage.historyPageSize)
            ids += page.lazy.filter { $0.id.namespace == cloud }.map(\.id.id)
            guard page.count == SyncStorage.historyPageSize, let last = page.last else { return ids }
            anchor = last
        }
    }

    /// Takes the tag off stored messages of the chat (a read of their mentions, or a stored tag found stale); each
    /// one the summary counted is uncounted.
    static func clearTag(_ peerId: PeerId, ids: some Sequence<Int32>, in transaction: Transaction) throws {
        for id in ids {
            let messageId = MessageId(peerId: peerId, namespace: cloud, id: id)
            try transaction.updateMessage(messageId) { stored in
                stored.tags.contains(tag) ? SyncStorage.restored(stored, tags: stored.tags.subtracting(tag)) : nil
            }
        }
    }

    /// Sets the count from the stored tags when the chat's mention space has no hole left (then they are all of
    /// them); does nothing otherwise. The count then holds no mention that is not stored, so the summary's `maxId`
    /// becomes 0: every message stored from then on with the tag is counted, every tag taken off uncounted, and the
    /// count stays the number of tagged messages — whatever order updates, fills and reads come in. (A `maxId` kept
    /// from the dialog would skip a mention stored later below it: one the count never held if it was read before
    /// the dialog was taken and its message arrives by update after.)
    static func recountIfComplete(_ peerId: PeerId, in transaction: Transaction) throws {
        let top = try knownTop(peerId, in: transaction)
        guard try holes(peerId, top: top, in: transaction).isEmpty else { return }
        let summary = try transaction.getMessageTagSummary(peerId: peerId, tagMask: tag, namespace: cloud)
        let stored = Int32(clamping: try taggedIds(peerId, in: transaction).count)
        guard (summary?.count ?? 0) != stored || (summary?.range.maxId ?? 0) != 0 else { return }
        try transaction.replaceMessageTagSummary(peerId: peerId, tagMask: tag, namespace: cloud, count: stored, maxId: 0)
    }

    /// A chat rebuilt from its dialog, whose messages from `lowest` up were just stored as the server's: the count
    /// becomes the dialog's. With unread mentions, everything below `lowest` is a mention hole (filled next); without,
    /// the space is known to be empty there, and a stored message below still tagged is stale.
    static func reset(_ dialog: ApiDialog, lowestFetched lowest: Int32, in transaction: Transaction) throws {
        let peerId = dialog.peerId
        if lowest > 1 {
            if dialog.unreadMentionsCount > 0 {
                try transaction.addHole(peerId: peerId, namespace: cloud, space: space, range: 1...(lowest - 1))
            } else {
                try transaction.removeHole(peerId: peerId, namespace: cloud, space: space, range: 1...(lowest - 1))
                try clearTag(peerId, ids: try taggedIds(peerId, in: transaction).filter { $0 < lowest }, in: transaction)
            }
        }
        try transaction.replaceMessageTagSummary(peerId: peerId, tagMask: tag, namespace: cloud,
                                                 count: max(0, dialog.unreadMentionsCount), maxId: dialog.topMessage)
        try recountIfComplete(peerId, in: transaction)
    }

    /// A chat whose dialog was taken without touching its history (a chat discovered below the chat list's hole:
    /// ``SyncStorage/refreshChat(_:in:)``), while the messages sent since the stored cursor may still be arriving by
    /// update. The count becomes the dialog's, given up to the dialog's top message. The space up to that top is
    /// unknown when the count is above zero (one hole, filled next, reaching above the stored messages: its
    /// mentions are the server's current ones, stored ahead of their updates); with no unread mention it is known
    /// empty, and a stored message there still tagged is stale. Above the top, updates bring every message with
    /// its tag. Until the fill, the count is the server's adjusted by what happens to stored messages (reads of
    /// messages applied on both sides may uncount twice); the fill's recount makes it exact.
    static func refresh(_ dialog: ApiDialog, in transaction: Transaction) throws {
        let peerId = dialog.peerId
        let top = max(0, dialog.topMessage)
        if top < Int32.max {
            try transaction.removeHole(peerId: peerId, namespace: cloud, space: space, range: (top + 1)...Int32.max)
        }
        if top > 0 {
            if dialog.unreadMentionsCount > 0 {
                try transaction.addHole(peerId: peerId, namespace: cloud, space: space, range: 1...top)
            } else {
                try transaction.removeHole(peerId: peerId, namespace: cloud, space: space, range: 1...top)
                try clearTag(peerId, ids: try taggedIds(peerId, in: transaction).filter { $0 <= top }, in: transaction)
            }
        }
        try transaction.replaceMessageTagSummary(peerId: peerId, tagMask: tag, namespace: cloud,
                                                 count: max(0, dialog.unreadMentionsCount), maxId: top)
        try recountIfComplete(peerId, in: transaction)
    }

    /// Stores a page of the chat's unread mentions that fills `range` of the mention space: the mentions are stored
    /// (or their stored copies updated), a stored message in the range still tagged but not in the answer is no
    /// longer an unread mention (the answer is newer than anything applied: fills run between update batches), and
    /// the range stops being a hole. Returns the number of messages newly stored.
    static func fill(_ peerId: PeerId, range: ClosedRange<Int32>, messages: [ApiMessage], accountPeerId: PeerId,
                     in transaction: Transaction) throws -> Int {
        let mentions = messages.filter { $0.peerId == peerId && range.contains($0.id) && $0.isUnreadMention }
        let added = try SyncStorage.addMessages(mentions, location: .random, fetched: true, accountPeerId: accountPeerId, in: transaction)
        let present = Set(mentions.map(\.id))
        try clearTag(peerId, ids: try taggedIds(peerId, in: transaction).filter { range.contains($0) && !present.contains($0) }, in: transaction)
        try transaction.removeHole(peerId: peerId, namespace: cloud, space: space, range: range)
        try recountIfComplete(peerId, in: transaction)
        return added.count
    }

    /// The account read the mentions of messages of the chat here (before the server knows): `ids`, or every
    /// mention up to `maxId`. Reading up to `maxId` also knows the space there: no unread mention is left in it.
    static func markRead(_ peerId: PeerId, ids: [Int32]? = nil, upTo maxId: Int32? = nil, in transaction: Transaction) throws {
        if let ids { try clearTag(peerId, ids: ids, in: transaction) }
        guard let maxId, maxId > 0 else { return }
        let tagged = try taggedIds(peerId, in: transaction)
        try clearTag(peerId, ids: tagged.filter { $0 <= maxId }, in: transaction)
        try transaction.removeHole(peerId: peerId, namespace: cloud, space: space, range: 1...maxId)
        let summary = try transaction.getMessageTagSummary(peerId: peerId, tagMask: tag, namespace: cloud)
        let remaining = Int32(clamping: tagged.lazy.filter { $0 > maxId }.count)
        try transaction.replaceMessageTagSummary(peerId: peerId, tagMask: tag, namespace: cloud, count: remaining,
                                                 maxId: max(maxId, summary?.range.maxId ?? 0))
        // The read may have removed the last hole: then the count is the stored tags' and `maxId` 0, as after any
        // fill (a `maxId` kept here would leave a tagged message stored later below it uncounted, and its read
        // uncounted anyway: a count one too low).
        try recountIfComplete(peerId, in: transaction)
    }
}
