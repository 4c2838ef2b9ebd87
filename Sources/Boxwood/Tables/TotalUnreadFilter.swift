/// Which chats the filtered unread totals leave out (``ChatListTotalUnreadState``): the ones whose notification
/// settings say `isRemovedFromTotalUnreadCount` — read through the notification settings table, which
/// ``PostboxTables`` wires in; the message-history tables alone remove nothing.
struct TotalUnreadFilter {
    /// True when `peerId`'s chat is left out of the filtered totals now.
    var isRemoved: (PeerId) throws -> Bool
    /// The peers whose notification settings changed in this transaction, with whether they were left out
    /// before the first change.
    var removedBefore: () throws -> [PeerId: Bool]

    /// A filter that removes no chat.
    static var none: TotalUnreadFilter { TotalUnreadFilter(isRemoved: { _ in false }, removedBefore: { [:] }) }
}
