import Boxwood

/// Pushed updates sorted by the counter that orders them (Telegram's `UpdateGroup`).
public enum UpdateGroup: Hashable, Sendable {
    /// Updates of the common message box, ordered by pts.
    case withPts(updates: [ApiUpdate], users: [ApiUser], chats: [ApiChat])
    /// Secret-chat updates, ordered by qts.
    case withQts(updates: [ApiUpdate], users: [ApiUser], chats: [ApiChat])
    /// Channel updates, each ordered by its channel's pts.
    case withChannelPts(updates: [ApiUpdate], users: [ApiUser], chats: [ApiChat])
    /// Other updates of a batch that covers seq `start...end`.
    case withSeq(updates: [ApiUpdate], start: Int32, end: Int32, date: Int32, users: [ApiUser], chats: [ApiChat])
    /// Other updates without seq: applied as they come.
    case withDate(updates: [ApiUpdate], date: Int32, users: [ApiUser], chats: [ApiChat])
    /// The server said the client is too far behind (or a new session began): poll the difference.
    case reset
    /// A pts step whose content the client stored itself (the answer to sending or reading).
    case updatePts(pts: Int32, ptsCount: Int32)

    /// Splits what the server pushed into groups, expanding the short formats into full updates.
    public static func groups(from updates: ApiUpdates, accountPeerId: PeerId) -> [UpdateGroup] {
        switch updates {
        case let .updates(list, users, chats, date, seq):
            return split(list, users: users, chats: chats, date: date, seqRange: seq == 0 ? nil : (seq, seq))
        case let .updatesCombined(list, users, chats, date, seqStart, seq):
            return split(list, users: users, chats: chats, date: date, seqRange: seqStart == 0 ? nil : (seqStart, seq))
        case let .updateShort(update, date):
            return split([update], users: [], chats: [], date: date, seqRange: nil)
        case let .updateShortMessage(id, userId, text, outgoing, pts, ptsCount, date):
            let message = ApiMessage(id: id, peerId: userId, fromId: outgoing ? accountPeerId : userId, date: date, text: text, outgoing: outgoing)
            return [.withPts(updates: [.newMessage(message, pts: pts, ptsCount: ptsCount)], users: [], chats: [])]
        case let .updateShortChatMessage(id, fromId, chatId, text, outgoing, pts, ptsCount, date):
            let message = ApiMessage(id: id, peerId: chatId, fromId: outgoing ? accountPeerId : fromId, date: date, text: text, outgoing: outgoing)
            return [.withPts(updates: [.newMessage(message, pts: pts, ptsCount: ptsCount)], users: [], chats: [])]
        case let .updateShortSentMessage(_, pts, ptsCount, _):
            return [.updatePts(pts: pts, ptsCount: ptsCount)]
        case .updatesTooLong:
            return [.reset]
        }
    }

    private static func split(_ updates: [ApiUpdate], users: [ApiUser], chats: [ApiChat], date: Int32,
                              seqRange: (Int32, Int32)?) -> [UpdateGroup] {
        var pts: [ApiUpdate] = []
        var qts: [ApiUpdate] = []
        var channel: [ApiUpdate] = []
        var other: [ApiUpdate] = []
        for update in updates {
            if update.ptsRange != nil {
                pts.append(update)
            } else if update.qts != nil {
                qts.append(update)
            } else if update.channelPtsRange != nil {
                channel.append(update)
            } else {
                other.append(update)
            }
        }
        var groups: [UpdateGroup] = []
        if !pts.isEmpty { groups.append(.withPts(updates: pts, users: users, chats: chats)) }
        if !qts.isEmpty { groups.append(.withQts(updates: qts, users: users, chats: chats)) }
        if !channel.isEmpty { groups.append(.withChannelPts(updates: channel, users: users, chats: chats)) }
        if let (start, end) = seqRange {
            groups.append(.withSeq(updates: other, start: start, end: end, date: date, users: users, chats: chats))
        } else if !other.isEmpty {
            groups.append(.withDate(updates: other, date: date, users: users, chats: chats))
        }
        return groups
    }
}
