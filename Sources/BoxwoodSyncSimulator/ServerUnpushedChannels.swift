import BoxwoodSync

/// Channels whose updates the server does not push (``SimulatedServerConfiguration/unpushedChannels``).
extension ServerState {
    /// `updates` without the updates of unpushed channels; nil when nothing is left to push. Only channel updates
    /// are taken out (they carry no seq), so the seq events around them stay consecutive.
    func withoutUnpushedChannels(_ updates: ApiUpdates) -> ApiUpdates? {
        let hidden = unpushedChannels
        guard !hidden.isEmpty else { return updates }
        func pushed(_ update: ApiUpdate) -> Bool {
            guard let channel = update.channelPtsRange?.channelId else { return true }
            return !hidden.contains(channel)
        }
        switch updates {
        case let .updates(list, users, chats, date, seq):
            let kept = list.filter(pushed)
            if kept.isEmpty && seq == 0 { return nil }
            return .updates(updates: kept, users: users, chats: chats, date: date, seq: seq)
        case let .updatesCombined(list, users, chats, date, seqStart, seq):
            return .updatesCombined(updates: list.filter(pushed), users: users, chats: chats, date: date, seqStart: seqStart, seq: seq)
        case let .updateShort(update, _):
            return pushed(update) ? updates : nil
        case .updateShortMessage, .updateShortChatMessage, .updateShortSentMessage, .updatesTooLong:
            return updates
        }
    }
}
