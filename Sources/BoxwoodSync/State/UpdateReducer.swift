import Boxwood

/// What processing a set of update groups left to do.
struct ReduceOutcome: Sendable {
    /// Groups held back behind a gap (re-examined when more arrive, or after the gap wait).
    var heldBack: [UpdateGroup] = []
    /// The common box (pts, qts or seq) has a gap that is being held.
    var commonGap = false
    /// Channels with a gap held back.
    var channelGaps: Set<PeerId> = []
    /// Channels the server says must be fetched now (`channelTooLong`, unknown state).
    var channelsToFetch: Set<PeerId> = []
    /// The server asked for a difference poll.
    var reset = false
    /// Updates applied (for statistics).
    var applied = 0
    /// Updates skipped as already applied.
    var duplicates = 0
    /// Updates dropped because their counters are impossible (each also sets ``reset`` or adds its channel to
    /// ``channelsToFetch``, so the server's real data is fetched instead).
    var implausible: [ImplausibleCounter] = []
}

/// Turns update groups into mutations with Telegram's gap rules (`finalStateWithUpdateGroups`): pts and qts
/// updates first, each sorted by its counter; then each channel by its own pts; then seq-ordered groups; then
/// the unordered rest. Contiguous updates apply, old ones are skipped, and everything after a gap is held back.
///
/// Counters come from the wire: an update whose counters no server can send (``ImplausibleCounter``) is dropped
/// before ordering, and its box is treated as having a gap only the server can fill (the common box polls the
/// difference, a channel is fetched). Every ordering key and step is computed in Int64, so no Int32 value traps.
enum UpdateReducer {
    static func reduce(_ groups: [UpdateGroup], into state: inout SyncMutableState, source: SyncSource) -> ReduceOutcome {
        var outcome = ReduceOutcome()
        var ptsUpdates: [(update: ApiUpdate, pts: Int32, count: Int32)] = []
        var ptsSteps: [(pts: Int32, count: Int32)] = []
        var qtsUpdates: [(update: ApiUpdate, qts: Int32)] = []
        var channelUpdates: [(update: ApiUpdate, channelId: PeerId, pts: Int32, count: Int32)] = []
        var seqGroups: [(updates: [ApiUpdate], start: Int32, end: Int32, date: Int32)] = []
        var dateUpdates: [ApiUpdate] = []
        var users: [ApiUser] = []
        var chats: [ApiChat] = []
        for group in groups {
            switch group {
            case let .withPts(updates, groupUsers, groupChats), let .withQts(updates, groupUsers, groupChats),
                 let .withChannelPts(updates, groupUsers, groupChats):
                users += groupUsers; chats += groupChats
                // Each update is ordered by the counter it carries, which is what `UpdateGroup.split` grouped it by
                // (an update without one, in a group made by hand, applies as it comes).
                for update in updates {
                    if let range = update.ptsRange {
                        ptsUpdates.append((update, range.pts, range.count))
                    } else if let qts = update.qts {
                        qtsUpdates.append((update, qts))
                    } else if let range = update.channelPtsRange {
                        channelUpdates.append((update, range.channelId, range.pts, range.count))
                    } else {
                        dateUpdates.append(update)
                    }
                }
            case let .withSeq(updates, start, end, date, groupUsers, groupChats):
                users += groupUsers; chats += groupChats
                guard SequenceChecker.isPlausible(seqStart: start, seq: end) else {
                    outcome.implausible.append(.seq(start: start, end: end))
                    outcome.reset = true
                    continue
                }
                seqGroups.append((updates, start, end, date))
            case let .withDate(updates, _, groupUsers, groupChats):
                dateUpdates += updates; users += groupUsers; chats += groupChats
            case .reset:
                outcome.reset = true
            case let .updatePts(pts, count):
                guard SequenceChecker.isPlausible(value: pts, count: count) else {
                    outcome.implausible.append(.pts(pts: pts, count: count))
                    outcome.reset = true
                    continue
                }
                ptsSteps.append((pts, count))
            }
        }
        // Each group carries the users and chats of its batch, and a held-back group carries them again: keep
        // one of each, or re-examining held updates would grow these lists without bound.
        users = uniqueById(users, id: \.id)
        chats = uniqueById(chats, id: \.id)
        if !users.isEmpty { state.add(.mergeUsers(users, overwrite: false)) }
        if !chats.isEmpty { state.add(.mergeChats(chats, overwrite: false)) }

        // pts: updates with content and bare steps, in pts order (by where each starts, then where it ends).
        enum PtsItem { case update(ApiUpdate), step(Int32, Int32) }
        var ptsItems: [(pts: Int32, count: Int32, item: PtsItem)] = []
        for (update, pts, count) in ptsUpdates {
            guard SequenceChecker.isPlausible(value: pts, count: count) else {
                outcome.implausible.append(.pts(pts: pts, count: count))
                outcome.reset = true
                continue
            }
            ptsItems.append((pts, count, .update(update)))
        }
        ptsItems += ptsSteps.map { ($0.pts, $0.count, .step($0.pts, $0.count)) }
        ptsItems.sort { stepOrder($0.pts, $0.count) < stepOrder($1.pts, $1.count) }
        var heldPts: [ApiUpdate] = []
        var heldSteps: [UpdateGroup] = []
        for entry in ptsItems {
            let check = outcome.commonGap ? .gap : SequenceChecker.check(local: state.state.pts, value: entry.pts, count: entry.count)
            switch check {
            case .apply:
                if case let .update(update) = entry.item { applyCommon(update, to: &state, source: source) }
                state.state.pts = entry.pts
                outcome.applied += 1
            case .alreadyApplied:
                outcome.duplicates += 1
            case .gap:
                outcome.commonGap = true
                switch entry.item {
                case let .update(update): heldPts.append(update)
                case let .step(pts, count): heldSteps.append(.updatePts(pts: pts, ptsCount: count))
                }
            }
        }
        if !heldPts.isEmpty { outcome.heldBack.append(.withPts(updates: heldPts, users: users, chats: chats)) }
        outcome.heldBack += heldSteps

        // qts (always counts 1).
        var heldQts: [ApiUpdate] = []
        var qtsGap = false
        var plausibleQts: [(update: ApiUpdate, qts: Int32)] = []
        for entry in qtsUpdates {
            guard SequenceChecker.isPlausible(value: entry.qts, count: 1) else {
                outcome.implausible.append(.qts(entry.qts))
                outcome.reset = true
                continue
            }
            plausibleQts.append(entry)
        }
        for (update, qts) in plausibleQts.sorted(by: { $0.qts < $1.qts }) {
            let check = qtsGap ? .gap : SequenceChecker.check(local: state.state.qts, value: qts, count: 1)
            switch check {
            case .apply:
                applyCommon(update, to: &state, source: source)
                state.state.qts = qts
                outcome.applied += 1
            case .alreadyApplied:
                outcome.duplicates += 1
            case .gap:
                qtsGap = true
                heldQts.append(update)
            }
        }
        if qtsGap {
            outcome.commonGap = true
            outcome.heldBack.append(.withQts(updates: heldQts, users: users, chats: chats))
        }

        // Channels, each on its own pts.
        var heldChannel: [ApiUpdate] = []
        var plausibleChannel: [(update: ApiUpdate, channelId: PeerId, pts: Int32, count: Int32)] = []
        for entry in channelUpdates {
            guard SequenceChecker.isPlausible(value: entry.pts, count: entry.count) else {
                outcome.implausible.append(.channelPts(channelId: entry.channelId, pts: entry.pts, count: entry.count))
                outcome.channelsToFetch.insert(entry.channelId)
                continue
            }
            plausibleChannel.append(entry)
        }
        let byChannel = Dictionary(grouping: plausibleChannel, by: { $0.channelId })
        for (channelId, entries) in byChannel.sorted(by: { $0.key < $1.key }) {
            guard var local = state.channelPts[channelId] else {
                // No stored state for this channel: it must be fetched from its dialog.
                outcome.channelsToFetch.insert(channelId)
                continue
            }
            var gap = false
            let sorted = entries.sorted { stepOrder($0.pts, $0.count) < stepOrder($1.pts, $1.count) }
            for (update, _, pts, count) in sorted {
                let check = gap ? .gap : SequenceChecker.check(local: local, value: pts, count: count)
                switch check {
                case .apply:
                    applyChannel(update, to: &state, source: source)
                    local = pts
                    outcome.applied += 1
                case .alreadyApplied:
                    outcome.duplicates += 1
                case .gap:
                    gap = true
                    heldChannel.append(update)
                }
            }
            if local != state.channelPts[channelId] { state.setChannelPts(channelId, local) }
            if gap { outcome.channelGaps.insert(channelId) }
        }
        if !heldChannel.isEmpty { outcome.heldBack.append(.withChannelPts(updates: heldChannel, users: users, chats: chats)) }

        // seq-ordered groups.
        var seqGap = false
        for group in seqGroups.sorted(by: { $0.start < $1.start }) {
            let check = seqGap ? .gap : SequenceChecker.check(local: state.state.seq, seqStart: group.start, seq: group.end)
            switch check {
            case .apply:
                for update in group.updates { applyOther(update, to: &state, outcome: &outcome) }
                state.state.seq = group.end
                // `date` is not moved here: it is the cursor the server selects seq-box events and channel
                // activity by, so only a difference answer (which saw everything up to it) may advance it.
                outcome.applied += group.updates.count
            case .alreadyApplied:
                outcome.duplicates += 1
            case .gap:
                seqGap = true
                outcome.heldBack.append(.withSeq(updates: group.updates, start: group.start, end: group.end, date: group.date, users: users, chats: chats))
            }
        }
        if seqGap { outcome.commonGap = true }

        // Unordered updates apply now.
        for update in dateUpdates {
            applyOther(update, to: &state, outcome: &outcome)
            outcome.applied += 1
        }
        return outcome
    }

