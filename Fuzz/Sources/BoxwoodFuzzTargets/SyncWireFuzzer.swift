import Boxwood
@_spi(Fuzzing) import BoxwoodSync
@_spi(Fuzzing) import BoxwoodSyncSimulator

/// `sync-wire`: hostile server traffic. The input is a byte stream on the process transport's pipe, decoded by the
/// real ``LineChannel`` (line framing, JSON); every decoded message must survive an encode/decode round trip.
/// The updates it carries (pushes and `updates` answers) are split into groups and reduced by the
/// `UpdateReducer` against a cursor, which must never move a counter backwards nor apply again what it held back.
///
/// First byte: `0x00` builds the updates from the following bytes instead (structured mode: counters near the
/// cursor, small peer sets, so the reducer's ordering and gap logic is reached without JSON); `0x01` feeds the rest
/// to the parent's reader (child → parent lines); anything else is a parent → child stream (the whole input).
enum SyncWireFuzzer {
    static let target = FuzzTarget(
        name: "sync-wire",
        summary: "pipe wire protocol (LineChannel framing + JSON, round trip) and the UpdateReducer on the decoded updates",
        run: { fuzzOne($0) },
        seeds: { seeds() },
        // Each input runs a reader thread, whose teardown overlaps the next input: libFuzzer's per-input leak check
        // would then run a full scan on every input (10x slower) and report memory the exiting thread still holds.
        // Leaks are still reported at exit (LeakSanitizer), e.g. when replaying a corpus. The channel logs each
        // undecodable line to stderr: closed (fd 2) while fuzzing; libFuzzer's own reports still appear.
        libFuzzerOptions: ["-max_len=16384", "-dict=Dictionaries/sync-wire.dict", "-close_fd_mask=2", "-detect_leaks=0"]
    )

    static let account = PeerId(namespace: PeerId.Namespace(0), id: PeerId.Id(1))
    static let defaultState = SyncAccountState(pts: 5, qts: 1, date: 100, seq: 2)
    static let defaultChannel = PeerId(namespace: PeerId.Namespace(2), id: PeerId.Id(9))

    static func fuzzOne(_ bytes: UnsafeRawBufferPointer) {
        guard let first = bytes.first else { return }
        switch first {
        case 0x00:
            var input = FuzzInput(UnsafeRawBufferPointer(rebasing: bytes.dropFirst()))
            let (state, channels, updates) = structured(&input)
            reduce(updates, state: state, channelPts: channels)
        case 0x01:
            _ = decodeOrReport(UnsafeRawBufferPointer(rebasing: bytes.dropFirst()), direction: .childToParent)
        default:
            let decoded = decodeOrReport(bytes, direction: .parentToChild)
            var channels: [PeerId: Int32] = [defaultChannel: 3]
            for dialogs in decoded.dialogs {
                for dialog in dialogs.dialogs { if let pts = dialog.pts { channels[dialog.peerId] = pts } }
            }
            reduce(decoded.updates, state: defaultState, channelPts: channels)
        }
    }

    /// Splits the updates into groups, reduces them, and checks the reducer's invariants.
    static func reduce(_ updates: [ApiUpdates], state: SyncAccountState, channelPts: [PeerId: Int32]) {
        let groups = updates.flatMap { UpdateGroup.groups(from: $0, accountPeerId: account) }
        guard !groups.isEmpty else { return }
        let outcome = ReducerFuzzing.reduce(groups, state: state, channelPts: channelPts, realtime: true)
        precondition(outcome.state.pts >= state.pts && outcome.state.qts >= state.qts && outcome.state.seq >= state.seq,
                     "the reducer moved a counter backwards: \(state) became \(outcome.state)")
        precondition(outcome.state.date == state.date, "the reducer moved the date cursor (only a difference may)")
        for (channel, pts) in channelPts {
            precondition((outcome.channelPts[channel] ?? pts) >= pts, "the reducer moved channel \(channel)'s pts backwards")
        }
        guard !outcome.heldBack.isEmpty else { return }
        // What was held behind a gap is still behind it: re-examined against the new cursor, nothing applies.
        let again = ReducerFuzzing.reduce(outcome.heldBack, state: outcome.state, channelPts: outcome.channelPts, realtime: true)
        precondition(again.applied == 0 && again.duplicates == 0,
                     "held-back updates applied (\(again.applied)) or were duplicates (\(again.duplicates)) when re-examined unchanged")
        precondition(again.state == outcome.state, "re-examining held-back updates moved the cursor")
    }

