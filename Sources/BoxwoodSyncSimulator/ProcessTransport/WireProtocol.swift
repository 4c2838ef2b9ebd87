import Boxwood
import BoxwoodPlatform
import BoxwoodSync
import Foundation
import SystemPackage

// The wire protocol between a sync client in a child process and the simulated server in its parent.
//
// Two byte streams: the child writes to its stdout, the parent writes to the child's stdin. Each message is one
// line: a JSON object (JSONEncoder's compact output, which never contains a raw newline) followed by "\n".
//
//     child → parent  ChildMessage
//       request(id, call)      a SyncTransport call; `id` is unique per child process
//       connect(connection)    open a push connection (the child numbers them; the newest one is current)
//       reply(command, reply)  the answer to a parent's command
//     parent → child  ParentMessage
//       answer(id, result)        the answer to request `id` (a value, or a SyncTransportError)
//       push(connection, event)   a push of connection `connection`
//       pushEnd(connection)       the server ended that connection
//       command(id, command)      send / read / edit / react / quiesce / exit
//
// Either side may vanish at any moment (the parent SIGKILLs children): end of file or a failed write ends the
// channel; the child then fails every request in flight with `.disconnected`, the parent forgets the child.

/// What the parent asks the child process to do.
public enum ChildCommand: Codable, Hashable, Sendable {
    /// Queue sending `text` to `peerId` (the local copy is dated `date`); replied `queued` once
    /// `outbound.sendMessage` returned, i.e. the message and its outbound entry are committed.
    case send(peerId: PeerId, text: String, date: Int32)
    /// Mark `peerId` read up to `maxId`; replied `readQueued` once `outbound.markRead` returned.
    case read(peerId: PeerId, maxId: Int32)
    /// Queue editing cloud message `id` of `peerId` to `text` (`outbound.editMessage`); replied `actionQueued`, or
    /// `notStored` when the child does not have the message.
    case edit(peerId: PeerId, id: Int32, text: String)
    /// Queue setting the account's reaction on cloud message `id` (`outbound.setReaction`); replied as `edit`.
    case react(peerId: PeerId, id: Int32, emoji: String?)
    /// Send the file at `path` (on the shared file system) as a document message (answered `.queued`).
    case sendFile(peerId: PeerId, path: String, fileName: String, mimeType: String, caption: String)
    /// Forward cloud messages `ids` of `fromPeerId` to `toPeerId` (answered `.queued`, or `.notStored`).
    case forward(fromPeerId: PeerId, ids: [Int32], toPeerId: PeerId)
    /// Settle: `waitUntilQuiet`, a difference poll, `waitUntilQuiet`; replied `quiet`.
    case quiesce
    /// Stop the client cleanly (the database is closed), reply `stopped` and exit with status 0.
    case exit
    /// Reply with the state manager's statistics (and the hole filler's counts folded in).
    case statistics
}

/// The child's answer to a ``ChildCommand``.
public enum ChildReply: Codable, Hashable, Sendable {
    case queued
    case readQueued
    /// An edit or a reaction is committed locally and queued.
    case actionQueued
    /// The message of an edit or a reaction is not stored in the child (it lies in a hole): nothing was done.
    case notStored
    case quiet
    case stopped
    case statistics(SyncStatistics)
    /// The command failed in the child (the description of the error).
    case failed(String)
}

/// The kinds of requests a child makes (for hooks and counts).
public enum PipeRequestKind: String, Codable, CaseIterable, Hashable, Sendable {
    case getState, getDifference, getChannelDifference, getDialogs, getPeerDialogs, getHistory, sendMessage, readHistory
    case editMessage, deleteMessages, sendReaction
    case saveFilePart, sendMedia, forwardMessages, searchHistory, saveDraft
    case getUnreadMentions, readMentions, readMessageContents
}

