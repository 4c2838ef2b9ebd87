import Boxwood

/// Cloud drafts (tag ``SyncOperationLogTags/drafts``): the draft is shown at once (the chat-list row, and the chat
/// moves up) and saved to the server by the queue; a newer draft of the same chat replaces the one waiting. While a
/// draft of this device waits, the server's drafts of that chat (from other devices, or older echoes of this one)
/// are not applied: the server takes this device's after them.
extension OutboundQueue {
    /// Stores `text` as the chat's draft (empty: clears it), dated `timestamp`, and queues saving it to the cloud.
    public func saveDraft(peerId: PeerId, text: String, timestamp: Int32) async throws {
        try await store.transaction { transaction in
            try SyncDrafts.store(text.isEmpty ? nil : ApiDraft(text: text, date: timestamp), for: peerId, in: transaction)
            try transaction.operationLogRemoveAllEntries(peerId: peerId, tag: SyncOperationLogTags.drafts)
            _ = try transaction.operationLogAddEntry(peerId: peerId, tag: SyncOperationLogTags.drafts, tagMergedIndex: .automatic,
                                                     contents: SaveDraftOperation(text: text))
        }
    }

    /// Saves a draft (the last save wins on the server, so a repeat after a lost answer is harmless) and removes its
    /// entry.
    func saveDraft(_ operation: SaveDraftOperation, key: EntryKey) async throws(SyncError) -> Bool {
        let transport = transport
        _ = try await manager.request("saveDraft", peerId: key.peerId) { () async throws(SyncTransportError) in
            try await transport.saveDraft(peerId: key.peerId, text: operation.text)
        }
        if let failure = await storeAnswer({ transaction in
            _ = try transaction.operationLogRemoveEntry(peerId: key.peerId, tag: key.tag, tagLocalIndex: key.tagLocalIndex)
        }) {
            throw .storage(failure)
        }
        return true
    }
}
