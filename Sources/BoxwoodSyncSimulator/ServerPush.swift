import BoxwoodSync

/// The formats events are pushed in, the merging of seq events into `updatesCombined`, and the push connection.
extension ServerState {
    /// Opens a new push connection (ending the previous one); its first event is `.newSession`.
    mutating func openConnection() -> AsyncStream<SyncPushEvent> {
        closeConnection()
        let (stream, continuation) = AsyncStream.makeStream(of: SyncPushEvent.self, bufferingPolicy: .unbounded)
        continuation.yield(.newSession)
        connection = continuation
        return stream
    }

    /// Pushes a new user or group message: a text-only one mostly in the short format, otherwise as a batch.
    mutating func pushNewMessage(_ message: ApiMessage, pts: Int32) {
        // The short forms carry text only (as Telegram's do not carry media): a message with content goes in full.
        let short = trafficRandom.chance(0.8) && message.content == ApiMessageContent()
        switch message.peerId.namespace {
        case SyncNamespaces.user where short:
            push(.updateShortMessage(id: message.id, userId: message.peerId, text: message.text, outgoing: message.outgoing,
                                     pts: pts, ptsCount: 1, date: message.date))
        case SyncNamespaces.group where short:
            push(.updateShortChatMessage(id: message.id, fromId: message.fromId, chatId: message.peerId, text: message.text,
                                         outgoing: message.outgoing, pts: pts, ptsCount: 1, date: message.date))
        default:
            pushBatch([.newMessage(message, pts: pts, ptsCount: 1)], date: message.date)
        }
    }

    /// Pushes one update either as `updateShort` or as a batch with its users and chats (seq 0).
    mutating func pushSingle(_ update: ApiUpdate, date: Int32) {
        if trafficRandom.chance(0.4) {
            push(.updateShort(update: update, date: date))
        } else {
            pushBatch([update], date: date)
        }
    }

    /// Pushes updates as an unordered batch (seq 0) with the users and chats they reference.
    mutating func pushBatch(_ updates: [ApiUpdate], date: Int32) {
        let (users, chats) = usersAndChats(referencedBy: updates)
        push(.updates(updates: updates, users: users, chats: chats, date: date, seq: 0))
    }

    /// Pushes a seq event: alone as `updates(seq:)`, or merged with the next one or two seq events into one
    /// `updatesCombined` (sent when complete, or before any other push).
    mutating func pushSeqEvent(_ update: ApiUpdate, seq: Int32, date: Int32) {
        if var pending = pendingCombinedPush {
            pending.updates.append(update)
            pending.seq = seq
            pending.date = date
            if pending.updates.count >= pending.target {
                pendingCombinedPush = nil
                deliver(combinedPush(pending))
            } else {
                pendingCombinedPush = pending
            }
            return
        }
        if trafficRandom.chance(0.3) {
            pendingCombinedPush = PendingCombinedPush(updates: [update], seqStart: seq, seq: seq, date: date,
                                                      target: trafficRandom.int(in: 2...3))
            return
        }
        let (users, chats) = usersAndChats(referencedBy: [update])
        deliver(.updates(updates: [update], users: users, chats: chats, date: date, seq: seq))
    }

    /// Sends the seq events waiting to be merged, if any.
    mutating func flushCombinedPush() {
        guard let pending = pendingCombinedPush else { return }
        pendingCombinedPush = nil
        deliver(combinedPush(pending))
    }

    /// Sends a push, after any seq events waiting to be merged (so seq events stay consecutive).
    private mutating func push(_ updates: ApiUpdates) {
        flushCombinedPush()
        deliver(updates)
    }

    private func combinedPush(_ pending: PendingCombinedPush) -> ApiUpdates {
        let (users, chats) = usersAndChats(referencedBy: pending.updates)
        if pending.updates.count == 1 {
            return .updates(updates: pending.updates, users: users, chats: chats, date: pending.date, seq: pending.seq)
        }
        return .updatesCombined(updates: pending.updates, users: users, chats: chats, date: pending.date,
                                seqStart: pending.seqStart, seq: pending.seq)
    }
}