    /// The order of counter steps: by the value each starts from, then the value it ends at (in Int64: a step
    /// is `value − count`, which Int32 cannot always hold).
    static func stepOrder(_ value: Int32, _ count: Int32) -> (Int64, Int64) {
        (Int64(value) - Int64(count), Int64(value))
    }

    /// The first of each id, in order.
    static func uniqueById<T>(_ items: [T], id: (T) -> PeerId) -> [T] {
        var seen = Set<PeerId>()
        return items.filter { seen.insert(id($0)).inserted }
    }

    /// Applies one update of the common box or the secret-chat box.
    static func applyCommon(_ update: ApiUpdate, to state: inout SyncMutableState, source: SyncSource) {
        switch update {
        case let .newMessage(message, _, _):
            state.add(.addMessages([message], source))
        case let .editMessage(message, _, _):
            state.add(.editMessage(message))
        case let .deleteMessages(ids, _, _):
            state.add(.deleteMessagesWithGlobalIds(ids, source))
        case let .readHistoryInbox(peerId, maxId, _, _):
            state.add(.readInbox(MessageId(peerId: peerId, namespace: SyncNamespaces.cloudMessages, id: maxId), source))
        case let .readHistoryOutbox(peerId, maxId, _, _):
            state.add(.readOutbox(MessageId(peerId: peerId, namespace: SyncNamespaces.cloudMessages, id: maxId)))
        case let .pinnedMessages(peerId, ids, pinned, _, _):
            state.add(.setPinned(peerId: peerId, ids: ids, pinned: pinned))
        case let .readMessagesContents(ids, _, _):
            if !ids.isEmpty { state.add(.readMessageContentsWithGlobalIds(ids)) }
        case let .newEncryptedMessage(message, _):
            state.add(.addEncryptedMessages([message], source))
        default:
            break
        }
    }

