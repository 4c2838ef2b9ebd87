import Boxwood
import BoxwoodSync
import Foundation

/// Why a ``SyntheticAccountServer`` cannot be built.
public enum SyntheticAccountError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No chat, no message per chat, or more messages than ids and dates fit in `Int32`.
    case unsupportedSize(chats: Int, messagesPerChat: Int)

    public var description: String {
        switch self {
        case let .unsupportedSize(chats, messages):
            return "a synthetic account of \(chats) chats × \(messages) messages is not supported (each at least 1, ids and dates within Int32)"
        }
    }
}

/// A large, static account computed on demand (the large-account test): `chats` chats of `messagesPerChat`
/// messages each, none of them held in memory — every dialog page and history window is computed from the chat's
/// index when asked. Nine chats in ten are private chats, the rest alternate between basic groups and channels;
/// the first ``pinnedChats`` are pinned.
///
/// Message `k` (0 is the oldest) of chat `i` is dated `baseDate + k * chats + i`, so the newest messages of all chats
/// interleave in time and chat `chats - 1` is the most recent. Private chats and groups share the account-wide id
/// sequence (message `k` of the `c`-th of them has id `k * commonChats + c + 1`); a channel numbers its own
/// messages `1...messagesPerChat`. Every fourth chat has its two newest messages unread.
///
/// Nothing happens on this server: its cursor never moves, a difference from it is empty, and every mutation is
/// refused (`METHOD_NOT_SUPPORTED`). It answers from any thread.
public final class SyntheticAccountServer: SyncTransport, @unchecked Sendable {
    /// The account's own user.
    public let accountPeerId = PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(1))
    /// How many chats the account has.
    public let chats: Int
    /// How many messages each chat has.
    public let messagesPerChat: Int
    /// How many chats (the first ones) are pinned.
    public let pinnedChats: Int
    /// The date of every chat's oldest message.
    public static let baseDate: Int32 = 1_000_000

    /// Private chats and groups (they share the account-wide ids).
    private let commonChats: Int
    /// The index of each common-box chat among them (-1 for channels).
    private let commonIndex: [Int32]
    private let lock = NSLock()
    private var connection: AsyncStream<SyncPushEvent>.Continuation?

    /// An account of `chats` chats with `messagesPerChat` messages each.
    ///
    /// - Throws: ``SyntheticAccountError/unsupportedSize(chats:messagesPerChat:)`` unless both are at least 1 and
    ///   the ids and dates fit in `Int32` (up to about 2 billion messages in all).
    public init(chats: Int, messagesPerChat: Int, pinnedChats: Int = 3) throws(SyntheticAccountError) {
        guard chats >= 1, messagesPerChat >= 1,
              chats.multipliedReportingOverflow(by: messagesPerChat).partialValue <= Int(Int32.max) - Int(Self.baseDate),
              !chats.multipliedReportingOverflow(by: messagesPerChat).overflow else {
            throw .unsupportedSize(chats: chats, messagesPerChat: messagesPerChat)
        }
        self.chats = chats
        self.messagesPerChat = messagesPerChat
        self.pinnedChats = min(max(0, pinnedChats), chats)
        var next: Int32 = 0
        var indices: [Int32] = []
        indices.reserveCapacity(chats)
        for i in 0..<chats {
            if Self.kind(i) == SyncNamespaces.channel {
                indices.append(-1)
            } else {
                indices.append(next)
                next += 1
            }
        }
        commonIndex = indices
        commonChats = Int(next)
    }

    // MARK: The world

    /// The peer namespace of chat `i`: nine in ten private chats, then groups and channels in turn.
    private static func kind(_ i: Int) -> PeerId.Namespace {
        guard i % 10 == 9 else { return SyncNamespaces.user }
        return (i / 10) % 2 == 0 ? SyncNamespaces.group : SyncNamespaces.channel
    }

    /// The peer of chat `i`.
    public func peer(ofChat i: Int) -> PeerId {
        PeerId(namespace: Self.kind(i), id: PeerId.Id(Int64(10 + i)))
    }

    /// The chat of `peerId` (nil: not one of this account's).
    private func chatIndex(_ peerId: PeerId) -> Int? {
        let i = Int(peerId.id.rawValue) - 10
        guard i >= 0, i < chats, peer(ofChat: i) == peerId else { return nil }
        return i
    }

    /// The id of message `k` of chat `i`: `step * k + first`.
    private func idProgression(_ i: Int) -> (step: Int64, first: Int64) {
        commonIndex[i] < 0 ? (1, 1) : (Int64(commonChats), Int64(commonIndex[i]) + 1)
    }

    private func messageId(_ i: Int, _ k: Int) -> Int32 {
        let (step, first) = idProgression(i)
        return Int32(step * Int64(k) + first)
    }

    /// How many messages of chat `i` have an id at most `x`.
    private func count(_ i: Int, atMost x: Int64) -> Int {
        let (step, first) = idProgression(i)
        guard x >= first else { return 0 }
        return Int(min(Int64(messagesPerChat), (x - first) / step + 1))
    }

    /// The users who write in groups (the first private chats' users).
    private func groupAuthor(_ k: Int) -> PeerId {
        let users = (0..<min(chats, 20)).filter { Self.kind($0) == SyncNamespaces.user }
        return users.isEmpty ? accountPeerId : peer(ofChat: users[k % users.count])
    }

    private func isOutgoing(_ i: Int, _ k: Int) -> Bool {
        Self.kind(i) == SyncNamespaces.user && k % 3 == 0
    }

    private func message(_ i: Int, _ k: Int) -> ApiMessage {
        let chat = peer(ofChat: i)
        let outgoing = isOutgoing(i, k)
        let from: PeerId
        switch Self.kind(i) {
        case SyncNamespaces.user: from = outgoing ? accountPeerId : chat
        case SyncNamespaces.group: from = groupAuthor(k)
        default: from = chat
        }
        return ApiMessage(id: messageId(i, k), peerId: chat, fromId: from, date: Self.baseDate + Int32(k * chats + i),
                          text: "message \(k) of chat \(i)", outgoing: outgoing)
    }

    /// The position of chat `i` in the dialog list.
    private func position(_ i: Int) -> ApiDialogsOffset {
        let top = message(i, messagesPerChat - 1)
        return ApiDialogsOffset(date: top.date, id: top.id, peerId: top.peerId)
    }

    private func dialog(_ i: Int) -> ApiDialog {
        let top = messageId(i, messagesPerChat - 1)
        let unreadFrom = i % 4 == 0 ? max(0, messagesPerChat - 2) : messagesPerChat
        let unread = (unreadFrom..<messagesPerChat).filter { !isOutgoing(i, $0) }.count
        let readInbox = unreadFrom > 0 ? messageId(i, unreadFrom - 1) : 0
        return ApiDialog(peerId: peer(ofChat: i), topMessage: top, readInboxMaxId: readInbox, readOutboxMaxId: top,
                         unreadCount: Int32(unread), pts: Self.kind(i) == SyncNamespaces.channel ? Int32(messagesPerChat) : nil,
                         muteUntil: 0, pinned: i < pinnedChats)
    }

    /// The users and chats describing chats `indices` and their top messages.
    private func usersAndChats(_ indices: [Int]) -> (users: [ApiUser], chats: [ApiChat]) {
        var users: [PeerId: ApiUser] = [:]
        var titled: [ApiChat] = []
        func addUser(_ peer: PeerId) {
            guard peer != accountPeerId, users[peer] == nil else { return }
            users[peer] = ApiUser(id: peer, firstName: "User", lastName: "\(peer.id.rawValue)", username: nil)
        }
        for i in indices {
            let chat = peer(ofChat: i)
            if Self.kind(i) == SyncNamespaces.user {
                addUser(chat)
            } else {
                titled.append(ApiChat(id: chat, title: "Chat \(i)"))
            }
            if Self.kind(i) == SyncNamespaces.group { addUser(message(i, messagesPerChat - 1).fromId) }
        }
        return (users.sorted { $0.key < $1.key }.map(\.value), titled)
    }

    /// The account's cursor: one pts per common-box message; it never moves.
    public var state: ApiUpdatesState {
        ApiUpdatesState(pts: Int32(commonChats * messagesPerChat), qts: 0,
                        date: Self.baseDate + Int32(messagesPerChat * chats), seq: 0)
    }

    // MARK: SyncTransport

    public func getState() async throws(SyncTransportError) -> ApiUpdatesState { state }

    /// Empty from the current cursor; `tooLong` from any other (the server keeps no event log).
    public func getDifference(pts: Int32, qts: Int32, date: Int32, ptsTotalLimit: Int32) async throws(SyncTransportError) -> ApiDifference {
        let state = state
        return pts == state.pts && qts == state.qts ? .empty(date: state.date, seq: state.seq) : .tooLong(pts: state.pts)
    }

    /// Empty from the channel's pts; `tooLong` (the dialog and its top message) from any other.
    public func getChannelDifference(channelId: PeerId, pts: Int32, limit: Int32) async throws(SyncTransportError) -> ApiChannelDifference {
        guard let i = chatIndex(channelId), Self.kind(i) == SyncNamespaces.channel else { throw .rejected(reason: "CHANNEL_INVALID") }
        let entry = dialog(i)
        if pts == entry.pts { return .empty(final: true, pts: pts) }
        let described = usersAndChats([i])
        return .tooLong(dialog: entry, messages: [message(i, messagesPerChat - 1)], chats: described.chats, users: described.users)
    }

    /// The pinned chats (first page only), then the others by top message, newest first.
    public func getDialogs(offset: ApiDialogsOffset?, limit: Int32) async throws(SyncTransportError) -> ApiDialogs {
        let unpinned = (pinnedChats..<chats).map { (index: $0, position: position($0)) }.sorted { $0.position > $1.position }
        let below = offset.map { offset in unpinned.filter { $0.position < offset } } ?? unpinned
        let page = below.prefix(max(1, Int(limit)))
        let indices = (offset == nil ? Array(0..<pinnedChats) : []) + page.map(\.index)
        let described = usersAndChats(indices)
        return ApiDialogs(dialogs: indices.map(dialog), messages: indices.map { message($0, messagesPerChat - 1) },
                          chats: described.chats, users: described.users, state: state,
                          nextOffset: below.count > page.count ? page.last?.position : nil)
    }

    /// The dialogs of `peers` that are this account's chats.
    public func getPeerDialogs(peers: [PeerId]) async throws(SyncTransportError) -> ApiDialogs {
        var seen = Set<Int>()
        let indices = peers.compactMap(chatIndex).filter { seen.insert($0).inserted }
        let described = usersAndChats(indices)
        return ApiDialogs(dialogs: indices.map(dialog), messages: indices.map { message($0, messagesPerChat - 1) },
                          chats: described.chats, users: described.users, state: state)
    }

    /// A window of the chat's messages, newest first (see ``SyncTransport/getHistory(peerId:offsetId:addOffset:limit:maxId:minId:)``).
    public func getHistory(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        guard let i = chatIndex(peerId), limit > 0 else { return [] }
        // The messages with minId < id < maxId are k in lower..<upper; newest first, place j is k = upper - 1 - j.
        let lower = count(i, atMost: Int64(minId))
        let upper = maxId == 0 ? messagesPerChat : count(i, atMost: Int64(maxId) - 1)
        let total = max(0, upper - lower)
        let atOrAboveOffset = offsetId == 0 ? 0 : max(0, upper - max(lower, count(i, atMost: Int64(offsetId) - 1)))
        let start = max(0, min(total, atOrAboveOffset + Int(addOffset)))
        let end = min(total, start + Int(limit))
        return (start..<end).map { message(i, upper - 1 - $0) }
    }

    public func sendMessage(peerId: PeerId, text: String, randomId: Int64, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        throw .rejected(reason: "METHOD_NOT_SUPPORTED")
    }

    public func readHistory(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        throw .rejected(reason: "METHOD_NOT_SUPPORTED")
    }

    /// A push connection that only announces its session (nothing ever happens here); the previous one ends.
    public func connect() async -> AsyncStream<SyncPushEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncPushEvent.self)
        continuation.yield(.newSession)
        let previous = lock.withLock {
            let previous = connection
            connection = continuation
            return previous
        }
        previous?.finish()
        return stream
    }
}
