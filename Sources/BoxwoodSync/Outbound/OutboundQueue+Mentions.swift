import Boxwood

extension SyncOperationLogTags {
    /// Mentions marked seen here, waiting to be sent (``ReadMentionsOperation``).
    public static let readMentions = PeerOperationLogTag(5)
}

/// Mentions seen here, waiting to be sent: every unread mention of the chat up to `maxId` (Telegram's
/// `readMentions`), or the mentions of the messages `ids` (`readMessageContents`).
public struct ReadMentionsOperation: PostboxCoding, Equatable, Sendable {
    public static let postboxTypeName = "ReadMentionsOperation"

    /// Read every unread mention up to this id (0: only ``ids``).
    public let maxId: Int32
    /// Read these messages' mentions (with ``maxId`` 0).
    public let ids: [Int32]
    public let mutation: Int64

    public init(maxId: Int32, ids: [Int32], mutation: Int64) {
        self.maxId = maxId
        self.ids = ids
        self.mutation = mutation
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        maxId = try decoder.decodeInt32(forKey: "x")
        ids = decoder.decodeInt32ArrayForKey("i")
        mutation = try decoder.decodeInt64(forKey: "m")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(maxId, forKey: "x")
        encoder.encodeInt32Array(ids, forKey: "i")
        encoder.encodeInt64(mutation, forKey: "m")
    }
}

/// Reading mentions (tag ``SyncOperationLogTags/readMentions``): the mentions are read here at once — the tags go,
/// the chat's mention count falls — and the queue tells the server, exactly once per entry. When the server answers,
/// the read is applied again: a fill fetched before the server applied it may have put an unread copy back.
extension OutboundQueue {
    /// Marks every unread mention of the chat seen (the chat list's mention count goes to zero) and queues telling
    /// the server. Mentions that arrive after this call stay unread.
    public func readAllMentions(peerId: PeerId) async throws {
        try await store.transaction { transaction in
            let top = try transaction.getTopMessageIndex(peerId: peerId, namespace: SyncNamespaces.cloudMessages)?.id.id ?? 0
            guard top > 0 else { return }
            try SyncMentions.markRead(peerId, upTo: top, in: transaction)
            let mutation = try SyncStorage.nextMutation(in: transaction)
            _ = try transaction.operationLogAddEntry(peerId: peerId, tag: SyncOperationLogTags.readMentions, tagMergedIndex: .automatic,
                                                     contents: ReadMentionsOperation(maxId: top, ids: [], mutation: mutation.sequence))
        }
    }

    /// Marks the mentions of these messages of one chat seen (the user saw them) and queues telling the server.
    ///
    /// - Throws: ``OutboundError/mixedChats`` when the ids are of several chats.
    public func markMentionsSeen(_ ids: [MessageId]) async throws {
        guard let peerId = ids.first?.peerId else { return }
        guard ids.allSatisfy({ $0.peerId == peerId }) else { throw OutboundError.mixedChats }
        let cloudIds = ids.filter { $0.namespace == SyncNamespaces.cloudMessages }.map(\.id)
        guard !cloudIds.isEmpty else { return }
        try await store.transaction { transaction in
            try SyncMentions.markRead(peerId, ids: cloudIds, in: transaction)
            let mutation = try SyncStorage.nextMutation(in: transaction)
            _ = try transaction.operationLogAddEntry(peerId: peerId, tag: SyncOperationLogTags.readMentions, tagMergedIndex: .automatic,
                                                     contents: ReadMentionsOperation(maxId: 0, ids: cloudIds, mutation: mutation.sequence))
        }
    }

    /// Sends a mention read, applies it again with the answer and removes its entry; false when it cannot be sent
    /// (no client id).
    func readMentions(_ operation: ReadMentionsOperation, key: EntryKey) async throws(SyncError) -> Bool {
        guard let mutation = try await mutationId(operation.mutation) else { return false }
        let transport = transport
        let peerId = key.peerId
        let answer = try await manager.request(operation.maxId > 0 ? "readMentions" : "readMessageContents", peerId: peerId) {
            () async throws(SyncTransportError) in
            operation.maxId > 0
                ? try await transport.readMentions(peerId: peerId, maxId: operation.maxId, mutation: mutation)
                : try await transport.readMessageContents(peerId: peerId, ids: operation.ids, mutation: mutation)
        }
        let failure = await storeAnswer { transaction in
            try SyncMentions.markRead(peerId, ids: operation.maxId > 0 ? nil : operation.ids,
                                      upTo: operation.maxId > 0 ? operation.maxId : nil, in: transaction)
            // A reset built from dialogs fetched before the server applied this read must not replay over it.
            try SyncStorage.recordStoredAnswer(in: transaction)
            try transaction.operationLogRemoveEntry(peerId: key.peerId, tag: key.tag, tagLocalIndex: key.tagLocalIndex)
        }
        if let pts = answer.pts {
            // The read's step of the common box (its content is applied above).
            await manager.addUpdates(.updates(updates: [.readMessagesContents(ids: [], pts: pts, ptsCount: answer.ptsCount)],
                                              users: [], chats: [], date: 0, seq: 0))
        }
        if let failure { throw .storage(failure) }
        return true
    }
}
