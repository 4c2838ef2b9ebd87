import Boxwood
import BoxwoodPlatform
import BoxwoodSync
import Foundation

/// The parent side of the process transport (see WireProtocol.swift): serves one child process's requests from a
/// ``SimulatedServer``, forwards the server's pushes to it and sends it commands.
///
/// `input` is the child's stdout, `output` its stdin. Messages from the child are handled in order by one task:
/// each request is answered by the server (faults included) and the answer written back; `connect` opens a new
/// server connection (`server.connect()`, which ends the previous one) and a task forwards its pushes, then
/// `pushEnd`. The child may die at any moment: end of file or a failed write (EPIPE — call
/// `ProcessSignals.ignoreBrokenPipe()` once in the parent) ends the host quietly; commands waiting for a reply get nil,
/// push forwarding stops. The server's connection stays open until the next child connects, like a server that
/// has not noticed yet.
public final class PipeServerHost: @unchecked Sendable {
    public let server: SimulatedServer
    private let channel: LineChannel<ChildMessage, ParentMessage>
    private let lock = NSLock()
    private var nextCommandId: Int64 = 1
    private var waitingCommands: [Int64: CheckedContinuation<ChildReply?, Never>] = [:]
    private var closed = false
    private var finished = false
    private var closeWaiters: [CheckedContinuation<Void, Never>] = []
    private var forwarders: [Task<Void, Never>] = []
    private var handler: Task<Void, Never>?
    private var served: [PipeRequestKind: Int] = [:]
    private var pushesForwarded = 0
    private let incoming: AsyncStream<ChildMessage>
    private let incomingContinuation: AsyncStream<ChildMessage>.Continuation
    private let onAnswer: (@Sendable (PipeRequestKind) -> Void)?

    /// A host for the child whose stdout is `input` and stdin is `output`; it owns both from now on and closes each
    /// once, when the child has gone (whoever spawned the child must not close them). `onAnswer` is called after
    /// each answer was queued for writing (tests use it to kill the child at chosen moments).
    public init(server: SimulatedServer, input: consuming OwnedDescriptor, output: consuming OwnedDescriptor,
                onAnswer: (@Sendable (PipeRequestKind) -> Void)? = nil) {
        self.server = server
        self.onAnswer = onAnswer
        channel = LineChannel(input: input, output: output, label: "host")
        (incoming, incomingContinuation) = AsyncStream.makeStream(of: ChildMessage.self, bufferingPolicy: .unbounded)
    }

    /// Starts reading the child's messages.
    public func start() {
        let incoming = incoming
        let task = Task { [self] in
            for await message in incoming { await handle(message) }
            finish()
        }
        lock.lock()
        handler = task
        lock.unlock()
        let continuation = incomingContinuation
        channel.start(onMessage: { continuation.yield($0) }, onEnd: { [weak self] in self?.childGone() })
    }