    /// Applies one channel update (its pts already checked).
    static func applyChannel(_ update: ApiUpdate, to state: inout SyncMutableState, source: SyncSource) {
        switch update {
        case let .newChannelMessage(message, _, _):
            state.add(.addMessages([message], source))
        case let .editChannelMessage(message, _, _):
            state.add(.editMessage(message))
        case let .deleteChannelMessages(channelId, ids, _, _):
            state.add(.deleteMessages(ids.map { MessageId(peerId: channelId, namespace: SyncNamespaces.cloudMessages, id: $0) }, source))
        case let .readChannelInbox(channelId, maxId, _, _):
            state.add(.readInbox(MessageId(peerId: channelId, namespace: SyncNamespaces.cloudMessages, id: maxId), source))
        case let .readChannelMessagesContents(channelId, ids, _, _):
            if !ids.isEmpty { state.add(.readMessageContents(ids.map { MessageId(peerId: channelId, namespace: SyncNamespaces.cloudMessages, id: $0) })) }
        default:
            break
        }
    }

    /// Applies an update ordered by seq or not ordered at all.
    static func applyOther(_ update: ApiUpdate, to state: inout SyncMutableState, outcome: inout ReduceOutcome) {
        switch update {
        case let .userStatus(userId, status):
            state.add(.updatePresence(userId, status))
        case let .userName(userId, firstName, lastName, username):
            state.add(.mergeUsers([ApiUser(id: userId, firstName: firstName, lastName: lastName, username: username)], overwrite: true))
        case let .notifySettings(peerId, muteUntil):
            state.add(.updateNotifySettings(peerId, muteUntil: muteUntil))
        case let .chatTitle(chatId, title):
            state.add(.mergeChats([ApiChat(id: chatId, title: title)], overwrite: true))
        case let .draftMessage(peerId, draft):
            state.add(.updateDraft(peerId, draft))
        case let .channelTooLong(channelId, _):
            outcome.channelsToFetch.insert(channelId)
        default:
            break
        }
    }
}
