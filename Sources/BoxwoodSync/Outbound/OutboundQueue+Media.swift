import Boxwood

/// A file the app sends: where it is and what it is.
public struct SyncOutgoingFile: Hashable, Sendable {
    /// The file, which the app keeps in place until the message is sent or failed (in its container: the upload
    /// reads it from there, also after a restart).
    public var path: String
    /// The name the recipient sees.
    public var fileName: String
    public var mimeType: String

    public init(path: String, fileName: String, mimeType: String) {
        self.path = path
        self.fileName = fileName
        self.mimeType = mimeType
    }
}

/// An upload in progress: the local message it belongs to (its chat and globally unique id) and its parts.
public struct SyncUploadProgress: Hashable, Sendable {
    public let peerId: PeerId
    /// The local copy's globally unique id (`Message.globallyUniqueId`).
    public let randomId: Int64
    public let acknowledgedParts: Int32
    public let totalParts: Int32
}

/// Files and forwards (tag ``SyncOperationLogTags/sendMessage``, in order with the chat's other sends).
///
/// A file is uploaded as a resumable, chunked operation: parts of ``SyncConfiguration/uploadPartSize`` are sent in
/// order, each acknowledged part is recorded in the entry (``SendMediaOperation/nextPart``), so after a kill the
/// upload resumes from the first part not acknowledged; once every part is stored the message is sent with its
/// mutation id (exactly once). A file that cannot be read, or a part or message the server refuses, flags the
/// message failed with the reason; ``resendMessage(_:)`` uploads it again.
extension OutboundQueue {
    // MARK: What the app calls

    /// Stores a local copy of `file` as an unsent document message of `peerId` with `caption` and queues its upload;
    /// returns the local id.
    ///
    /// - Throws: ``OutboundError/fileUnreadable(path:reason:)``, ``OutboundError/fileSizeUnsupported(path:size:)``
    ///   (nothing is stored), or what the database throws.
    @discardableResult
    public func sendMedia(peerId: PeerId, file: SyncOutgoingFile, caption: String, timestamp: Int32) async throws -> MessageId {
        let size = try UploadFileReader(path: file.path).size()
        let partSize = manager.configuration.uploadPartSize
        guard size > 0, partSize > 0, size <= Int64(ApiUploadLimits.maxParts) * Int64(partSize) else {
            throw OutboundError.fileSizeUnsupported(path: file.path, size: size)
        }
        let accountPeerId = manager.accountPeerId
        return try await store.transaction { transaction in
            let mutation = try SyncStorage.nextMutation(in: transaction)
            let randomId = Int64.random(in: 1...Int64.max)
            let fileId = Int64.random(in: 1...Int64.max)
            let document = ApiDocument(id: fileId, mimeType: file.mimeType, size: size, fileName: file.fileName, duration: nil)
            let local = StoreMessage(id: .partial(peerId, SyncNamespaces.localMessages), globallyUniqueId: randomId, timestamp: timestamp,
                                     flags: [.unsent], authorId: accountPeerId, text: caption,
                                     attributes: [SyncMessageAttribute(editVersion: 0)], media: [SyncMediaFile(document)])
            try SyncStorage.includeInChatList(peerId, in: transaction)
            let result = try transaction.addMessages([local], location: .random)
            let operation = SendMediaOperation(randomId: randomId, fileId: fileId, path: file.path, fileName: file.fileName,
                                               mimeType: file.mimeType, size: size, partSize: partSize, caption: caption,
                                               mutation: mutation.sequence, nextPart: 0)
            _ = try transaction.operationLogAddEntry(peerId: peerId, tag: SyncOperationLogTags.sendMessage, tagMergedIndex: .automatic,
                                                     contents: operation)
            guard let id = result.idsByGloballyUniqueId[randomId] else { throw OutboundError.localMessageNotStored }
            return id
        }
    }

