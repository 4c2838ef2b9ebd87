import BoxwoodSync
import Foundation
import Boxwood

/// A deterministic simulated Telegram-like server: one account, its users, groups, channels and secret chats, the
/// account's pts/qts/seq boxes and each channel's pts, an event log serving getDifference, seeded random traffic
/// pushed in Telegram's formats, exactly-once mutations, and a fault layer (lost, duplicated, reordered pushes,
/// disconnects, failed requests, lost answers).
///
/// Every method is thread-safe. Nothing is random except through the configuration's seed: the same seed and the
/// same sequence of calls give the same state, answers and pushes.
public final class SimulatedServer: SyncTransport, @unchecked Sendable {
    /// The configuration the server was built with.
    public let configuration: SimulatedServerConfiguration
    /// The account's own user.
    public let accountPeerId: PeerId

    private let lock = NSLock()
    private var state: ServerState

    /// A server with the world built from `configuration`; its log starts empty (the client must sync from
    /// getState/getDialogs).
    public init(configuration: SimulatedServerConfiguration = SimulatedServerConfiguration()) {
        self.configuration = configuration
        let state = ServerState(configuration: configuration)
        accountPeerId = state.accountPeerId
        self.state = state
    }

    private func withState<T, E: Error>(_ body: (inout ServerState) throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }

    // MARK: Traffic

    /// Generates `events` random events: each updates the authoritative state, is logged, and is pushed (through
    /// the fault layer) to the connected client. Before each event, held (delayed) pushes may be released.
    public func generate(events: Int) {
        withState { $0.generate(events: events) }
    }

    /// Generates one event of `kind`; false (and nothing happens) when it is impossible right now, e.g. an edit
    /// when no chat has messages.
    @discardableResult
    public func generate(_ kind: SimulatedEventKind) -> Bool {
        withState { $0.generate(kind) }
    }

    /// Generates one event of each of `kinds`, in order, as one stretch of traffic (seq events next to each other may
    /// be merged into one `updatesCombined` push, as in `generate(events:)`); returns how many were possible.
    @discardableResult
    public func generate(sequence kinds: [SimulatedEventKind]) -> Int {
        withState { $0.generate(sequence: kinds) }
    }

    /// Generates `messages` incoming messages in one chat (`peerId`, or a random user, group or channel); a secret
    /// chat gets encrypted messages. Useful for driving a client into slices or `tooLong`.
    public func generateBurst(messages: Int, into peerId: PeerId? = nil) {
        withState { $0.generateBurst(messages: messages, peerId: peerId) }
    }

    /// Another device of the account sees the newest `count` unread mentions of one chat (a pts or channel pts event,
    /// pushed through the fault layer); returns the ids read (none when the chat has no unread mention).
    @discardableResult
    public func readMentionsFromOtherDevice(in peerId: PeerId, count: Int) -> [Int32] {
        withState { state in
            let ids = state.readMentionsFromOtherDevice(peerId: peerId, count: count)
            state.flushCombinedPush()
            return ids
        }
    }

    // MARK: Faults

    /// Replaces the fault probabilities (e.g. `.none` for a quiescent period).
    public func setFaults(_ faults: SimulatedFaults) {
        withState { $0.faults = faults }
    }

    /// Delivers every held (delayed) push now, in random order.
    public func deliverDelayed() {
        withState { $0.releaseHeldPushes(probability: 1) }
    }

    /// What the fault layer did so far.
    public var faultStats: SimulatedFaultStats {
        withState { $0.faultStats }
    }

    // MARK: Inspection

    /// The authoritative state now.
    public func snapshot() -> SimulatedServerSnapshot {
        withState { $0.snapshot() }
    }

    /// The account's deletions the server applied: the chat, the ids it still had, and whether for everyone.
    public func deletions() -> [(peerId: PeerId, ids: [Int32], revoke: Bool)] {
        withState { $0.deletions }
    }

    /// The bytes of upload `fileId` when every part is stored (nil otherwise).
    public func uploadedFile(_ fileId: Int64) -> [UInt8]? {
        withState { $0.uploads[fileId]?.assembled }
    }

    /// How many times each part of upload `fileId` was received.
    public func partsReceived(_ fileId: Int64) -> [Int32: Int] {
        withState { $0.partsReceived[fileId] ?? [:] }
    }

    /// The channels whose updates are never pushed (``SimulatedServerConfiguration/unpushedChannels``).
    public var unpushedChannels: Set<PeerId> {
        withState { $0.unpushedChannels }
    }

    /// The incoming messages created since the simulation started (including ones deleted later), by chat: user and
    /// group messages, channel posts and secret-chat messages.
    public func messagesCreated() -> [PeerId: Set<Int32>] {
        withState { $0.createdIncoming }
    }