/// A ``SyncTransport`` call.
enum WireRequest: Codable, Hashable, Sendable {
    case getState
    case getDifference(pts: Int32, qts: Int32, date: Int32, ptsTotalLimit: Int32)
    case getChannelDifference(channelId: PeerId, pts: Int32, limit: Int32)
    case getDialogs(offset: ApiDialogsOffset?, limit: Int32)
    case getPeerDialogs(peers: [PeerId])
    case getHistory(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32)
    case sendMessage(peerId: PeerId, text: String, randomId: Int64, mutation: ClientMutationId)
    case readHistory(peerId: PeerId, maxId: Int32, mutation: ClientMutationId)
    case editMessage(peerId: PeerId, id: Int32, text: String, mutation: ClientMutationId)
    case deleteMessages(peerId: PeerId, ids: [Int32], revoke: Bool, mutation: ClientMutationId)
    case sendReaction(peerId: PeerId, id: Int32, emoji: String?, mutation: ClientMutationId)
    case saveFilePart(fileId: Int64, part: Int32, totalParts: Int32, bytes: [UInt8])
    case saveDraft(peerId: PeerId, text: String)
    case searchHistory(peerId: PeerId, filter: ApiSearchFilter, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32)
    case sendMedia(peerId: PeerId, file: ApiInputFile, caption: String, randomId: Int64, mutation: ClientMutationId)
    case forwardMessages(fromPeerId: PeerId, ids: [Int32], toPeerId: PeerId, randomIds: [Int64], mutation: ClientMutationId)
    case getUnreadMentions(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32)
    case readMentions(peerId: PeerId, maxId: Int32, mutation: ClientMutationId)
    case readMessageContents(peerId: PeerId, ids: [Int32], mutation: ClientMutationId)

    var kind: PipeRequestKind {
        switch self {
        case .getState: return .getState
        case .getDifference: return .getDifference
        case .getChannelDifference: return .getChannelDifference
        case .getDialogs: return .getDialogs
        case .getPeerDialogs: return .getPeerDialogs
        case .getHistory: return .getHistory
        case .sendMessage: return .sendMessage
        case .readHistory: return .readHistory
        case .editMessage: return .editMessage
        case .deleteMessages: return .deleteMessages
        case .sendReaction: return .sendReaction
        case .saveFilePart: return .saveFilePart
        case .saveDraft: return .saveDraft
        case .searchHistory: return .searchHistory
        case .sendMedia: return .sendMedia
        case .forwardMessages: return .forwardMessages
        case .getUnreadMentions: return .getUnreadMentions
        case .readMentions: return .readMentions
        case .readMessageContents: return .readMessageContents
        }
    }
}

/// The result of a ``WireRequest``.
enum WireAnswer: Codable, Hashable, Sendable {
    case state(ApiUpdatesState)
    case difference(ApiDifference)
    case channelDifference(ApiChannelDifference)
    case dialogs(ApiDialogs)
    case history([ApiMessage])
    case updates(ApiUpdates)
    case affected(ApiAffectedMessages)
    /// A request that answers nothing but success (`saveFilePart`).
    case done
    /// A date (`saveDraft`).
    case date(Int32)
    case failure(SyncTransportError)
}

/// A line the child writes.
enum ChildMessage: Codable, Hashable, Sendable {
    case request(id: Int64, call: WireRequest)
    case connect(connection: Int64)
    case reply(command: Int64, reply: ChildReply)
}

/// A line the parent writes.
enum ParentMessage: Codable, Hashable, Sendable {
    case answer(id: Int64, result: WireAnswer)
    case push(connection: Int64, event: SyncPushEvent)
    case pushEnd(connection: Int64)
    case command(id: Int64, command: ChildCommand)
}

/// Writes to stderr (the child's stdout is reserved for the protocol); a failed write is dropped (there is nowhere
/// else to report it).
func logToStandardError(_ text: String) {
    let bytes = Array((text.hasSuffix("\n") ? text : text + "\n").utf8)
    _ = try? bytes.withUnsafeBytes { try FileDescriptor.standardError.writeAll($0) }
}

