/// Per-chat counts of tagged messages (table 44), for example unread mentions.
extension Transaction {
    /// The summary of (`tagMask`, chat, namespace); nil when none was ever stored (no message with the tag was
    /// added and the server never gave a count).
    ///
    /// The count follows this rule, as in Postbox, for the bits of ``SeedConfiguration/messageTagsWithSummary``:
    /// - a message added with the tag counts, unless its id is at most the summary's `range.maxId` (the server's
    ///   count already covers it); without a summary, the first such message makes one (count 1, maxId 0);
    /// - a tag added to a stored message by ``updateMessage(_:_:)`` always counts;
    /// - a message removed with the tag, or losing it in an update, is uncounted when the count is above 0 (it never
    ///   goes negative);
    /// - a message moved by an update to another chat or namespace is uncounted at the old one and counted at the new
    ///   one as newly added;
    /// - ``replaceMessageTagSummary(peerId:tagMask:namespace:count:maxId:)`` sets the count and `maxId` and bumps
    ///   the version; nothing else changes the version.
    ///
    /// - Parameter tagMask: One tag bit (a mask of several bits reads the lowest; an empty one finds nothing).
    public func getMessageTagSummary(peerId: PeerId, tagMask: MessageTags, namespace: MessageId.Namespace) throws -> MessageHistoryTagNamespaceSummary? {
        guard let tag = tagMask.singleTags.first else { return nil }
        return try history.tagsSummary.get(MessageHistoryTagsSummaryKey(tag: tag, peerId: peerId, namespace: namespace))
    }

    /// Replaces the summary of (`tagMask`, chat, namespace) with the server's: `count` tagged messages (a negative
    /// count is taken as 0) among the ids up to `maxId` (for a dialog's `unread_mentions_count`, the dialog's top
    /// message id). Recorded in ``PostboxChanges/updatedMessageTagSummaries``; see
    /// ``getMessageTagSummary(peerId:tagMask:namespace:)`` for how later messages change it.
    ///
    /// - Parameter tagMask: One tag bit; more than one bit, or none, throws ``HistoryTableError/invalidArgument(_:)``.
    public func replaceMessageTagSummary(peerId: PeerId, tagMask: MessageTags, namespace: MessageId.Namespace, count: Int32,
                                         maxId: MessageId.Id) throws {
        guard tagMask.singleTags.count == 1 else {
            throw HistoryTableError.invalidArgument("replaceMessageTagSummary needs one tag bit, got \(tagMask.rawValue)")
        }
        try history.tagsSummary.replace(MessageHistoryTagsSummaryKey(tag: tagMask, peerId: peerId, namespace: namespace), count: count, maxId: maxId)
    }
}