    /// Every message `sendMessage` created (one per applied mutation; repeats of a mutation create none), as it
    /// was created, in order — including messages edited or deleted later.
    public func messagesSent() -> [ApiMessage] {
        withState { $0.sentMessages }
    }

    // MARK: SyncTransport

    /// The current cursor (`date`: the logical clock).
    public func getState() async throws(SyncTransportError) -> ApiUpdatesState {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> ApiUpdatesState in
            try state.failRequestBeforeApplying()
            return state.currentState
        }
    }

    /// The events since the cursor, from the account log: `tooLong` when `serverPts - pts > ptsTotalLimit` or `pts`
    /// is older than the log; `slice` after ``SimulatedServerConfiguration/differenceSliceSize`` entries; channel
    /// activity as `channelTooLong(pts: nil)`.
    public func getDifference(pts: Int32, qts: Int32, date: Int32, ptsTotalLimit: Int32) async throws(SyncTransportError) -> ApiDifference {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> ApiDifference in
            try state.failRequestBeforeApplying()
            return state.difference(pts: pts, qts: qts, date: date, ptsTotalLimit: ptsTotalLimit)
        }
    }

    /// The channel's events since `pts`, at most `limit`; `tooLong` when the channel is more than
    /// ``SimulatedServerConfiguration/channelTooLongThreshold`` ahead or `pts` is older than its log.
    public func getChannelDifference(channelId: PeerId, pts: Int32, limit: Int32) async throws(SyncTransportError) -> ApiChannelDifference {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> ApiChannelDifference in
            try state.failRequestBeforeApplying()
            return state.channelDifference(channelId: channelId, pts: pts, limit: limit)
        }
    }

    /// A page of the chats (users with history, groups, channels, secret chats): the pinned ones first (first page
    /// only), then by top message, newest first.
    public func getDialogs(offset: ApiDialogsOffset?, limit: Int32) async throws(SyncTransportError) -> ApiDialogs {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> ApiDialogs in
            try state.failRequestBeforeApplying()
            return state.dialogs(offset: offset, limit: limit)
        }
    }

    /// The dialogs of `peers` that have one.
    public func getPeerDialogs(peers: [PeerId]) async throws(SyncTransportError) -> ApiDialogs {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> ApiDialogs in
            try state.failRequestBeforeApplying()
            return state.peerDialogs(peers)
        }
    }

    /// A window of the current messages, newest first (see ``SyncTransport/getHistory(peerId:offsetId:addOffset:limit:maxId:minId:)``).
    public func getHistory(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> [ApiMessage] in
            try state.failRequestBeforeApplying()
            return state.history(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit, maxId: maxId, minId: minId)
        }
    }

    /// The messages of `peerId` that `filter` returns, windowed like ``getHistory(peerId:offsetId:addOffset:limit:maxId:minId:)``.
    public func searchHistory(peerId: PeerId, filter: ApiSearchFilter, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32,
                              minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> [ApiMessage] in
            try state.failRequestBeforeApplying()
            return state.history(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit, maxId: maxId, minId: minId, filter: filter)
        }
    }

    /// The chat's unread mentions, windowed like ``getHistory(peerId:offsetId:addOffset:limit:maxId:minId:)``.
    public func getUnreadMentions(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32,
                                  minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> [ApiMessage] in
            try state.failRequestBeforeApplying()
            return state.history(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit, maxId: maxId, minId: minId,
                                 unreadMentionsOnly: true)
        }
    }

    /// Marks the chat's unread mentions up to `maxId` seen, at most once per `mutation` (faults as for ``sendMessage``).
    public func readMentions(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> ApiAffectedMessages in
            try state.failRequestBeforeApplying()
            let answer = try state.readMentions(peerId: peerId, maxId: maxId, ids: [], mutation: mutation)
            try state.loseAnswerAfterApplying()
            return answer
        }
    }

    /// Marks the mentions of these messages seen, at most once per `mutation` (faults as for ``sendMessage``).
    public func readMessageContents(peerId: PeerId, ids: [Int32], mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> ApiAffectedMessages in
            try state.failRequestBeforeApplying()
            let answer = try state.readMentions(peerId: peerId, maxId: nil, ids: ids, mutation: mutation)
            try state.loseAnswerAfterApplying()
            return answer
        }
    }

    /// Sends a message, applied at most once per `mutation`. With faults, the request may fail before being applied
    /// or be applied and lose its answer; a retry with the same `mutation` returns the stored answer.
    /// Sending to an unknown peer is a programming error (it traps).
    public func sendMessage(peerId: PeerId, text: String, randomId: Int64, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> ApiUpdates in
            try state.failRequestBeforeApplying()
            if state.readOnlyChannels.contains(peerId) { throw .rejected(reason: "CHAT_WRITE_FORBIDDEN") }
            let answer = state.sendMessage(peerId: peerId, text: text, randomId: randomId, mutation: mutation)
            try state.loseAnswerAfterApplying()
            return answer
        }
    }

    /// Edits the account's own message, at most once per `mutation` (faults as for ``sendMessage``); refused for a
    /// message that is gone, someone else's, or in a secret chat.
    public func editMessage(peerId: PeerId, id: Int32, text: String, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> ApiUpdates in
            try state.failRequestBeforeApplying()
            let answer = try state.editMessage(peerId: peerId, id: id, text: text, mutation: mutation)
            try state.loseAnswerAfterApplying()
            return answer
        }
    }

    /// Deletes messages for everyone, at most once per `mutation` (faults as for ``sendMessage``); refused in a
    /// secret chat.
    public func deleteMessages(peerId: PeerId, ids: [Int32], revoke: Bool, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> ApiAffectedMessages in
            try state.failRequestBeforeApplying()
            let answer = try state.deleteMessages(peerId: peerId, ids: ids, revoke: revoke, mutation: mutation)
            try state.loseAnswerAfterApplying()
            return answer
        }
    }

    /// Sets or takes back the account's reaction, at most once per `mutation` (faults as for ``sendMessage``);
    /// refused for a message that is gone or in a secret chat.
    public func sendReaction(peerId: PeerId, id: Int32, emoji: String?, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> ApiUpdates in
            try state.failRequestBeforeApplying()
            let answer = try state.sendReaction(peerId: peerId, id: id, emoji: emoji, mutation: mutation)
            try state.loseAnswerAfterApplying()
            return answer
        }
    }

    /// Marks incoming messages read, applied at most once per `mutation` (faults as for ``sendMessage``).
    /// Reading a chat without a dialog is a programming error (it traps).
    public func readHistory(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> ApiAffectedMessages in
            try state.failRequestBeforeApplying()
            let answer = state.readHistory(peerId: peerId, maxId: maxId, mutation: mutation)
            try state.loseAnswerAfterApplying()
            return answer
        }
    }

    /// Saves the account's cloud draft of `peerId` (faults as for ``sendMessage``: saving again is harmless).
    public func saveDraft(peerId: PeerId, text: String) async throws(SyncTransportError) -> Int32 {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> Int32 in
            try state.failRequestBeforeApplying()
            guard peerId.namespace != SyncNamespaces.secretChat, state.chats[peerId] != nil else { throw .rejected(reason: "PEER_ID_INVALID") }
            let date = state.saveDraft(peerId: peerId, text: text)
            try state.loseAnswerAfterApplying()
            return date
        }
    }

    /// Stores a part of an upload (faults as for ``sendMessage``: storing a part again is harmless).
    public func saveFilePart(fileId: Int64, part: Int32, totalParts: Int32, bytes: [UInt8]) async throws(SyncTransportError) {
        try withState { (state: inout ServerState) throws(SyncTransportError) in
            try state.failRequestBeforeApplying()
            try state.saveFilePart(fileId: fileId, part: part, totalParts: totalParts, bytes: bytes)
            try state.loseAnswerAfterApplying()
        }
    }

    /// Sends an uploaded file as a document message, at most once per `mutation` (faults as for ``sendMessage``).
    public func sendMedia(peerId: PeerId, file: ApiInputFile, caption: String, randomId: Int64, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> ApiUpdates in
            try state.failRequestBeforeApplying()
            let answer = try state.sendMedia(peerId: peerId, file: file, caption: caption, randomId: randomId, mutation: mutation)
            try state.loseAnswerAfterApplying()
            return answer
        }
    }

    /// Forwards messages, at most once per `mutation` (faults as for ``sendMessage``).
    public func forwardMessages(fromPeerId: PeerId, ids: [Int32], toPeerId: PeerId, randomIds: [Int64], mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        try withState { (state: inout ServerState) throws(SyncTransportError) -> ApiUpdates in
            try state.failRequestBeforeApplying()
            let answer = try state.forwardMessages(fromPeerId: fromPeerId, ids: ids, toPeerId: toPeerId, randomIds: randomIds, mutation: mutation)
            try state.loseAnswerAfterApplying()
            return answer
        }
    }

    /// A new push connection: the previous stream finishes (its held pushes are lost), the new one starts with
    /// `.newSession` and receives every later push until the fault layer or the next `connect()` ends it.
    public func connect() async -> AsyncStream<SyncPushEvent> {
        withState { $0.openConnection() }
    }
}
