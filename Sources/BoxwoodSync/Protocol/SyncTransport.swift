import Boxwood

/// Why a request failed; every one of them is retried by the caller with backoff.
public enum SyncTransportError: Error, Hashable, Sendable, Codable {
    /// The connection dropped before the answer arrived (the request may or may not have been applied).
    case disconnected
    /// No answer in time (the request may or may not have been applied).
    case timeout
    /// The server asks to wait.
    case floodWait(seconds: Double)
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
    /// Every chat with its newest message, read state and (channels) pts.
    func getDialogs() async throws(SyncTransportError) -> ApiDialogs
    /// Messages of `peerId` with `minId < id < maxId` (`maxId == 0`: no upper bound), newest first, at most `limit`.
    func getHistory(peerId: PeerId, maxId: Int32, minId: Int32, limit: Int32) async throws(SyncTransportError) -> [ApiMessage]
    /// Sends a message; applied at most once per `mutation` (a repeat returns the first answer).
    func sendMessage(peerId: PeerId, text: String, randomId: Int64, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates
    /// Marks incoming messages of `peerId` read up to `maxId`; applied at most once per `mutation`.
    func readHistory(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages
    /// The pushes of the current connection (a new stream each call; it ends when the connection drops).
    func connect() async -> AsyncStream<SyncPushEvent>
}
