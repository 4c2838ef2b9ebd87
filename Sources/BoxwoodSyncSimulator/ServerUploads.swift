import BoxwoodSync
import Boxwood

/// An upload the server holds: its part count (fixed by the first part) and the parts stored so far.
struct ServerUpload {
    let totalParts: Int32
    var parts: [Int32: [UInt8]] = [:]

    /// The whole file, when every part is stored.
    var assembled: [UInt8]? {
        var bytes: [UInt8] = []
        for index in 0..<totalParts {
            guard let part = parts[index] else { return nil }
            bytes += part
        }
        return bytes
    }
}

/// Uploads in parts, sending the uploaded file as a message, and forwarding: each refused for good
/// (``SyncTransportError/rejected(reason:)``) the way Telegram refuses it, each message-creating request applied at
/// most once per client mutation id. Like sends, the new messages are logged (pts or channel pts) and returned in the
/// answer, not pushed to the client that asked.
extension ServerState {
    mutating func saveFilePart(fileId: Int64, part: Int32, totalParts: Int32, bytes: [UInt8]) throws(SyncTransportError) {
        guard totalParts >= 1, totalParts <= ApiUploadLimits.maxParts else { throw .rejected(reason: "FILE_PARTS_INVALID") }
        guard part >= 0, part < totalParts, !bytes.isEmpty, bytes.count <= ApiUploadLimits.maxPartSize else {
            throw .rejected(reason: "FILE_PART_INVALID")
        }
        var upload = uploads[fileId] ?? ServerUpload(totalParts: totalParts)
        guard upload.totalParts == totalParts else { throw .rejected(reason: "FILE_PARTS_INVALID") }
        upload.parts[part] = bytes
        uploads[fileId] = upload
        partsReceived[fileId, default: [:]][part, default: 0] += 1
    }

    mutating func sendMedia(peerId: PeerId, file: ApiInputFile, caption: String, randomId: Int64,
                            mutation: ClientMutationId) throws(SyncTransportError) -> ApiUpdates {
        if case let .sent(answer)? = mutationAnswers[mutation] { return answer }
        try checkPostable(peerId)
        guard let upload = uploads[file.id], upload.totalParts == file.parts else { throw .rejected(reason: "FILE_PART_0_MISSING") }
        if let missing = (0..<file.parts).first(where: { upload.parts[$0] == nil }) { throw .rejected(reason: "FILE_PART_\(missing)_MISSING") }
        guard let bytes = upload.assembled, Int64(bytes.count) == file.size else { throw .rejected(reason: "FILE_PARTS_INVALID") }
        let document = ApiDocument(id: file.id, mimeType: file.mimeType, size: Int64(bytes.count), fileName: file.name, duration: nil)
        let (messages, answer) = postOutgoing(peerId: peerId, [(caption, randomId, ApiMessageContent(media: .document(document)))])
        mutationAnswers[mutation] = .sent(answer)
        sentMessages += messages
        return answer
    }

    mutating func forwardMessages(fromPeerId: PeerId, ids: [Int32], toPeerId: PeerId, randomIds: [Int64],
                                  mutation: ClientMutationId) throws(SyncTransportError) -> ApiUpdates {
        if case let .sent(answer)? = mutationAnswers[mutation] { return answer }
        guard ids.count == randomIds.count, fromPeerId.namespace != SyncNamespaces.secretChat, chats[fromPeerId] != nil else {
            throw .rejected(reason: "PEER_ID_INVALID")
        }
        try checkPostable(toPeerId)
        var copies: [(String, Int64, ApiMessageContent)] = []
        for (id, randomId) in zip(ids, randomIds) {
            guard let original = chats[fromPeerId]?.messages[id] else { continue }
            let content = original.content.forwardedCopy(from: fromPeerId, id: original.id, authorId: original.fromId, date: original.date)
            copies.append((original.text, randomId, content))
        }
        guard !copies.isEmpty else { throw .rejected(reason: "MESSAGE_ID_INVALID") }
        let (messages, answer) = postOutgoing(peerId: toPeerId, copies)
        mutationAnswers[mutation] = .sent(answer)
        sentMessages += messages
        return answer
    }

    /// Refuses a chat the account cannot post in this way.
    private func checkPostable(_ peerId: PeerId) throws(SyncTransportError) {
        switch peerId.namespace {
        case SyncNamespaces.user, SyncNamespaces.group:
            guard users[peerId] != nil || chatInfos[peerId] != nil else { throw .rejected(reason: "PEER_ID_INVALID") }
        case SyncNamespaces.channel:
            guard channelPts[peerId] != nil else { throw .rejected(reason: "PEER_ID_INVALID") }
            if readOnlyChannels.contains(peerId) { throw .rejected(reason: "CHAT_WRITE_FORBIDDEN") }
        default:
            // Secret chats carry media and forwards through the secret-chat layer.
            throw .rejected(reason: "PEER_ID_INVALID")
        }
    }

    /// Creates the account's messages `posts` (text, random id, content) in `peerId` and logs them; the answer holds
    /// each message's `messageId` and its pts update.
    private mutating func postOutgoing(peerId: PeerId, _ posts: [(text: String, randomId: Int64, content: ApiMessageContent)]) -> ([ApiMessage], ApiUpdates) {
        let date = tick()
        var messages: [ApiMessage] = []
        var updates: [ApiUpdate] = []
        for post in posts {
            if peerId.namespace == SyncNamespaces.channel {
                let message = createChannelMessage(channelId: peerId, fromId: accountPeerId, outgoing: true, text: post.text,
                                                   date: date, randomId: post.randomId, content: post.content)
                messages.append(message)
                updates.append(.messageId(id: message.id, randomId: post.randomId))
                updates.append(recordChannelEvent(channelId: peerId, date: date) { .newChannelMessage(message, pts: $0, ptsCount: 1) })
            } else {
                let message = createCommonBoxMessage(peerId: peerId, fromId: accountPeerId, outgoing: true, text: post.text,
                                                     date: date, randomId: post.randomId, content: post.content)
                messages.append(message)
                updates.append(.messageId(id: message.id, randomId: post.randomId))
                updates.append(recordPtsEvent(date: date) { .newMessage(message, pts: $0, ptsCount: 1) })
            }
        }
        let (users, chats) = usersAndChats(referencedBy: updates)
        return (messages, .updates(updates: updates, users: users, chats: chats, date: date, seq: 0))
    }
}
