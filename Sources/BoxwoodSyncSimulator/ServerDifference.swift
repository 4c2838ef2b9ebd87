import BoxwoodSync
import Boxwood

/// getDifference and getChannelDifference, answered from the logs.
extension ServerState {
    /// Everything the client at (`clientPts`, `clientQts`, `clientDate`) has not seen, in log order, at most
    /// ``SimulatedServerConfiguration/differenceSliceSize`` log entries per answer.
    ///
    /// `tooLong` when the client is more than `ptsTotalLimit` pts behind or its pts is older than the log. A qts
    /// older than the log is served from the log's start (secret-chat messages before it are lost).
    func difference(pts clientPts: Int32, qts clientQts: Int32, date clientDate: Int32, ptsTotalLimit: Int32) -> ApiDifference {
        if clientPts < logStart.pts || Int64(pts) - Int64(clientPts) > Int64(ptsTotalLimit) {
            return .tooLong(pts: pts)
        }
        func matches(_ entry: AccountLogEntry) -> Bool {
            switch entry.event {
            case let .pts(update): return update.ptsRange!.pts > clientPts
            case .qts: return entry.qtsAfter > clientQts
            case .seq, .channelActivity: return entry.date > clientDate
            }
        }
        // ptsAfter, qtsAfter and date never decrease along the log, so entries before this index cannot match.
        let start = partitionPoint(accountLog.count) { index in
            let entry = accountLog[index]
            return entry.ptsAfter > clientPts || entry.qtsAfter > clientQts || entry.date > clientDate
        }

        var newMessages: [ApiMessage] = []
        var newEncryptedMessages: [ApiEncryptedMessage] = []
        var otherUpdates: [ApiUpdate] = []
        var announcedChannels = Set<PeerId>()
        // A channel whose updates are not pushed (one the account has not joined) is not announced either.
        let unannounced = unpushedChannels
        var referenced: [PeerId] = []
        var taken = 0
        var lastTaken: AccountLogEntry?
        var moreRemain = false
        for entry in accountLog[start...] where matches(entry) {
            if taken == configuration.differenceSliceSize {
                moreRemain = true
                break
            }
            taken += 1
            lastTaken = entry
            switch entry.event {
            case let .pts(update):
                if case let .newMessage(message, _, _) = update {
                    newMessages.append(message)
                } else {
                    otherUpdates.append(update)
                }
                referenced += referencedPeers(update)
            case let .qts(message):
                newEncryptedMessages.append(message)
                referenced.append(message.chatId)
            case let .seq(update):
                otherUpdates.append(update)
                referenced += referencedPeers(update)
            case let .channelActivity(channelId):
                if !unannounced.contains(channelId), announcedChannels.insert(channelId).inserted {
                    otherUpdates.append(.channelTooLong(channelId: channelId, pts: nil))
                    referenced.append(channelId)
                }
            }
        }
        guard let lastTaken else { return .empty(date: clock, seq: seq) }
        let (users, chats) = usersAndChats(for: referenced)
        guard moreRemain else {
            return .difference(newMessages: newMessages, newEncryptedMessages: newEncryptedMessages,
                               otherUpdates: otherUpdates, chats: chats, users: users, state: currentState)
        }
        let date = max(clientDate, lastTaken.date)
        let intermediate = ApiUpdatesState(pts: max(clientPts, lastTaken.ptsAfter), qts: max(clientQts, lastTaken.qtsAfter),
                                           date: date, seq: seq(atDate: date))
        return .slice(newMessages: newMessages, newEncryptedMessages: newEncryptedMessages, otherUpdates: otherUpdates,
                      chats: chats, users: users, intermediateState: intermediate)
    }

    /// The channel's events after `clientPts`, at most `limit` per answer; `tooLong` (with the newest `limit`
    /// messages) when the client is more than ``SimulatedServerConfiguration/channelTooLongThreshold`` behind or
    /// older than the channel's log. An unknown channel answers `empty(final: true, pts: 0)`.
    func channelDifference(channelId: PeerId, pts clientPts: Int32, limit: Int32) -> ApiChannelDifference {
        guard let serverPts = channelPts[channelId], let startPts = channelLogStartPts[channelId] else {
            return .empty(final: true, pts: 0)
        }
        let limit = max(1, Int(limit))
        if clientPts < startPts || Int64(serverPts) - Int64(clientPts) > Int64(configuration.channelTooLongThreshold) {
            let messages = chats[channelId]!.messages.values.sorted { $0.id > $1.id }.prefix(limit)
            let (users, chats) = usersAndChats(for: [channelId] + messages.map(\.fromId))
            return .tooLong(dialog: dialog(for: channelId), messages: Array(messages), chats: chats, users: users)
        }
        guard clientPts < serverPts else { return .empty(final: true, pts: serverPts) }
        let log = channelLogs[channelId] ?? []
        let first = Int(clientPts - startPts)
        let entries = log[first..<min(log.count, first + limit)]
        var newMessages: [ApiMessage] = []
        var otherUpdates: [ApiUpdate] = []
        for entry in entries {
            if case let .newChannelMessage(message, _, _) = entry.update {
                newMessages.append(message)
            } else {
                otherUpdates.append(entry.update)
            }
        }
        let (users, chats) = usersAndChats(for: [channelId] + entries.flatMap { referencedPeers($0.update) })
        return .difference(final: entries.endIndex == log.count, pts: entries.last!.pts, newMessages: newMessages,
                           otherUpdates: otherUpdates, chats: chats, users: users)
    }

    /// The server's seq at `date`: after every logged event dated `date` or earlier.
    private func seq(atDate date: Int32) -> Int32 {
        let after = partitionPoint(accountLog.count) { accountLog[$0].date > date }
        return after == 0 ? logStart.seq : accountLog[after - 1].seqAfter
    }

    /// The first index in `0..<count` where `isAfter` holds (`isAfter` must be false, then true).
    private func partitionPoint(_ count: Int, _ isAfter: (Int) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if isAfter(middle) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