    // MARK: Structured mode

    static func structured(_ input: inout FuzzInput) -> (SyncAccountState, [PeerId: Int32], [ApiUpdates]) {
        let state = SyncAccountState(pts: counter(&input, near: 5), qts: counter(&input, near: 1), date: 100, seq: counter(&input, near: 2))
        var channels: [PeerId: Int32] = [:]
        for _ in 0..<Int(input.u8() % 4) { channels[peer(&input)] = counter(&input, near: 3) }
        var batches: [ApiUpdates] = []
        while !input.isAtEnd && batches.count < 32 {
            let date = Int32(100)
            switch input.u8() % 7 {
            case 0:
                batches.append(.updates(updates: updateList(&input, state), users: users(&input), chats: chats(&input), date: date,
                                        seq: counter(&input, near: state.seq &+ 1)))
            case 1:
                let start = counter(&input, near: state.seq &+ 1)
                batches.append(.updatesCombined(updates: updateList(&input, state), users: users(&input), chats: [], date: date,
                                                seqStart: start, seq: counter(&input, near: start)))
            case 2:
                batches.append(.updateShort(update: update(&input, state), date: date))
            case 3:
                batches.append(.updateShortMessage(id: input.i32(), userId: peer(&input), text: "m", outgoing: input.u8() & 1 != 0,
                                                   pts: counter(&input, near: state.pts &+ 1), ptsCount: counter(&input, near: 1), date: date))
            case 4:
                batches.append(.updateShortChatMessage(id: input.i32(), fromId: peer(&input), chatId: peer(&input), text: "c", outgoing: false,
                                                       pts: counter(&input, near: state.pts &+ 1), ptsCount: counter(&input, near: 1), date: date))
            case 5:
                batches.append(.updateShortSentMessage(id: input.i32(), pts: counter(&input, near: state.pts &+ 1),
                                                       ptsCount: counter(&input, near: 1), date: date))
            default:
                batches.append(.updatesTooLong)
            }
        }
        return (state, channels, batches)
    }

    /// A counter near `base` (most bytes), or any Int32 (high bit set: the next four bytes).
    static func counter(_ input: inout FuzzInput, near base: Int32) -> Int32 {
        let b = input.u8()
        if b & 0x80 != 0 { return input.i32() }
        return base &+ Int32(b & 0x0f) &- 4
    }

    /// One of a few peers per namespace (users, groups, channels, secret chats), or an extreme id.
    static func peer(_ input: inout FuzzInput) -> PeerId {
        let b = input.u8()
        let namespace = PeerId.Namespace(Int32(b & 3))
        switch b >> 2 {
        case 63: return PeerId(namespace: namespace, id: PeerId.Id.max)
        case 62: return PeerId(namespace: namespace, id: PeerId.Id.min)
        case let n: return PeerId(namespace: namespace, id: PeerId.Id(Int64(n % 4) + 7))
        }
    }

    static func message(_ input: inout FuzzInput, channel: Bool) -> ApiMessage {
        var peerId = peer(&input)
        if channel { peerId = PeerId(namespace: PeerId.Namespace(2), id: peerId.id) }
        return ApiMessage(id: input.i32(), peerId: peerId, fromId: peer(&input), date: 100, text: "t", outgoing: input.u8() & 1 != 0,
                          editVersion: Int32(input.u8() % 3), pinned: false, randomId: 0)
    }

    static func updateList(_ input: inout FuzzInput, _ state: SyncAccountState) -> [ApiUpdate] {
        (0..<Int(input.u8() % 6)).map { _ in update(&input, state) }
    }

    static func users(_ input: inout FuzzInput) -> [ApiUser] {
        (0..<Int(input.u8() % 3)).map { _ in ApiUser(id: peer(&input), firstName: "f", lastName: "l", username: nil) }
    }

    static func chats(_ input: inout FuzzInput) -> [ApiChat] {
        (0..<Int(input.u8() % 3)).map { _ in ApiChat(id: peer(&input), title: "t") }
    }

