import BoxwoodSync
import Boxwood

/// What one entry of the account's event log records.
enum AccountLogEvent {
    /// An event of the common box (pts count 1).
    case pts(ApiUpdate)
    /// A secret-chat message (qts).
    case qts(ApiEncryptedMessage)
    /// A seq-ordered event (user name, notify settings, chat title).
    case seq(ApiUpdate)
    /// Something happened in the channel; the difference reports it as `channelTooLong`.
    case channelActivity(PeerId)
}

/// One entry of the account's event log, with the cursor after it.
struct AccountLogEntry {
    let date: Int32
    let event: AccountLogEvent
    let ptsAfter: Int32
    let qtsAfter: Int32
    let seqAfter: Int32
}

/// One pts event of a channel's log.
struct ChannelLogEntry {
    let date: Int32
    let update: ApiUpdate
    /// The channel's pts after the event.
    let pts: Int32
}

extension ServerState {
    /// Advances pts by one and logs the event `makeUpdate` builds for the new pts.
    mutating func recordPtsEvent(date: Int32, _ makeUpdate: (Int32) -> ApiUpdate) -> ApiUpdate {
        pts += 1
        let update = makeUpdate(pts)
        appendAccountLog(date: date, event: .pts(update))
        return update
    }

    /// Advances qts by one and logs the secret-chat message.
    mutating func recordQtsEvent(date: Int32, message: ApiEncryptedMessage) -> ApiUpdate {
        qts += 1
        appendAccountLog(date: date, event: .qts(message))
        return .newEncryptedMessage(message, qts: qts)
    }

    /// Advances seq by one and logs the event; returns the new seq.
    mutating func recordSeqEvent(date: Int32, _ update: ApiUpdate) -> Int32 {
        seq += 1
        appendAccountLog(date: date, event: .seq(update))
        return seq
    }

    /// Advances the channel's pts by one, logs the event `makeUpdate` builds for the new pts in the channel's log,
    /// and marks channel activity in the account log.
    mutating func recordChannelEvent(channelId: PeerId, date: Int32, _ makeUpdate: (Int32) -> ApiUpdate) -> ApiUpdate {
        let newPts = (channelPts[channelId] ?? 0) + 1
        channelPts[channelId] = newPts
        let update = makeUpdate(newPts)
        channelLogs[channelId, default: []].append(ChannelLogEntry(date: date, update: update, pts: newPts))
        appendAccountLog(date: date, event: .channelActivity(channelId))
        return update
    }

    private mutating func appendAccountLog(date: Int32, event: AccountLogEvent) {
        accountLog.append(AccountLogEntry(date: date, event: event, ptsAfter: pts, qtsAfter: qts, seqAfter: seq))
    }
}