/// One line-framed JSON channel over two file descriptors it owns: a thread reads `input` (blocking reads) and hands
/// each decoded line to `onMessage`; writes go through a serial queue to `output`. The channel ends once — at end of
/// file or a read error on `input`, or a failed write on `output` — and then calls `onEnd`; later sends are dropped.
///
/// Each descriptor has one owner and is closed once: `input` by the reader thread when it stops (nothing else reads
/// or closes it), `output` on the write queue when the channel ends (nothing else writes or closes it). Nobody else
/// holds them: they are moved in (``OwnedDescriptor``), so a process that spawned the peer cannot close them too —
/// the double close that made a restarted demo client lose its stdin (issue 28).
final class LineChannel<Incoming: Decodable & Sendable, Outgoing: Encodable & Sendable>: @unchecked Sendable {
    /// Touched only by the reader thread once it started (taken and closed when it stops).
    private var input: OwnedDescriptor?
    /// Touched only on `writeQueue` once the channel exists (taken and closed when the channel ends).
    private var output: OwnedDescriptor?
    private let label: String
    private let writeQueue: DispatchQueue
    private let lock = NSLock()
    private var ended = false
    private var onEnd: (@Sendable () -> Void)?

    init(input: consuming OwnedDescriptor, output: consuming OwnedDescriptor, label: String) {
        self.input = consume input
        self.output = consume output
        self.label = label
        writeQueue = DispatchQueue(label: "boxwood.pipe.\(label).write")
    }

    /// Whether the channel is still up.
    var isOpen: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !ended
    }

    /// Starts the reader thread (once).
    func start(onMessage: @escaping @Sendable (Incoming) -> Void, onEnd: @escaping @Sendable () -> Void) {
        lock.lock()
        self.onEnd = onEnd
        lock.unlock()
        let label = label
        let thread = Thread { [self] in
            readLines(label: label, onMessage: onMessage)
            if let owned = input.take() {
                do {
                    try owned.close()
                } catch {
                    logToStandardError("[\(label)] closing the input failed: \(error)")
                }
            }
            end()
        }
        thread.name = "boxwood.pipe.\(label).read"
        thread.start()
    }

    /// Reads and decodes lines until end of file, a read error or an undecodable line (reader thread only).
    private func readLines(label: String, onMessage: @Sendable (Incoming) -> Void) {
        guard let descriptor = input?.descriptor else { return }
        let decoder = JSONDecoder()
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n: Int
            do {
                n = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0, retryOnInterrupt: true) }
            } catch {
                return
            }
            if n == 0 { return }
            pending += chunk[..<n]
            var start = 0
            while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[start..<newline]
                start = newline + 1
                if line.isEmpty { continue }
                do {
                    onMessage(try decoder.decode(Incoming.self, from: Data(line)))
                } catch {
                    logToStandardError("[\(label)] undecodable line (\(error)): \(String(decoding: line.prefix(200), as: UTF8.self))")
                    return
                }
            }
            pending.removeSubrange(..<start)
        }
    }

    /// Queues `message` for writing; false when the channel has ended.
    @discardableResult
    func send(_ message: Outgoing) -> Bool {
        guard isOpen else { return false }
        guard var encoded = try? JSONEncoder().encode(message) else {
            logToStandardError("[\(label)] unencodable message \(message)")
            return false
        }
        encoded.append(UInt8(ascii: "\n"))
        let bytes = encoded
        writeQueue.async { [self] in
            if !writeAll(bytes) { end() }
        }
        return true
    }

    /// Waits until every queued message was written (or dropped).
    func flush() {
        writeQueue.sync {}
    }

    /// Writes `data` to `output` (write queue only); false once `output` was closed or a write failed.
    private func writeAll(_ data: Data) -> Bool {
        guard let descriptor = output?.descriptor else { return false }
        do {
            _ = try data.withUnsafeBytes { try descriptor.writeAll($0) }
            return true
        } catch {
            return false
        }
    }

    /// Ends the channel (once): later sends are dropped, `output` is closed after the writes queued so far.
    func end() {
        lock.lock()
        if ended {
            lock.unlock()
            return
        }
        ended = true
        let onEnd = onEnd
        self.onEnd = nil
        lock.unlock()
        let label = label
        writeQueue.async { [self] in
            if let owned = output.take() {
                do {
                    try owned.close()
                } catch {
                    logToStandardError("[\(label)] closing the output failed: \(error)")
                }
            }
        }
        onEnd?()
    }
}
