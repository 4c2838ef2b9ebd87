/// The persistent outbound operation queue (per peer and tag, plus a merged queue per tag).
extension Transaction {
    /// Queues an operation and returns the stored entry.
    @discardableResult
    public func operationLogAddEntry(peerId: PeerId, tag: PeerOperationLogTag, tagLocalIndex: PeerOperationLogIndex = .automatic,
                                     tagMergedIndex: StorePeerOperationLogEntryTagMergedIndex, contents: any PostboxCoding) throws -> PeerOperationLogEntry {
        try tables.operationLog.addEntry(peerId, tag: tag, tagLocalIndex: tagLocalIndex, tagMergedIndex: tagMergedIndex, contents: contents)
    }

    @discardableResult
    public func operationLogRemoveEntry(peerId: PeerId, tag: PeerOperationLogTag, tagLocalIndex: Int32) throws -> Bool {
        try tables.operationLog.removeEntry(peerId, tag: tag, tagLocalIndex: tagLocalIndex)
    }

    public func operationLogRemoveAllEntries(peerId: PeerId, tag: PeerOperationLogTag) throws {
        try tables.operationLog.removeAllEntries(peerId, tag: tag)
    }

    public func operationLogGetEntry(peerId: PeerId, tag: PeerOperationLogTag, tagLocalIndex: Int32) throws -> PeerOperationLogEntry? {
        try tables.operationLog.getEntry(peerId, tag: tag, tagLocalIndex: tagLocalIndex)
    }

    /// Visits the entries of (peer, tag) in queue order until `body` returns false.
    public func operationLogEnumerateEntries(peerId: PeerId, tag: PeerOperationLogTag, _ body: (PeerOperationLogEntry) throws -> Bool) throws {
        try tables.operationLog.enumerateEntries(peerId, tag: tag, body)
    }

    /// Changes an entry's contents and/or merged-queue position as `f` says.
    public func operationLogUpdateEntry(peerId: PeerId, tag: PeerOperationLogTag, tagLocalIndex: Int32,
                                        _ f: (PeerOperationLogEntry?) throws -> PeerOperationLogEntryUpdate) throws {
        try tables.operationLog.updateEntry(peerId, tag: tag, tagLocalIndex: tagLocalIndex, f)
    }

    /// Up to `limit` entries of the tag's merged queue from merged index `fromIndex` on, in queue order.
    public func getMergedOperationLogEntries(tag: PeerOperationLogTag, fromIndex: Int32, limit: Int) throws -> [PeerOperationLogEntry] {
        try tables.operationLog.getMergedEntries(tag, fromIndex: fromIndex, limit: limit)
    }
}