    /// Stores local copies of cloud messages `ids` (of one chat) in `peerId` as unsent forwarded messages and queues
    /// the forward; returns the local ids, in the order of `ids`.
    ///
    /// - Throws: ``OutboundError/mixedChats`` (ids of several chats), ``OutboundError/messageNotFound(_:)`` (one is
    ///   not stored, or not a cloud message), or what the database throws; nothing is stored then.
    @discardableResult
    public func forwardMessages(_ ids: [MessageId], to peerId: PeerId, timestamp: Int32) async throws -> [MessageId] {
        guard let fromPeerId = ids.first?.peerId else { return [] }
        guard ids.allSatisfy({ $0.peerId == fromPeerId }) else { throw OutboundError.mixedChats }
        let accountPeerId = manager.accountPeerId
        return try await store.transaction { transaction in
            var copies: [StoreMessage] = []
            var randomIds: [Int64] = []
            for id in ids {
                guard id.namespace == SyncNamespaces.cloudMessages, let original = try transaction.getMessage(id) else {
                    throw OutboundError.messageNotFound(id)
                }
                let randomId = Int64.random(in: 1...Int64.max)
                let content = SyncMessageContent.content(of: original)
                    .forwardedCopy(from: fromPeerId, id: id.id, authorId: original.author?.id ?? fromPeerId, date: original.timestamp)
                let parts = SyncMessageContent.storeParts(content, text: original.text, peerId: peerId)
                copies.append(StoreMessage(id: .partial(peerId, SyncNamespaces.localMessages), globallyUniqueId: randomId, timestamp: timestamp,
                                           flags: [.unsent], forwardInfo: parts.forwardInfo, authorId: accountPeerId, text: original.text,
                                           attributes: [SyncMessageAttribute(editVersion: 0)] + parts.attributes, media: parts.media))
                randomIds.append(randomId)
            }
            let mutation = try SyncStorage.nextMutation(in: transaction)
            try SyncStorage.includeInChatList(peerId, in: transaction)
            let result = try transaction.addMessages(copies, location: .random)
            _ = try transaction.operationLogAddEntry(peerId: peerId, tag: SyncOperationLogTags.sendMessage, tagMergedIndex: .automatic,
                                                     contents: ForwardMessagesOperation(fromPeerId: fromPeerId, ids: ids.map(\.id),
                                                                                        randomIds: randomIds, mutation: mutation.sequence))
            return try randomIds.map { randomId in
                guard let id = result.idsByGloballyUniqueId[randomId] else { throw OutboundError.localMessageNotStored }
                return id
            }
        }
    }

    // MARK: Consumers

    /// Uploads the parts not acknowledged yet, recording each acknowledgement, then sends the message; false when it
    /// cannot be sent (no client id).
    func uploadAndSend(_ queued: SendMediaOperation, key: EntryKey) async throws(SyncError) -> Bool {
        guard let mutation = try await mutationId(queued.mutation) else { return false }
        let transport = transport
        var operation = queued
        do throws(SyncError) {
            // The file is opened once for the parts left (none left: the message is sent without opening it).
            if operation.nextPart < operation.totalParts {
                let reader: UploadFileReader
                do throws(OutboundError) {
                    reader = try UploadFileReader(path: operation.path)
                } catch {
                    try await markFailed(randomIds: [operation.randomId], reason: "FILE_UNREADABLE: \(error)", key: key, resendMedia: queued)
                    return true
                }
                while operation.nextPart < operation.totalParts {
                    let part = operation.nextPart
                    let offset = Int64(part) * Int64(operation.partSize)
                    let bytes: [UInt8]
                    do throws(OutboundError) {
                        bytes = try reader.read(offset: offset, count: Int(min(Int64(operation.partSize), operation.size - offset)))
                    } catch {
                        try await markFailed(randomIds: [operation.randomId], reason: "FILE_UNREADABLE: \(error)", key: key, resendMedia: queued)
                        return true
                    }
                    let (fileId, totalParts) = (operation.fileId, operation.totalParts)
                    try await manager.request("saveFilePart", peerId: key.peerId) { () async throws(SyncTransportError) in
                        try await transport.saveFilePart(fileId: fileId, part: part, totalParts: totalParts, bytes: bytes)
                    }
                    operation = operation.acknowledged(upTo: part + 1)
                    let progress = operation
                    if let failure = await storeAnswer({ transaction in
                        try transaction.operationLogUpdateEntry(peerId: key.peerId, tag: key.tag, tagLocalIndex: key.tagLocalIndex) { _ in
                            PeerOperationLogEntryUpdate(mergedIndex: .none, contents: .update(progress))
                        }
                    }) {
                        throw .storage(failure)
                    }
                    uploadProgress[key] = SyncUploadProgress(peerId: key.peerId, randomId: operation.randomId, acknowledgedParts: part + 1,
                                                             totalParts: totalParts)
                }
            }
            let file = ApiInputFile(id: operation.fileId, parts: operation.totalParts, name: operation.fileName, mimeType: operation.mimeType,
                                    size: operation.size)
            let sent = operation
            let answer = try await manager.request("sendMedia", peerId: key.peerId) { () async throws(SyncTransportError) in
                try await transport.sendMedia(peerId: key.peerId, file: file, caption: sent.caption, randomId: sent.randomId, mutation: mutation)
            }
            try await storeSentCopies(answer, randomIds: [operation.randomId], key: key)
        } catch let .rejected(_, reason) {
            try await markFailed(randomIds: [operation.randomId], reason: reason, key: key, resendMedia: queued)
        }
        uploadProgress[key] = nil
        return true
    }

