import Boxwood

/// Why a request failed. Every one of them but ``rejected(reason:)`` is retried by the caller with backoff.
public enum SyncTransportError: Error, Hashable, Sendable, Codable {
    /// The connection dropped before the answer arrived (the request may or may not have been applied).
    case disconnected
    /// No answer in time (the request may or may not have been applied).
    case timeout
    /// The server asks to wait.
    case floodWait(seconds: Double)
    /// The server refused the request for good (Telegram's 400/403 errors: `MESSAGE_ID_INVALID`,
    /// `CHAT_WRITE_FORBIDDEN`, `MESSAGE_AUTHOR_REQUIRED`…): nothing was applied and asking again cannot help. An
    /// outbound operation that gets it is given up and reported (a message to send is marked failed, with the reason).
    case rejected(reason: String)
}

/// What the push connection delivers.
public enum SyncPushEvent: Hashable, Sendable, Codable {
    /// Updates pushed by the server.
    case updates(ApiUpdates)
    /// A new server session: pushes may have been lost, so the client polls getDifference.
    case newSession
}

/// The server as the state manager sees it: requests and a push stream. Implemented by a real network layer or
/// by the simulated server.
public protocol SyncTransport: Sendable {
    /// The server's current cursor (used on first start).
    func getState() async throws(SyncTransportError) -> ApiUpdatesState
    /// Everything since `pts`/`qts`/`date`, at most `ptsTotalLimit` pts events (else `tooLong`).
    func getDifference(pts: Int32, qts: Int32, date: Int32, ptsTotalLimit: Int32) async throws(SyncTransportError) -> ApiDifference
    /// A channel's updates since `pts`, at most `limit` messages per answer.
    func getChannelDifference(channelId: PeerId, pts: Int32, limit: Int32) async throws(SyncTransportError) -> ApiChannelDifference
    /// One page of the dialog list (Telegram's `messages.getDialogs`): each chat with its top message, read state
    /// and (channels) pts. `offset` nil asks for the first page (the pinned dialogs, then up to `limit` unpinned
    /// ones); a later page holds up to `limit` dialogs strictly below `offset` (see ``ApiDialogsOffset``).
    func getDialogs(offset: ApiDialogsOffset?, limit: Int32) async throws(SyncTransportError) -> ApiDialogs
    /// The dialogs of `peers` (Telegram's `messages.getPeerDialogs`), with their top messages, the users and chats
    /// they mention and the current cursor; chats the server does not have are left out, `nextOffset` is nil.
    func getPeerDialogs(peers: [PeerId]) async throws(SyncTransportError) -> ApiDialogs
    /// A window of `peerId`'s history (Telegram's `messages.getHistory`), newest first: of the messages with
    /// `minId < id < maxId` (`maxId == 0`: no upper bound; `minId == 0`: no lower bound) in descending id order,
    /// the `limit` starting `addOffset` places after the first one below `offsetId` (`offsetId == 0`: from the
    /// newest). A negative `addOffset` moves the window up, to messages at and above `offsetId`: `offsetId: x,
    /// addOffset: -limit / 2` is the neighbourhood of `x`.
    func getHistory(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32) async throws(SyncTransportError) -> [ApiMessage]
    /// A window of `peerId`'s messages that `filter` returns (Telegram's `messages.search` with an empty query: the
    /// shared photos, files or links), newest first, windowed like ``getHistory(peerId:offsetId:addOffset:limit:maxId:minId:)``.
    func searchHistory(peerId: PeerId, filter: ApiSearchFilter, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32,
                       minId: Int32) async throws(SyncTransportError) -> [ApiMessage]
    /// Sends a message; applied at most once per `mutation` (a repeat returns the first answer).
    func sendMessage(peerId: PeerId, text: String, randomId: Int64, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates
    /// Marks incoming messages of `peerId` read up to `maxId`; applied at most once per `mutation`.
    func readHistory(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages
    /// Replaces the text of the account's own message `id` of `peerId`; applied at most once per `mutation`. The
    /// answer carries the edit update (with its pts).
    func editMessage(peerId: PeerId, id: Int32, text: String, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates
    /// Deletes messages of `peerId` for everyone (`revoke`) or for the account only (its other devices too); applied at
    /// most once per `mutation`. Ids that are gone already are ignored. Refused for good: `MESSAGE_DELETE_FORBIDDEN`
    /// (for everyone, a message of someone else in a group or channel: that takes an admin).
    func deleteMessages(peerId: PeerId, ids: [Int32], revoke: Bool, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages
    /// Sets the account's reaction on message `id` of `peerId` (nil: takes it back); applied at most once per
    /// `mutation`. The answer carries the message's edit update.
    func sendReaction(peerId: PeerId, id: Int32, emoji: String?, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates
    /// Stores part `part` (0-based) of the upload `fileId` of `totalParts` parts (Telegram's
    /// `upload.saveBigFilePart`). Parts may come in any order and again (a part stored again replaces itself).
    /// Refused for good: `FILE_PART_INVALID` (a part outside `0..<totalParts`, empty, or larger than
    /// ``ApiUploadLimits/maxPartSize``), `FILE_PARTS_INVALID` (`totalParts` out of range, or not the number the
    /// upload's earlier parts gave).
    func saveFilePart(fileId: Int64, part: Int32, totalParts: Int32, bytes: [UInt8]) async throws(SyncTransportError)
    /// Sends the uploaded `file` as a document message of `peerId` with `caption`;
    /// applied at most once per `mutation`. Refused for good: `FILE_PART_<n>_MISSING` (part n never stored),
    /// `PEER_ID_INVALID`, `CHAT_WRITE_FORBIDDEN`. The answer carries the new message with its pts.
    func sendMedia(peerId: PeerId, file: ApiInputFile, caption: String, randomId: Int64, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates
    /// Forwards messages `ids` of `fromPeerId` to `toPeerId` (`randomIds[i]` names the copy of `ids[i]`), at most
    /// once per `mutation`. Ids that are gone are skipped; refused for good when none is left (`MESSAGE_ID_INVALID`),
    /// for a secret chat (`PEER_ID_INVALID`) or a channel the account may not post in (`CHAT_WRITE_FORBIDDEN`). The
    /// answer carries the copies with their pts.
    func forwardMessages(fromPeerId: PeerId, ids: [Int32], toPeerId: PeerId, randomIds: [Int64], mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates
    /// Saves the account's cloud draft in `peerId` (empty text clears it; Telegram's `messages.saveDraft`). The last
    /// save wins; the answer is the draft's server date. The account's other sessions get `draftMessage`.
    func saveDraft(peerId: PeerId, text: String) async throws(SyncTransportError) -> Int32
    /// The chat's unread mentions of the account (``ApiMessage/isUnreadMention``), windowed like
    /// ``getHistory(peerId:offsetId:addOffset:limit:maxId:minId:)`` (Telegram's `messages.getUnreadMentions`).
    func getUnreadMentions(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32) async throws(SyncTransportError) -> [ApiMessage]
    /// Marks every unread mention of the chat with an id up to `maxId` seen (Telegram's `messages.readMentions`, bounded
    /// so that a mention that arrived after the client's request stays unread), at most once per `mutation`.
    func readMentions(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages
    /// Marks the mentions (and media) of these messages of the chat seen (Telegram's `messages.readMessageContents`),
    /// at most once per `mutation`.
    func readMessageContents(peerId: PeerId, ids: [Int32], mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages
    /// The pushes of the current connection (a new stream each call; it ends when the connection drops).
    func connect() async -> AsyncStream<SyncPushEvent>
}

extension SyncTransport {
    /// A server without message actions refuses them (`METHOD_NOT_SUPPORTED`).
    public func editMessage(peerId: PeerId, id: Int32, text: String, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        throw .rejected(reason: "METHOD_NOT_SUPPORTED")
    }

    public func deleteMessages(peerId: PeerId, ids: [Int32], revoke: Bool, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        throw .rejected(reason: "METHOD_NOT_SUPPORTED")
    }

    public func sendReaction(peerId: PeerId, id: Int32, emoji: String?, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        throw .rejected(reason: "METHOD_NOT_SUPPORTED")
    }

    public func saveFilePart(fileId: Int64, part: Int32, totalParts: Int32, bytes: [UInt8]) async throws(SyncTransportError) {
        throw .rejected(reason: "METHOD_NOT_SUPPORTED")
    }

    public func saveDraft(peerId: PeerId, text: String) async throws(SyncTransportError) -> Int32 {
        throw .rejected(reason: "METHOD_NOT_SUPPORTED")
    }

    public func getUnreadMentions(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32,
                                  minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        throw .rejected(reason: "METHOD_NOT_SUPPORTED")
    }

    public func readMentions(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        throw .rejected(reason: "METHOD_NOT_SUPPORTED")
    }

    public func readMessageContents(peerId: PeerId, ids: [Int32], mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        throw .rejected(reason: "METHOD_NOT_SUPPORTED")
    }

    public func searchHistory(peerId: PeerId, filter: ApiSearchFilter, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32,
                              minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        throw .rejected(reason: "METHOD_NOT_SUPPORTED")
    }

    public func sendMedia(peerId: PeerId, file: ApiInputFile, caption: String, randomId: Int64, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        throw .rejected(reason: "METHOD_NOT_SUPPORTED")
    }

    public func forwardMessages(fromPeerId: PeerId, ids: [Int32], toPeerId: PeerId, randomIds: [Int64], mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        throw .rejected(reason: "METHOD_NOT_SUPPORTED")
    }
}
