import Boxwood
import BoxwoodPlatform
import BoxwoodSync
import Foundation

/// A command from the parent, with the id its reply must carry.
public struct PipeCommand: Sendable {
    public let id: Int64
    public let command: ChildCommand
}

/// The client side of the process transport (see WireProtocol.swift): a ``SyncTransport`` whose requests and
/// pushes travel as JSON lines over two file descriptors — `output` (normally the child's stdout) carries
/// requests, push-connection openings and command replies; `input` (normally stdin) carries answers, pushes and
/// commands.
///
/// Requests carry an id and wait for the answer with that id. `connect()` opens a new numbered push connection
/// (the previous stream finishes); pushes of older connections are dropped. Once the parent is gone (end of
/// file or a failed write), every request in flight and every later request throws `.disconnected`, push
/// streams finish and ``commands`` ends.
public final class PipeTransport: SyncTransport, @unchecked Sendable {
    private let channel: LineChannel<ParentMessage, ChildMessage>
    private let lock = NSLock()
    private var nextId: Int64 = 1
    private var pending: [Int64: CheckedContinuation<WireAnswer, Never>] = [:]
    private var pushConnection: (id: Int64, continuation: AsyncStream<SyncPushEvent>.Continuation)?
    private var closed = false
    private let commandContinuation: AsyncStream<PipeCommand>.Continuation

    /// The parent's commands, in order; the stream ends when the parent is gone.
    public let commands: AsyncStream<PipeCommand>

    /// A transport reading `input` and writing `output` (it starts reading at once); it owns both from now on.
    public init(input: consuming OwnedDescriptor, output: consuming OwnedDescriptor) {
        channel = LineChannel(input: input, output: output, label: "child")
        (commands, commandContinuation) = AsyncStream.makeStream(of: PipeCommand.self, bufferingPolicy: .unbounded)
        channel.start(onMessage: { [weak self] message in self?.receive(message) },
                      onEnd: { [weak self] in self?.parentGone() })
    }

