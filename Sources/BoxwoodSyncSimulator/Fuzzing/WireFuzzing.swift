import Boxwood
import BoxwoodPlatform
import BoxwoodSync
import Foundation
import SystemPackage

/// Hooks for the `sync-wire` fuzzer in `Fuzz/` (issue 22): feeds bytes through the real line framing and JSON
/// decoding of the process transport (``LineChannel`` reading a pipe) and hands back what decoded. Nothing here is
/// used by the simulator itself.
///
/// Import with `@_spi(Fuzzing) import BoxwoodSyncSimulator`. Not a stable API.
@_spi(Fuzzing)
public enum WireFuzzing {
    /// Which side's reader the bytes are fed to.
    public enum Direction: Sendable {
        /// The child's reader: lines the parent writes (answers, pushes, commands).
        case parentToChild
        /// The parent's reader: lines a child writes (requests, connects, replies).
        case childToParent
    }

    /// The wire broke its contract on bytes it accepted (or the harness could not run): the fuzzer reports it.
    public struct Violation: Error, CustomStringConvertible {
        public let description: String
    }

    /// What the reader decoded from one stream.
    public struct Decoded: Sendable {
        /// Lines that decoded.
        public var messages = 0
        /// Updates carried by pushes and by `updates` answers, in stream order.
        public var updates: [ApiUpdates] = []
        /// Difference answers.
        public var differences: [ApiDifference] = []
        /// Channel-difference answers.
        public var channelDifferences: [ApiChannelDifference] = []
        /// Dialog answers.
        public var dialogs: [ApiDialogs] = []
        /// Messages of history answers.
        public var history: [ApiMessage] = []
        /// Pushes announcing a new session.
        public var newSessions = 0
    }

    /// Runs `bytes` through a ``LineChannel`` reading a pipe (the child's reader for `.parentToChild`, the parent's
    /// for `.childToParent`) until the channel ends, and returns what decoded. Every decoded message is encoded
    /// again and decoded back, and must come back equal (the wire is lossless for everything it accepts); a message
    /// that does not is thrown as a ``Violation``.
    public static func decode(_ bytes: UnsafeRawBufferPointer, direction: Direction) throws(Violation) -> Decoded {
        switch direction {
        case .parentToChild:
            let messages: [ParentMessage] = try run(bytes)
            var decoded = Decoded()
            for message in messages {
                try checkRoundTrip(message)
                decoded.messages += 1
                switch message {
                case let .push(_, event):
                    switch event {
                    case let .updates(updates): decoded.updates.append(updates)
                    case .newSession: decoded.newSessions += 1
                    }
                case let .answer(_, result):
                    switch result {
                    case let .updates(updates): decoded.updates.append(updates)
                    case let .difference(difference): decoded.differences.append(difference)
                    case let .channelDifference(difference): decoded.channelDifferences.append(difference)
                    case let .dialogs(dialogs): decoded.dialogs.append(dialogs)
                    case let .history(messages): decoded.history += messages
                    case .state, .affected, .failure, .done, .date: break
                    }
                case .pushEnd, .command:
                    break
                }
            }
            return decoded
        case .childToParent:
            let messages: [ChildMessage] = try run(bytes)
            var decoded = Decoded()
            for message in messages {
                try checkRoundTrip(message)
                decoded.messages += 1
            }
            return decoded
        }
    }