    /// Forwards messages and stores the server's copies; false when it cannot be sent (no client id).
    func forward(_ operation: ForwardMessagesOperation, key: EntryKey) async throws(SyncError) -> Bool {
        guard let mutation = try await mutationId(operation.mutation) else { return false }
        let transport = transport
        do throws(SyncError) {
            let answer = try await manager.request("forwardMessages", peerId: key.peerId) { () async throws(SyncTransportError) in
                try await transport.forwardMessages(fromPeerId: operation.fromPeerId, ids: operation.ids, toPeerId: key.peerId,
                                                    randomIds: operation.randomIds, mutation: mutation)
            }
            try await storeSentCopies(answer, randomIds: operation.randomIds, key: key)
        } catch let .rejected(_, reason) {
            var resend: [Int64: ForwardMessagesOperation] = [:]
            for (id, randomId) in zip(operation.ids, operation.randomIds) {
                resend[randomId] = ForwardMessagesOperation(fromPeerId: operation.fromPeerId, ids: [id], randomIds: [randomId], mutation: 0)
            }
            try await markFailed(randomIds: operation.randomIds, reason: reason, key: key, resendForward: resend)
        }
        return true
    }

    /// Stores the server's copies of the messages `randomIds` from `answer` (replacing the local copies) and removes
    /// the entry in one transaction, then hands the answer's updates to the state manager (they carry the copies with
    /// their pts, so a copy a reset removed is stored again).
    private func storeSentCopies(_ answer: ApiUpdates, randomIds: [Int64], key: EntryKey) async throws(SyncError) {
        let wanted = Set(randomIds)
        var copies: [ApiMessage] = []
        if case let .updates(updates, _, _, _, _) = answer {
            for update in updates {
                switch update {
                case let .newMessage(message, _, _), let .newChannelMessage(message, _, _):
                    if wanted.contains(message.randomId) { copies.append(message) }
                default:
                    break
                }
            }
        }
        let accountPeerId = manager.accountPeerId
        let failure = await storeAnswer { [copies] transaction in
            if !copies.isEmpty {
                _ = try SyncStorage.addMessages(copies, location: .random, accountPeerId: accountPeerId, in: transaction)
                try SyncStorage.recordStoredAnswer(in: transaction)
            }
            try transaction.operationLogRemoveEntry(peerId: key.peerId, tag: key.tag, tagLocalIndex: key.tagLocalIndex)
        }
        await manager.addUpdates(answer)
        if let failure { throw .storage(failure) }
    }
}