    /// Whether the parent is still there.
    public var isConnected: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !closed
    }

    /// Sends the reply to command `id`.
    public func reply(to id: Int64, _ reply: ChildReply) {
        channel.send(.reply(command: id, reply: reply))
    }

    /// Waits until everything sent so far was written.
    public func flush() {
        channel.flush()
    }

    // MARK: Incoming

    private func receive(_ message: ParentMessage) {
        switch message {
        case let .answer(id, result):
            lock.lock()
            let continuation = pending.removeValue(forKey: id)
            lock.unlock()
            continuation?.resume(returning: result)
        case let .push(connection, event):
            lock.lock()
            let current = pushConnection?.id == connection ? pushConnection?.continuation : nil
            lock.unlock()
            current?.yield(event)
        case let .pushEnd(connection):
            lock.lock()
            var ended: AsyncStream<SyncPushEvent>.Continuation?
            if pushConnection?.id == connection {
                ended = pushConnection?.continuation
                pushConnection = nil
            }
            lock.unlock()
            ended?.finish()
        case let .command(id, command):
            commandContinuation.yield(PipeCommand(id: id, command: command))
        }
    }

    private func parentGone() {
        lock.lock()
        closed = true
        let waiting = pending
        pending = [:]
        let push = pushConnection?.continuation
        pushConnection = nil
        lock.unlock()
        for continuation in waiting.values { continuation.resume(returning: .failure(.disconnected)) }
        push?.finish()
        commandContinuation.finish()
    }

    // MARK: Requests

    private func call(_ request: WireRequest) async -> WireAnswer {
        let id = lock.withLock {
            defer { nextId += 1 }
            return nextId
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WireAnswer, Never>) in
                lock.lock()
                if closed || Task.isCancelled {
                    lock.unlock()
                    continuation.resume(returning: .failure(.disconnected))
                    return
                }
                pending[id] = continuation
                lock.unlock()
                if !channel.send(.request(id: id, call: request)) { fail(id) }
            }
        } onCancel: {
            fail(id)
        }
    }

    /// Fails request `id` with `.disconnected` if it still waits.
    private func fail(_ id: Int64) {
        lock.lock()
        let continuation = pending.removeValue(forKey: id)
        lock.unlock()
        continuation?.resume(returning: .failure(.disconnected))
    }

    private func unexpected(_ answer: WireAnswer, for request: String) -> SyncTransportError {
        if case let .failure(error) = answer { return error }
        logToStandardError("[child] unexpected answer to \(request): \(answer)")
        return .disconnected
    }

    public func getState() async throws(SyncTransportError) -> ApiUpdatesState {
        let answer = await call(.getState)
        guard case let .state(state) = answer else { throw unexpected(answer, for: "getState") }
        return state
    }

    public func getDifference(pts: Int32, qts: Int32, date: Int32, ptsTotalLimit: Int32) async throws(SyncTransportError) -> ApiDifference {
        let answer = await call(.getDifference(pts: pts, qts: qts, date: date, ptsTotalLimit: ptsTotalLimit))
        guard case let .difference(difference) = answer else { throw unexpected(answer, for: "getDifference") }
        return difference
    }

    public func getChannelDifference(channelId: PeerId, pts: Int32, limit: Int32) async throws(SyncTransportError) -> ApiChannelDifference {
        let answer = await call(.getChannelDifference(channelId: channelId, pts: pts, limit: limit))
        guard case let .channelDifference(difference) = answer else { throw unexpected(answer, for: "getChannelDifference") }
        return difference
    }

    public func getDialogs(offset: ApiDialogsOffset?, limit: Int32) async throws(SyncTransportError) -> ApiDialogs {
        let answer = await call(.getDialogs(offset: offset, limit: limit))
        guard case let .dialogs(dialogs) = answer else { throw unexpected(answer, for: "getDialogs") }
        return dialogs
    }

    public func getPeerDialogs(peers: [PeerId]) async throws(SyncTransportError) -> ApiDialogs {
        let answer = await call(.getPeerDialogs(peers: peers))
        guard case let .dialogs(dialogs) = answer else { throw unexpected(answer, for: "getPeerDialogs") }
        return dialogs
    }

    public func getHistory(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        let answer = await call(.getHistory(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit, maxId: maxId, minId: minId))
        guard case let .history(messages) = answer else { throw unexpected(answer, for: "getHistory") }
        return messages
    }

    public func sendMessage(peerId: PeerId, text: String, randomId: Int64, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        let answer = await call(.sendMessage(peerId: peerId, text: text, randomId: randomId, mutation: mutation))
        guard case let .updates(updates) = answer else { throw unexpected(answer, for: "sendMessage") }
        return updates
    }

    public func readHistory(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        let answer = await call(.readHistory(peerId: peerId, maxId: maxId, mutation: mutation))
        guard case let .affected(affected) = answer else { throw unexpected(answer, for: "readHistory") }
        return affected
    }

    public func editMessage(peerId: PeerId, id: Int32, text: String, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        let answer = await call(.editMessage(peerId: peerId, id: id, text: text, mutation: mutation))
        guard case let .updates(updates) = answer else { throw unexpected(answer, for: "editMessage") }
        return updates
    }

    public func deleteMessages(peerId: PeerId, ids: [Int32], revoke: Bool, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        let answer = await call(.deleteMessages(peerId: peerId, ids: ids, revoke: revoke, mutation: mutation))
        guard case let .affected(affected) = answer else { throw unexpected(answer, for: "deleteMessages") }
        return affected
    }

    public func sendReaction(peerId: PeerId, id: Int32, emoji: String?, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        let answer = await call(.sendReaction(peerId: peerId, id: id, emoji: emoji, mutation: mutation))
        guard case let .updates(updates) = answer else { throw unexpected(answer, for: "sendReaction") }
        return updates
    }

    public func getUnreadMentions(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32,
                                  minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        let answer = await call(.getUnreadMentions(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit, maxId: maxId, minId: minId))
        guard case let .history(messages) = answer else { throw unexpected(answer, for: "getUnreadMentions") }
        return messages
    }

    public func readMentions(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        let answer = await call(.readMentions(peerId: peerId, maxId: maxId, mutation: mutation))
        guard case let .affected(affected) = answer else { throw unexpected(answer, for: "readMentions") }
        return affected
    }

    public func readMessageContents(peerId: PeerId, ids: [Int32], mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        let answer = await call(.readMessageContents(peerId: peerId, ids: ids, mutation: mutation))
        guard case let .affected(affected) = answer else { throw unexpected(answer, for: "readMessageContents") }
        return affected
    }

    public func searchHistory(peerId: PeerId, filter: ApiSearchFilter, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32,
                              minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        let answer = await call(.searchHistory(peerId: peerId, filter: filter, offsetId: offsetId, addOffset: addOffset, limit: limit,
                                               maxId: maxId, minId: minId))
        guard case let .history(messages) = answer else { throw unexpected(answer, for: "searchHistory") }
        return messages
    }

    public func saveDraft(peerId: PeerId, text: String) async throws(SyncTransportError) -> Int32 {
        let answer = await call(.saveDraft(peerId: peerId, text: text))
        guard case let .date(date) = answer else { throw unexpected(answer, for: "saveDraft") }
        return date
    }

    public func saveFilePart(fileId: Int64, part: Int32, totalParts: Int32, bytes: [UInt8]) async throws(SyncTransportError) {
        let answer = await call(.saveFilePart(fileId: fileId, part: part, totalParts: totalParts, bytes: bytes))
        guard case .done = answer else { throw unexpected(answer, for: "saveFilePart") }
    }

    public func sendMedia(peerId: PeerId, file: ApiInputFile, caption: String, randomId: Int64, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        let answer = await call(.sendMedia(peerId: peerId, file: file, caption: caption, randomId: randomId, mutation: mutation))
        guard case let .updates(updates) = answer else { throw unexpected(answer, for: "sendMedia") }
        return updates
    }

    public func forwardMessages(fromPeerId: PeerId, ids: [Int32], toPeerId: PeerId, randomIds: [Int64], mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        let answer = await call(.forwardMessages(fromPeerId: fromPeerId, ids: ids, toPeerId: toPeerId, randomIds: randomIds, mutation: mutation))
        guard case let .updates(updates) = answer else { throw unexpected(answer, for: "forwardMessages") }
        return updates
    }

    /// Opens a new push connection: the previous stream finishes; the parent connects to the server and forwards
    /// its pushes (starting with `.newSession`). When the parent is gone the stream is already finished.
    public func connect() async -> AsyncStream<SyncPushEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncPushEvent.self, bufferingPolicy: .unbounded)
        let (previous, id, isClosed) = lock.withLock {
            let previous = pushConnection?.continuation
            let id = nextId
            nextId += 1
            pushConnection = closed ? nil : (id, continuation)
            return (previous, id, closed)
        }
        previous?.finish()
        if isClosed || !channel.send(.connect(connection: id)) {
            continuation.finish()
        }
        return stream
    }
}