    static func update(_ input: inout FuzzInput, _ state: SyncAccountState) -> ApiUpdate {
        let pts = state.pts &+ 1
        switch input.u8() % 18 {
        case 0: return .newMessage(message(&input, channel: false), pts: counter(&input, near: pts), ptsCount: counter(&input, near: 1))
        case 1: return .editMessage(message(&input, channel: false), pts: counter(&input, near: pts), ptsCount: counter(&input, near: 1))
        case 2: return .deleteMessages(ids: [input.i32()], pts: counter(&input, near: pts), ptsCount: counter(&input, near: 1))
        case 3: return .readHistoryInbox(peerId: peer(&input), maxId: input.i32(), pts: counter(&input, near: pts), ptsCount: counter(&input, near: 1))
        case 4: return .readHistoryOutbox(peerId: peer(&input), maxId: input.i32(), pts: counter(&input, near: pts), ptsCount: counter(&input, near: 1))
        case 5: return .pinnedMessages(peerId: peer(&input), ids: [input.i32()], pinned: true, pts: counter(&input, near: pts), ptsCount: counter(&input, near: 1))
        case 6:
            let chat = PeerId(namespace: PeerId.Namespace(3), id: peer(&input).id)
            return .newEncryptedMessage(ApiEncryptedMessage(chatId: chat, id: input.i32(), randomId: 1, date: 100, text: "e"),
                                        qts: counter(&input, near: state.qts &+ 1))
        case 7: return .newChannelMessage(message(&input, channel: true), pts: counter(&input, near: 4), ptsCount: counter(&input, near: 1))
        case 8: return .editChannelMessage(message(&input, channel: true), pts: counter(&input, near: 4), ptsCount: counter(&input, near: 1))
        case 9: return .deleteChannelMessages(channelId: peer(&input), ids: [input.i32()], pts: counter(&input, near: 4), ptsCount: counter(&input, near: 1))
        case 10: return .readChannelInbox(channelId: peer(&input), maxId: input.i32(), pts: counter(&input, near: 4), ptsCount: counter(&input, near: 1))
        case 11: return .channelTooLong(channelId: peer(&input), pts: input.u8() & 1 != 0 ? input.i32() : nil)
        case 12: return .userStatus(userId: peer(&input), status: input.u8() & 1 != 0 ? .online(expires: input.i32()) : .offline(wasOnline: input.i32()))
        case 13: return .userName(userId: peer(&input), firstName: "a", lastName: "b", username: nil)
        case 14: return .notifySettings(peerId: peer(&input), muteUntil: input.i32())
        case 15: return .chatTitle(chatId: peer(&input), title: "t")
        default: return .messageId(id: input.i32(), randomId: 5)
        }
    }

    /// The wire's decode; a contract it breaks is a finding, reported by crashing (libFuzzer's report).
    private static func decodeOrReport(_ bytes: UnsafeRawBufferPointer, direction: WireFuzzing.Direction) -> WireFuzzing.Decoded {
        do { return try WireFuzzing.decode(bytes, direction: direction) } catch { preconditionFailure("\(error)") }
    }

    // MARK: Seeds

    static func seeds() -> [(name: String, bytes: [UInt8])] {
        var result: [(String, [UInt8])] = []
        let parent: [[UInt8]], child: [[UInt8]]
        do {
            parent = try WireFuzzing.sampleParentLines()
            child = try WireFuzzing.sampleChildLines()
        } catch {
            preconditionFailure("the wire's own samples do not encode: \(error)")
        }
        result.append(("seed-parent-all", parent.flatMap { $0 }))
        // Pushes alone, and a few small streams (a push, then an answer) so that mutations stay near valid lines.
        result.append(("seed-parent-pushes", parent.prefix(8).flatMap { $0 }))
        for (i, line) in parent.prefix(3).enumerated() { result.append(("seed-parent-\(i)", line)) }
        result.append(("seed-child-all", [0x01] + child.flatMap { $0 }))
        // Structured: the default cursor, one channel, a batch of each format.
        var structured: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x01, 0x0a, 0x07]
        for format in 0..<7 { structured += [UInt8(format), 0x03, 0x00, 0x05, 0x05, 0x07, 0x05, 0x05, 0x01, 0x05, 0x05] }
        result.append(("seed-structured", structured))
        return result
    }
}