    /// One JSON line of each kind of message a parent writes, for seed corpora.
    public static func sampleParentLines() throws(Violation) -> [[UInt8]] {
        let peer = PeerId(namespace: PeerId.Namespace(0), id: PeerId.Id(7))
        let channel = PeerId(namespace: PeerId.Namespace(2), id: PeerId.Id(9))
        let group = PeerId(namespace: PeerId.Namespace(1), id: PeerId.Id(4))
        let secret = PeerId(namespace: PeerId.Namespace(3), id: PeerId.Id(5))
        let message = ApiMessage(id: 10, peerId: peer, fromId: peer, date: 100, text: "hi", outgoing: false)
        let channelMessage = ApiMessage(id: 3, peerId: channel, fromId: peer, date: 101, text: "c", outgoing: false, editVersion: 1, pinned: true)
        let user = ApiUser(id: peer, firstName: "A", lastName: "B", username: "ab")
        let chat = ApiChat(id: channel, title: "T")
        let state = ApiUpdatesState(pts: 5, qts: 1, date: 100, seq: 2)
        let updates: [ApiUpdate] = [
            .newMessage(message, pts: 6, ptsCount: 1),
            .editMessage(message, pts: 7, ptsCount: 1),
            .deleteMessages(ids: [1, 2], pts: 9, ptsCount: 2),
            .readHistoryInbox(peerId: peer, maxId: 10, pts: 10, ptsCount: 1),
            .readHistoryOutbox(peerId: peer, maxId: 10, pts: 11, ptsCount: 1),
            .pinnedMessages(peerId: group, ids: [10], pinned: true, pts: 12, ptsCount: 1),
            .newEncryptedMessage(ApiEncryptedMessage(chatId: secret, id: 1, randomId: 77, date: 100, text: "s"), qts: 2),
            .newChannelMessage(channelMessage, pts: 4, ptsCount: 1),
            .editChannelMessage(channelMessage, pts: 5, ptsCount: 1),
            .deleteChannelMessages(channelId: channel, ids: [3], pts: 6, ptsCount: 1),
            .readChannelInbox(channelId: channel, maxId: 3, pts: 7, ptsCount: 1),
            .channelTooLong(channelId: channel, pts: 30),
            .userStatus(userId: peer, status: .online(expires: 200)),
            .userStatus(userId: peer, status: .offline(wasOnline: 90)),
            .userName(userId: peer, firstName: "C", lastName: "D", username: nil),
            .notifySettings(peerId: peer, muteUntil: 1000),
            .chatTitle(chatId: channel, title: "U"),
            .messageId(id: 10, randomId: 77),
        ]
        let dialog = ApiDialog(peerId: channel, topMessage: 3, readInboxMaxId: 2, readOutboxMaxId: 1, unreadCount: 1, pts: 7, muteUntil: 0, pinned: true)
        let messages: [ParentMessage] = [
            .push(connection: 1, event: .updates(.updates(updates: updates, users: [user], chats: [chat], date: 100, seq: 3))),
            .push(connection: 1, event: .updates(.updatesCombined(updates: Array(updates.prefix(3)), users: [], chats: [], date: 100, seqStart: 3, seq: 4))),
            .push(connection: 1, event: .updates(.updateShort(update: .userStatus(userId: peer, status: .online(expires: 5)), date: 100))),
            .push(connection: 1, event: .updates(.updateShortMessage(id: 11, userId: peer, text: "x", outgoing: true, pts: 13, ptsCount: 1, date: 100))),
            .push(connection: 1, event: .updates(.updateShortChatMessage(id: 12, fromId: peer, chatId: group, text: "y", outgoing: false, pts: 14, ptsCount: 1, date: 100))),
            .push(connection: 1, event: .updates(.updateShortSentMessage(id: 13, pts: 15, ptsCount: 1, date: 100))),
            .push(connection: 1, event: .updates(.updatesTooLong)),
            .push(connection: 2, event: .newSession),
            .pushEnd(connection: 1),
            .answer(id: 1, result: .state(state)),
            .answer(id: 2, result: .difference(.difference(newMessages: [message], newEncryptedMessages: [], otherUpdates: Array(updates.suffix(6)), chats: [chat], users: [user], state: state))),
            .answer(id: 3, result: .difference(.slice(newMessages: [], newEncryptedMessages: [], otherUpdates: [], chats: [], users: [], intermediateState: state))),
            .answer(id: 4, result: .difference(.empty(date: 100, seq: 2))),
            .answer(id: 5, result: .difference(.tooLong(pts: 40))),
            .answer(id: 6, result: .channelDifference(.difference(final: true, pts: 8, newMessages: [channelMessage], otherUpdates: [], chats: [chat], users: []))),
            .answer(id: 7, result: .channelDifference(.tooLong(dialog: dialog, messages: [channelMessage], chats: [chat], users: [user]))),
            .answer(id: 8, result: .channelDifference(.empty(final: false, pts: 8))),
            .answer(id: 9, result: .dialogs(ApiDialogs(dialogs: [dialog], messages: [channelMessage], chats: [chat], users: [user], state: state,
                                                  nextOffset: ApiDialogsOffset(date: 100, id: 3, peerId: channel)))),
            .answer(id: 10, result: .history([message])),
            .answer(id: 11, result: .updates(.updateShortSentMessage(id: 14, pts: 16, ptsCount: 1, date: 101))),
            .answer(id: 12, result: .affected(ApiAffectedMessages(pts: 17, ptsCount: 1))),
            .answer(id: 13, result: .failure(.floodWait(seconds: 0.5))),
            .answer(id: 14, result: .failure(.disconnected)),
            .command(id: 1, command: .send(peerId: peer, text: "z", date: 100)),
            .command(id: 2, command: .read(peerId: peer, maxId: 10)),
            .command(id: 3, command: .quiesce),
            .command(id: 4, command: .statistics),
            .command(id: 5, command: .exit),
        ]
        return try messages.map { (message) throws(Violation) in try encodeLine(message) }
    }

