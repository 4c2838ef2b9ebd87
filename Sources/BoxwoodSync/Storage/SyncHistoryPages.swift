import Boxwood

/// Walking a chat's stored history in bounded pages, so that what the sync layer holds in memory does not grow with
/// the size of a chat.
extension SyncStorage {
    /// Messages read per page when the sync layer walks a chat's stored history.
    static let historyPageSize = 1_000

    /// Calls `body` with each page of `peerId`'s stored messages in `namespace`, newest first, at most
    /// ``historyPageSize`` messages each (only one page is held at a time). `body` may delete messages of the page
    /// it was given: the next page is read from below the page's oldest message.
    static func forEachHistoryPage(_ peerId: PeerId, namespace: MessageId.Namespace, in transaction: Transaction,
                                   _ body: ([Message]) throws -> Void) throws {
        var anchor: MessageIndex?
        while true {
            let page = try transaction.getMessageHistory(peerId: peerId, namespaces: [namespace], anchor: anchor,
                                                         direction: .earlier, limit: historyPageSize)
            guard let oldest = page.last else { return }
            try body(page)
            if page.count < historyPageSize { return }
            anchor = oldest.index
        }
    }
}