    /// Whether the child has gone (end of file or a failed write).
    public var isClosed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return closed
    }

    /// Returns once the child has gone and everything it wrote was handled.
    public func waitUntilClosed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if finished {
                lock.unlock()
                continuation.resume()
            } else {
                closeWaiters.append(continuation)
                lock.unlock()
            }
        }
    }

    /// Drops the child as a server that goes away would: the pipe to it is closed, so the child reads end of file and
    /// gives up; the host finishes once the child's side has closed too (``waitUntilClosed()``).
    public func disconnect() {
        channel.end()
    }

    /// Requests answered so far, by kind.
    public var requestsServed: [PipeRequestKind: Int] {
        lock.lock()
        defer { lock.unlock() }
        return served
    }

    /// Pushes written to the child so far.
    public var pushCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return pushesForwarded
    }

    /// Sends `command` and waits for the child's reply; nil when the child is gone before replying.
    public func command(_ command: ChildCommand) async -> ChildReply? {
        await withCheckedContinuation { (continuation: CheckedContinuation<ChildReply?, Never>) in
            lock.lock()
            if closed {
                lock.unlock()
                continuation.resume(returning: nil)
                return
            }
            let id = nextCommandId
            nextCommandId += 1
            waitingCommands[id] = continuation
            lock.unlock()
            if !channel.send(.command(id: id, command: command)) {
                lock.lock()
                let waiting = waitingCommands.removeValue(forKey: id)
                lock.unlock()
                waiting?.resume(returning: nil)
            }
        }
    }

    // MARK: Serving

    private func handle(_ message: ChildMessage) async {
        switch message {
        case let .request(id, call):
            guard !isClosed else { return }
            let result = await answer(call)
            channel.send(.answer(id: id, result: result))
            lock.withLock { served[call.kind, default: 0] += 1 }
            onAnswer?(call.kind)
        case let .connect(connection):
            guard !isClosed else { return }
            let stream = await server.connect()
            let forwarder = Task { [self] in
                for await event in stream {
                    guard !isClosed, channel.send(.push(connection: connection, event: event)) else { return }
                    lock.withLock { pushesForwarded += 1 }
                }
                channel.send(.pushEnd(connection: connection))
            }
            let keep = lock.withLock {
                if !closed { forwarders.append(forwarder) }
                return !closed
            }
            if !keep { forwarder.cancel() }
        case let .reply(command, reply):
            let waiting = lock.withLock { waitingCommands.removeValue(forKey: command) }
            waiting?.resume(returning: reply)
        }
    }

    private func answer(_ call: WireRequest) async -> WireAnswer {
        do throws(SyncTransportError) {
            switch call {
            case .getState:
                return .state(try await server.getState())
            case let .getDifference(pts, qts, date, limit):
                return .difference(try await server.getDifference(pts: pts, qts: qts, date: date, ptsTotalLimit: limit))
            case let .getChannelDifference(channelId, pts, limit):
                return .channelDifference(try await server.getChannelDifference(channelId: channelId, pts: pts, limit: limit))
            case let .getDialogs(offset, limit):
                return .dialogs(try await server.getDialogs(offset: offset, limit: limit))
            case let .getPeerDialogs(peers):
                return .dialogs(try await server.getPeerDialogs(peers: peers))
            case let .getHistory(peerId, offsetId, addOffset, limit, maxId, minId):
                return .history(try await server.getHistory(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit,
                                                            maxId: maxId, minId: minId))
            case let .sendMessage(peerId, text, randomId, mutation):
                return .updates(try await server.sendMessage(peerId: peerId, text: text, randomId: randomId, mutation: mutation))
            case let .readHistory(peerId, maxId, mutation):
                return .affected(try await server.readHistory(peerId: peerId, maxId: maxId, mutation: mutation))
            case let .editMessage(peerId, id, text, mutation):
                return .updates(try await server.editMessage(peerId: peerId, id: id, text: text, mutation: mutation))
            case let .deleteMessages(peerId, ids, revoke, mutation):
                return .affected(try await server.deleteMessages(peerId: peerId, ids: ids, revoke: revoke, mutation: mutation))
            case let .sendReaction(peerId, id, emoji, mutation):
                return .updates(try await server.sendReaction(peerId: peerId, id: id, emoji: emoji, mutation: mutation))
            case let .searchHistory(peerId, filter, offsetId, addOffset, limit, maxId, minId):
                return .history(try await server.searchHistory(peerId: peerId, filter: filter, offsetId: offsetId, addOffset: addOffset,
                                                               limit: limit, maxId: maxId, minId: minId))
            case let .getUnreadMentions(peerId, offsetId, addOffset, limit, maxId, minId):
                return .history(try await server.getUnreadMentions(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit,
                                                                   maxId: maxId, minId: minId))
            case let .readMentions(peerId, maxId, mutation):
                return .affected(try await server.readMentions(peerId: peerId, maxId: maxId, mutation: mutation))
            case let .readMessageContents(peerId, ids, mutation):
                return .affected(try await server.readMessageContents(peerId: peerId, ids: ids, mutation: mutation))
            case let .saveDraft(peerId, text):
                return .date(try await server.saveDraft(peerId: peerId, text: text))
            case let .saveFilePart(fileId, part, totalParts, bytes):
                try await server.saveFilePart(fileId: fileId, part: part, totalParts: totalParts, bytes: bytes)
                return .done
            case let .sendMedia(peerId, file, caption, randomId, mutation):
                return .updates(try await server.sendMedia(peerId: peerId, file: file, caption: caption, randomId: randomId, mutation: mutation))
            case let .forwardMessages(fromPeerId, ids, toPeerId, randomIds, mutation):
                return .updates(try await server.forwardMessages(fromPeerId: fromPeerId, ids: ids, toPeerId: toPeerId, randomIds: randomIds,
                                                                 mutation: mutation))
            }
        } catch {
            return .failure(error)
        }
    }

    /// The child is gone: no more requests are served or pushes forwarded; the handler still delivers the
    /// replies the child wrote before it went, then ``finish()`` runs.
    private func childGone() {
        lock.lock()
        closed = true
        let tasks = forwarders
        forwarders = []
        lock.unlock()
        incomingContinuation.finish()
        for task in tasks { task.cancel() }
    }

    /// Every message of the child was handled: commands still waiting get nil, waiters of the close resume.
    private func finish() {
        lock.lock()
        closed = true
        finished = true
        let commands = waitingCommands
        waitingCommands = [:]
        let waiters = closeWaiters
        closeWaiters = []
        lock.unlock()
        for continuation in commands.values { continuation.resume(returning: nil) }
        for continuation in waiters { continuation.resume() }
    }
}