    /// One JSON line of each kind of message a child writes, for seed corpora.
    public static func sampleChildLines() throws(Violation) -> [[UInt8]] {
        let peer = PeerId(namespace: PeerId.Namespace(0), id: PeerId.Id(7))
        let mutation = ClientMutationId(clientId: 1, sequence: 2)
        let messages: [ChildMessage] = [
            .request(id: 1, call: .getState),
            .request(id: 2, call: .getDifference(pts: 1, qts: 0, date: 5, ptsTotalLimit: 100)),
            .request(id: 3, call: .getChannelDifference(channelId: peer, pts: 3, limit: 10)),
            .request(id: 4, call: .getDialogs(offset: nil, limit: 100)),
            .request(id: 5, call: .getHistory(peerId: peer, offsetId: 0, addOffset: 0, limit: 20, maxId: 0, minId: 0)),
            .request(id: 8, call: .getDialogs(offset: ApiDialogsOffset(date: 100, id: 3, peerId: peer), limit: 100)),
            .request(id: 9, call: .getHistory(peerId: peer, offsetId: 40, addOffset: -10, limit: 20, maxId: 0, minId: 0)),
            .request(id: 10, call: .getPeerDialogs(peers: [peer])),
            .request(id: 6, call: .sendMessage(peerId: peer, text: "t", randomId: 9, mutation: mutation)),
            .request(id: 7, call: .readHistory(peerId: peer, maxId: 4, mutation: mutation)),
            .connect(connection: 1),
            .reply(command: 1, reply: .queued),
            .reply(command: 2, reply: .statistics(SyncStatistics())),
            .reply(command: 3, reply: .failed("e")),
        ]
        return try messages.map { (message) throws(Violation) in try encodeLine(message) }
    }

    /// One line as the wire writes it, keys sorted so that the seed files come out the same every time.
    private static func encodeLine<T: Encodable>(_ message: T) throws(Violation) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(message) else { throw Violation(description: "unencodable sample \(message)") }
        return [UInt8](data) + [UInt8(ascii: "\n")]
    }

    /// Encodes `message` as the sender does and decodes it back as the receiver does: a lossy wire would make the
    /// two processes disagree about what was sent.
    private static func checkRoundTrip<T: Codable & Equatable>(_ message: T) throws(Violation) {
        guard let data = try? JSONEncoder().encode(message) else {
            throw Violation(description: "a decoded wire message does not encode again: \(message)")
        }
        guard let again = try? JSONDecoder().decode(T.self, from: data) else {
            throw Violation(description: "a decoded wire message does not decode after encoding: \(String(decoding: data, as: UTF8.self))")
        }
        guard again == message else {
            throw Violation(description: "a wire message changed in an encode/decode round trip: \(message) became \(again)")
        }
    }

    /// Feeds `bytes` to a channel over a pipe and collects the messages it decodes until it ends.
    private static func run<Incoming: Decodable & Sendable>(_ bytes: UnsafeRawBufferPointer) throws(Violation) -> [Incoming] {
        let collected = Collected<Incoming>()
        let ended = DispatchSemaphore(value: 0)
        func makePipe() throws(Violation) -> PipeDescriptors {
            do { return try PipeDescriptors() } catch { throw Violation(description: "cannot make a pipe: \(error)") }
        }
        let pipe = try makePipe()
        let sink = try makePipe()
        let channel = LineChannel<Incoming, NothingSent>(input: pipe.readEnd, output: sink.writeEnd, label: "fuzz")
        let writeEnd = pipe.writeEnd
        // Nothing is ever sent on the channel's output: the other end of that pipe closes right away.
        _ = try? sink.readEnd.close()
        channel.start(onMessage: { collected.append($0) }, onEnd: { ended.signal() })
        if let base = bytes.baseAddress, bytes.count > 0 {
            _ = try? writeEnd.descriptor.writeAll(UnsafeRawBufferPointer(start: base, count: bytes.count))
        }
        _ = try? writeEnd.close()
        ended.wait()
        channel.flush()
        return collected.items
    }

    /// The channel's outgoing type when nothing is sent.
    private struct NothingSent: Encodable, Sendable {}

    private final class Collected<T: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var storage: [T] = []
        func append(_ item: T) { lock.lock(); storage.append(item); lock.unlock() }
        var items: [T] { lock.lock(); defer { lock.unlock() }; return storage }
    }
}
