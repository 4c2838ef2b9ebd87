import BoxwoodSync
import BoxwoodSyncSimulator
import Testing
import Boxwood

@Suite struct SimulatedServerTests {
    // MARK: Helpers

    private static func configuration(seed: UInt64 = 7, slice: Int = 100, channelThreshold: Int32 = 200,
                                      faults: SimulatedFaults = .none) -> SimulatedServerConfiguration {
        SimulatedServerConfiguration(seed: seed, differenceSliceSize: slice, channelTooLongThreshold: channelThreshold,
                                     faults: faults)
    }

    private static func mutation(_ sequence: Int64) -> ClientMutationId {
        ClientMutationId(clientId: 99, sequence: sequence)
    }

    /// Every event of already finished streams, in order.
    private static func drain(_ streams: [AsyncStream<SyncPushEvent>]) async -> [SyncPushEvent] {
        var events: [SyncPushEvent] = []
        for stream in streams {
            for await event in stream { events.append(event) }
        }
        return events
    }

    private static func pushes(_ events: [SyncPushEvent]) -> [ApiUpdates] {
        events.compactMap { if case let .updates(updates) = $0 { return updates } else { return nil } }
    }

    private static func firstPeer(_ namespace: PeerId.Namespace, in snapshot: SimulatedServerSnapshot) -> PeerId {
        snapshot.chatStates.keys.filter { $0.namespace == namespace }.sorted().first!
    }

    /// A fixed sequence of traffic and requests (errors from faults are recorded, not thrown).
    private static func scenario(_ server: SimulatedServer) async -> (snapshot: SimulatedServerSnapshot, events: [SyncPushEvent],
                                                                       answers: [String], stats: SimulatedFaultStats) {
        var streams: [AsyncStream<SyncPushEvent>] = []
        var answers: [String] = []
        let start = server.snapshot()
        let user = firstPeer(SyncNamespaces.user, in: start)
        let channel = firstPeer(SyncNamespaces.channel, in: start)
        for round in 0..<5 {
            streams.append(await server.connect())
            server.generate(events: 200)
            server.generateBurst(messages: 10)
            let state = server.snapshot().state
            do {
                let answer = try await server.getDifference(pts: state.pts - 30, qts: state.qts - 2, date: state.date - 60,
                                                            ptsTotalLimit: 1_000)
                answers.append("\(answer)")
            } catch { answers.append("\(error)") }
            do {
                let answer = try await server.sendMessage(peerId: round.isMultiple(of: 2) ? user : channel, text: "hi \(round)",
                                                          randomId: Int64(round + 1), mutation: mutation(Int64(round)))
                answers.append("\(answer)")
            } catch { answers.append("\(error)") }
            do {
                let answer = try await server.readHistory(peerId: user, maxId: 1_000_000, mutation: mutation(Int64(100 + round)))
                answers.append("\(answer)")
            } catch { answers.append("\(error)") }
            server.deliverDelayed()
        }
        streams.append(await server.connect())
        let snapshot = server.snapshot()
        _ = await server.connect()
        return (snapshot, await drain(streams), answers, server.faultStats)
    }

    // MARK: Determinism

    @Test func deterministicRandomIsSeededAndBounded() {
        var a = DeterministicRandom(seed: 5)
        var b = DeterministicRandom(seed: 5)
        var c = DeterministicRandom(seed: 6)
        let sequenceA = (0..<50).map { _ in a.next() }
        #expect(sequenceA == (0..<50).map { _ in b.next() })
        #expect(sequenceA != (0..<50).map { _ in c.next() })
        var d = DeterministicRandom(seed: 5, stream: 1)
        #expect(sequenceA != (0..<50).map { _ in d.next() })
        for _ in 0..<1_000 {
            let value = a.int(in: -3...4)
            #expect((-3...4).contains(value))
            #expect(a.unit() < 1)
        }
        var shuffled = Array(0..<20)
        a.shuffle(&shuffled)
        #expect(shuffled.sorted() == Array(0..<20))
    }

    @Test func sameSeedAndCallsGiveIdenticalSnapshotsAndPushes() async {
        let first = await Self.scenario(SimulatedServer(configuration: Self.configuration(seed: 42, faults: .realistic)))
        let second = await Self.scenario(SimulatedServer(configuration: Self.configuration(seed: 42, faults: .realistic)))
        #expect(first.snapshot == second.snapshot)
        #expect(first.events == second.events)
        #expect(first.answers == second.answers)
        #expect(first.stats == second.stats)
        #expect(first.events.count > 200)

        let other = await Self.scenario(SimulatedServer(configuration: Self.configuration(seed: 43, faults: .realistic)))
        #expect(other.snapshot != first.snapshot)
        #expect(other.events != first.events)
    }

    // MARK: getDifference

    /// A reference client starting from several snapshots (the log start and two later points) replays
    /// getDifference (looping slices) and the channel differences it announces, and ends with exactly the server's
    /// state; pts/qts continuity is checked for every slice.
    @Test(arguments: [1, 17, 100])
    func differenceReplayReachesServerState(sliceSize: Int) async throws {
        let server = SimulatedServer(configuration: Self.configuration(seed: 11, slice: sliceSize, channelThreshold: 10_000))
        var starts = [server.snapshot()]
        let user = Self.firstPeer(SyncNamespaces.user, in: starts[0])
        let group = Self.firstPeer(SyncNamespaces.group, in: starts[0])
        let channel = Self.firstPeer(SyncNamespaces.channel, in: starts[0])
        server.generate(events: 300)
        _ = try await server.sendMessage(peerId: user, text: "from the client", randomId: 1, mutation: Self.mutation(1))
        _ = try await server.sendMessage(peerId: channel, text: "channel post", randomId: 2, mutation: Self.mutation(2))
        _ = try await server.readHistory(peerId: group, maxId: 1_000_000, mutation: Self.mutation(3))
        _ = try await server.readHistory(peerId: channel, maxId: 1_000_000, mutation: Self.mutation(4))
        starts.append(server.snapshot())
        server.generate(events: 400)
        starts.append(server.snapshot())
        server.generate(events: 300)
        server.generateBurst(messages: 40, into: group)
        let final = server.snapshot()

        for (index, start) in starts.enumerated() {
            var client = ReferenceClient(snapshot: start)
            try await client.sync(with: server)
            #expect(client.issues.isEmpty, "start \(index): \(client.issues.prefix(5))")
            #expect(client.mismatches(with: final).isEmpty, "start \(index): \(client.mismatches(with: final).prefix(5))")
            #expect(client.differences == 1)
            if sliceSize < 100 { #expect(client.slices > 0) }
            #expect(try await server.getDifference(pts: client.state.pts, qts: client.state.qts, date: client.state.date,
                                                   ptsTotalLimit: 1_000) == .empty(date: final.state.date, seq: final.state.seq))
        }
    }

    @Test func differenceSlicesNeitherLoseNorRepeatEvents() async throws {
        let server = SimulatedServer(configuration: Self.configuration(seed: 3, slice: 25))
        let start = server.snapshot()
        server.generate(events: 600)
        var cursor = start.logStart
        var ptsSeen: [Int32] = []
        var newMessageIds: [Int32] = []
        var qtsCount = 0
        var answers = 0
        fetching: while true {
            let answer = try await server.getDifference(pts: cursor.pts, qts: cursor.qts, date: cursor.date, ptsTotalLimit: 10_000)
            answers += 1
            switch answer {
            case let .slice(messages, encrypted, other, _, _, state), let .difference(messages, encrypted, other, _, _, state):
                #expect(messages.count + encrypted.count + other.count <= 25)
                ptsSeen += other.compactMap { $0.ptsRange?.pts }
                newMessageIds += messages.map(\.id)
                qtsCount += encrypted.count
                #expect(state.pts >= cursor.pts && state.qts >= cursor.qts && state.date >= cursor.date)
                cursor = state
                if case .difference = answer { break fetching }
            default:
                Issue.record("unexpected \(answer)")
                break fetching
            }
        }
        let final = server.snapshot()
        #expect(answers > 10)
        #expect(cursor == final.state)
        // Every pts from the log start to now is covered exactly once: by an update carrying it, or by a new message.
        #expect(Set(ptsSeen).count == ptsSeen.count)
        #expect(ptsSeen.count + newMessageIds.count == Int(final.state.pts - start.logStart.pts))
        #expect(Set(newMessageIds).count == newMessageIds.count)
        #expect(qtsCount == Int(final.state.qts - start.logStart.qts))
    }

    @Test func differenceTooLongAndEmpty() async throws {
        let server = SimulatedServer(configuration: Self.configuration(seed: 5))
        let start = server.snapshot()
        // Nothing before the log start is available: a client at pts 0 must resync through getState/getDialogs.
        #expect(try await server.getDifference(pts: 0, qts: 0, date: 0, ptsTotalLimit: 1_000_000) == .tooLong(pts: start.state.pts))
        #expect(try await server.getDifference(pts: start.logStart.pts - 1, qts: start.state.qts, date: start.state.date,
                                               ptsTotalLimit: 1_000_000) == .tooLong(pts: start.state.pts))
        #expect(try await server.getDifference(pts: start.state.pts, qts: start.state.qts, date: start.state.date,
                                               ptsTotalLimit: 10) == .empty(date: start.state.date, seq: start.state.seq))
        server.generateBurst(messages: 30, into: Self.firstPeer(SyncNamespaces.group, in: start))
        let now = server.snapshot().state
        #expect(now.pts == start.state.pts + 30)
        #expect(try await server.getDifference(pts: start.state.pts, qts: start.state.qts, date: start.state.date,
                                               ptsTotalLimit: 29) == .tooLong(pts: now.pts))
        let answer = try await server.getDifference(pts: start.state.pts, qts: start.state.qts, date: start.state.date,
                                                    ptsTotalLimit: 30)
        guard case let .difference(messages, _, _, _, _, state) = answer else {
            Issue.record("expected a difference, got \(answer)")
            return
        }
        #expect(messages.count == 30)
        #expect(state == now)
    }

    // MARK: getChannelDifference

    @Test func channelDifferenceIsContiguousAndEndsFinal() async throws {
        let server = SimulatedServer(configuration: Self.configuration(seed: 9, channelThreshold: 10_000))
        let start = server.snapshot()
        let channel = Self.firstPeer(SyncNamespaces.channel, in: start)
        server.generateBurst(messages: 45, into: channel)
        server.generate(events: 300)
        let final = server.snapshot()
        var client = ReferenceClient(snapshot: start)
        var pts = start.channelPts[channel]!
        var finals: [Bool] = []
        while true {
            let answer = try await server.getChannelDifference(channelId: channel, pts: pts, limit: 10)
            guard case let .difference(final, newPts, messages, other, _, _) = answer else {
                Issue.record("expected a difference, got \(answer)")
                return
            }
            #expect(messages.count + other.count <= 10)
            #expect(Int(newPts - pts) == messages.count + other.count)
            let carried = other.compactMap { $0.channelPtsRange?.pts }
            #expect(carried == carried.sorted() && carried.allSatisfy { $0 > pts && $0 <= newPts })
            for message in messages { client.apply(.newChannelMessage(message, pts: 0, ptsCount: 1)) }
            for update in other { client.apply(update) }
            finals.append(final)
            pts = newPts
            if final { break }
        }
        #expect(finals.count >= 5)
        #expect(finals.dropLast().allSatisfy { !$0 })
        #expect(pts == final.channelPts[channel])
        // Mute settings travel through seq, not through the channel's pts: compare what the channel log carries.
        let mine = client.chatStates[channel]!
        let theirs = final.chatStates[channel]!
        #expect(mine.messages == theirs.messages)
        #expect(mine.readInboxMaxId == theirs.readInboxMaxId && mine.unreadCount == theirs.unreadCount)
        #expect(try await server.getChannelDifference(channelId: channel, pts: pts, limit: 10) == .empty(final: true, pts: pts))
    }

    @Test func channelDifferenceTooLongThresholds() async throws {
        let server = SimulatedServer(configuration: Self.configuration(seed: 9, channelThreshold: 20))
        let start = server.snapshot()
        let channel = Self.firstPeer(SyncNamespaces.channel, in: start)
        let logStart = start.channelLogStartPts[channel]!
        server.generateBurst(messages: 5, into: channel)
        // Within the threshold but older than the channel's log.
        guard case .tooLong = try await server.getChannelDifference(channelId: channel, pts: logStart - 1, limit: 10) else {
            Issue.record("a pts older than the channel log must be tooLong")
            return
        }
        server.generateBurst(messages: 30, into: channel)
        let snapshot = server.snapshot()
        let channelPts = snapshot.channelPts[channel]!
        let answer = try await server.getChannelDifference(channelId: channel, pts: channelPts - 21, limit: 7)
        guard case let .tooLong(dialog, messages, chats, _) = answer else {
            Issue.record("expected tooLong, got \(answer)")
            return
        }
        #expect(dialog.peerId == channel && dialog.pts == channelPts)
        #expect(dialog.unreadCount == snapshot.chatStates[channel]!.unreadCount)
        let newest = snapshot.chatStates[channel]!.messages.keys.sorted(by: >).prefix(7)
        #expect(messages.map(\.id) == Array(newest))
        #expect(chats.map(\.id).contains(channel))
        guard case let .difference(final, pts, _, _, _, _) = try await server.getChannelDifference(channelId: channel, pts: channelPts - 20, limit: 100) else {
            Issue.record("20 behind is within the threshold")
            return
        }
        #expect(final && pts == channelPts)
    }

    // MARK: Exactly-once mutations

    @Test func repeatedMutationsApplyOnce() async throws {
        let server = SimulatedServer(configuration: Self.configuration(seed: 21))
        let start = server.snapshot()
        for (index, peer) in [SyncNamespaces.user, SyncNamespaces.group, SyncNamespaces.channel, SyncNamespaces.secretChat]
            .map({ Self.firstPeer($0, in: start) }).enumerated() {
            let before = server.snapshot()
            let mutation = Self.mutation(Int64(index))
            let first = try await server.sendMessage(peerId: peer, text: "once", randomId: 500 + Int64(index), mutation: mutation)
            let afterFirst = server.snapshot()
            let second = try await server.sendMessage(peerId: peer, text: "once", randomId: 500 + Int64(index), mutation: mutation)
            let afterSecond = server.snapshot()
            #expect(first == second)
            #expect(afterFirst == afterSecond)
            #expect(afterFirst.chatStates[peer]!.messages.count == before.chatStates[peer]!.messages.count + 1)
            #expect(afterFirst.appliedMutations.contains(mutation))
            let sent = afterFirst.chatStates[peer]!.messages.values.filter { $0.randomId == 500 + Int64(index) }
            #expect(sent.count == 1 && sent.first!.outgoing && sent.first!.text == "once")
            switch peer.namespace {
            case SyncNamespaces.user, SyncNamespaces.group:
                #expect(afterFirst.state.pts == before.state.pts + 1)
                #expect(first == .updateShortSentMessage(id: sent.first!.id, pts: afterFirst.state.pts, ptsCount: 1,
                                                         date: sent.first!.date))
            case SyncNamespaces.channel:
                #expect(afterFirst.state.pts == before.state.pts)
                #expect(afterFirst.channelPts[peer] == before.channelPts[peer]! + 1)
                #expect(first == .updates(updates: [.messageId(id: sent.first!.id, randomId: 500 + Int64(index)),
                                                    .newChannelMessage(sent.first!, pts: afterFirst.channelPts[peer]!, ptsCount: 1)],
                                          users: [], chats: [], date: sent.first!.date, seq: 0))
            default:
                #expect(afterFirst.state.pts == before.state.pts && afterFirst.state.qts == before.state.qts)
            }
        }
        let group = Self.firstPeer(SyncNamespaces.group, in: start)
        let channel = Self.firstPeer(SyncNamespaces.channel, in: start)
        let before = server.snapshot()
        let read = try await server.readHistory(peerId: group, maxId: 1_000_000, mutation: Self.mutation(10))
        #expect(try await server.readHistory(peerId: group, maxId: 1_000_000, mutation: Self.mutation(10)) == read)
        let afterRead = server.snapshot()
        #expect(read == ApiAffectedMessages(pts: before.state.pts + 1, ptsCount: 1))
        #expect(afterRead.state.pts == before.state.pts + 1)
        #expect(afterRead.chatStates[group]!.unreadCount == 0)
        #expect(afterRead.chatStates[group]!.readInboxMaxId == afterRead.chatStates[group]!.messages.keys.max())
        let channelRead = try await server.readHistory(peerId: channel, maxId: 1_000_000, mutation: Self.mutation(11))
        #expect(try await server.readHistory(peerId: channel, maxId: 1_000_000, mutation: Self.mutation(11)) == channelRead)
        #expect(channelRead == ApiAffectedMessages(pts: nil, ptsCount: 0))
        #expect(server.snapshot().channelPts[channel] == afterRead.channelPts[channel]! + 1)
        // A new mutation id is a new message, even with the same text.
        let again = try await server.sendMessage(peerId: group, text: "once", randomId: 501, mutation: Self.mutation(12))
        guard case let .updateShortSentMessage(_, pts, _, _) = again else {
            Issue.record("expected updateShortSentMessage, got \(again)")
            return
        }
        #expect(pts == afterRead.state.pts + 1 && server.snapshot().state.pts == pts)
    }

    @Test func lostAnswersAreAppliedAndRetriesReturnThem() async throws {
        let server = SimulatedServer(configuration: Self.configuration(seed: 22))
        let start = server.snapshot()
        let user = Self.firstPeer(SyncNamespaces.user, in: start)
        server.setFaults(SimulatedFaults(lostAnswer: 1))
        await #expect(throws: SyncTransportError.self) {
            _ = try await server.sendMessage(peerId: user, text: "lost", randomId: 77, mutation: Self.mutation(1))
        }
        await #expect(throws: SyncTransportError.self) {
            _ = try await server.readHistory(peerId: user, maxId: 1_000_000, mutation: Self.mutation(2))
        }
        let applied = server.snapshot()
        #expect(applied.state.pts == start.state.pts + 2)
        #expect(applied.appliedMutations == [Self.mutation(1), Self.mutation(2)])
        #expect(server.faultStats.lostAnswers == 2)
        server.setFaults(.none)
        let sent = try await server.sendMessage(peerId: user, text: "lost", randomId: 77, mutation: Self.mutation(1))
        let message = applied.chatStates[user]!.messages.values.first { $0.randomId == 77 }!
        #expect(sent == .updateShortSentMessage(id: message.id, pts: start.state.pts + 1, ptsCount: 1, date: message.date))
        #expect(try await server.readHistory(peerId: user, maxId: 1_000_000, mutation: Self.mutation(2))
                == ApiAffectedMessages(pts: start.state.pts + 2, ptsCount: 1))
        #expect(server.snapshot() == applied)
    }

    @Test func failedRequestsApplyNothing() async throws {
        let server = SimulatedServer(configuration: Self.configuration(seed: 23))
        let start = server.snapshot()
        server.setFaults(SimulatedFaults(requestFailure: 1))
        await #expect(throws: SyncTransportError.self) {
            _ = try await server.sendMessage(peerId: Self.firstPeer(SyncNamespaces.user, in: start), text: "x", randomId: 1,
                                             mutation: Self.mutation(1))
        }
        await #expect(throws: SyncTransportError.self) { _ = try await server.getState() }
        #expect(server.snapshot() == start)
        #expect(server.faultStats.failedRequests == 2)
    }

    // MARK: Pushes and faults

    /// With a perfect network every push arrives once, in order, continuing pts/qts/seq/channel pts exactly, and a
    /// client applying them reaches the server's state.
    @Test func perfectNetworkDeliversEveryPushInOrder() async {
        let server = SimulatedServer(configuration: Self.configuration(seed: 31))
        let start = server.snapshot()
        let stream = await server.connect()
        server.generate(events: 1_500)
        server.generateBurst(messages: 20)
        // Seq events back to back, so that some are merged into `updatesCombined` whatever the random traffic did.
        server.generate(sequence: Array(repeating: .userNameChange, count: 30))
        let final = server.snapshot()
        _ = await server.connect()
        let events = await Self.drain([stream])
        let stats = server.faultStats
        #expect(events.first == .newSession)
        #expect(stats.pushesAttempted == stats.pushesDelivered)
        #expect(stats.pushesDelivered == events.count - 1)
        #expect(stats.dropped + stats.duplicated + stats.delayed + stats.disconnects + stats.tooLongPushes == 0)
        var client = ReferenceClient(snapshot: start)
        let pushes = Self.pushes(events)
        for push in pushes { client.apply(push: push) }
        #expect(client.issues.isEmpty, "\(client.issues.prefix(5))")
        #expect(client.mismatches(with: final, checkCursor: false).isEmpty, "\(client.mismatches(with: final, checkCursor: false).prefix(5))")
        #expect(client.state.pts == final.state.pts && client.state.qts == final.state.qts && client.state.seq == final.state.seq)
        // The formats vary.
        #expect(pushes.contains { if case .updateShortMessage = $0 { true } else { false } })
        #expect(pushes.contains { if case .updateShortChatMessage = $0 { true } else { false } })
        #expect(pushes.contains { if case .updatesCombined = $0 { true } else { false } })
        #expect(pushes.contains { if case .updateShort = $0 { true } else { false } })
        #expect(pushes.contains { if case let .updates(_, _, _, _, seq) = $0 { seq != 0 } else { false } })
    }

    @Test func faultLayerActsWhenEnabled() async {
        let server = SimulatedServer(configuration: Self.configuration(seed: 41, faults: .realistic))
        let user = Self.firstPeer(SyncNamespaces.user, in: server.snapshot())
        var streams: [AsyncStream<SyncPushEvent>] = []
        var sendsThrown = 0
        var getStatesThrown = 0
        for round in 0..<20 {
            streams.append(await server.connect())
            server.generate(events: 200)
            for request in 0..<20 {
                do {
                    let sequence = Int64(round * 100 + request)
                    _ = try await server.sendMessage(peerId: user, text: "m", randomId: 10_000 + sequence, mutation: Self.mutation(sequence))
                } catch { sendsThrown += 1 }
                do { _ = try await server.getState() } catch { getStatesThrown += 1 }
            }
        }
        _ = await server.connect()
        let events = await Self.drain(streams)
        let stats = server.faultStats
        #expect(stats.dropped > 0 && stats.duplicated > 0 && stats.delayed > 0 && stats.disconnects > 0)
        #expect(stats.tooLongPushes > 0)
        #expect(stats.failedRequests > 0 && stats.lostAnswers > 0)
        #expect(sendsThrown + getStatesThrown == stats.failedRequests + stats.lostAnswers)
        #expect(stats.pushesDelivered == events.count - streams.count)
        #expect(stats.pushesDelivered < stats.pushesAttempted + stats.duplicated)
        #expect(Self.pushes(events).contains(.updatesTooLong))
        // Every send not failed before applying was applied, each once (random traffic may have deleted some).
        let snapshot = server.snapshot()
        #expect(snapshot.appliedMutations.count == 400 - (sendsThrown - stats.lostAnswers))
        let randomIds = snapshot.chatStates[user]!.messages.values.map(\.randomId).filter { $0 >= 10_000 }
        #expect(Set(randomIds).count == randomIds.count)
        #expect(randomIds.count > 300)
    }

    // MARK: Dialogs, history, created messages

    @Test func dialogsAndHistoryMatchTheSnapshot() async throws {
        let server = SimulatedServer(configuration: Self.configuration(seed: 51))
        server.generate(events: 300)
        let snapshot = server.snapshot()
        let dialogs = try await server.getDialogs(offset: nil, limit: 1_000)
        #expect(dialogs.state == snapshot.state && dialogs.nextOffset == nil)
        #expect(Set(dialogs.dialogs.map(\.peerId)) == Set(snapshot.chatStates.keys))
        #expect(dialogs.chats.count == snapshot.chats.count)
        for dialog in dialogs.dialogs {
            let chat = snapshot.chatStates[dialog.peerId]!
            #expect(dialog.topMessage == chat.messages.keys.max() ?? 0)
            #expect(dialog.unreadCount == chat.unreadCount && dialog.readInboxMaxId == chat.readInboxMaxId)
            #expect(dialog.readOutboxMaxId == chat.readOutboxMaxId && dialog.muteUntil == chat.muteUntil)
            #expect(dialog.pts == snapshot.channelPts[dialog.peerId])
        }
        #expect(dialogs.messages.count == dialogs.dialogs.filter { $0.topMessage != 0 }.count)
        // The users a page sends are the ones its dialogs and top messages mention.
        let mentioned = Set(dialogs.dialogs.map(\.peerId) + dialogs.messages.map(\.fromId))
        let sent = Set(dialogs.users.map(\.id))
        #expect(mentioned.filter { $0.namespace == SyncNamespaces.user }.allSatisfy { sent.contains($0) })
        #expect(snapshot.chatStates.values.contains { $0.unreadCount > 0 })

        let group = Self.firstPeer(SyncNamespaces.group, in: snapshot)
        let ids = snapshot.chatStates[group]!.messages.keys.sorted()
        let (minId, maxId) = (ids[3], ids[ids.count - 4])
        let page = try await server.getHistory(peerId: group, offsetId: 0, addOffset: 0, limit: 10, maxId: maxId, minId: minId)
        #expect(page.map(\.id) == Array(ids.filter { $0 > minId && $0 < maxId }.reversed().prefix(10)))
        let all = try await server.getHistory(peerId: group, offsetId: 0, addOffset: 0, limit: 10_000, maxId: 0, minId: 0)
        #expect(all.map(\.id) == ids.reversed())
        #expect(all.allSatisfy { snapshot.chatStates[group]!.messages[$0.id] == $0 })
    }

    @Test func dialogPagesArePinnedFirstThenByTopMessageAndCoverEveryChatOnce() async throws {
        var configuration = Self.configuration(seed: 52)
        configuration.pinnedChats = 3
        let server = SimulatedServer(configuration: configuration)
        server.generate(events: 200)
        let snapshot = server.snapshot()
        var offset: ApiDialogsOffset?
        var pages: [ApiDialogs] = []
        repeat {
            let page = try await server.getDialogs(offset: offset, limit: 5)
            pages.append(page)
            if let next = page.nextOffset, let previous = offset { #expect(next < previous) }
            offset = page.nextOffset
        } while offset != nil && pages.count < 100
        let all = pages.flatMap(\.dialogs)
        #expect(all.count == snapshot.chatStates.count && Set(all.map(\.peerId)) == Set(snapshot.chatStates.keys))
        // The pinned ones head the first page only, then at most `limit` others; every later page holds `limit`
        // but the last.
        #expect(pages[0].dialogs.prefix(3).allSatisfy(\.pinned) && pages.dropFirst().allSatisfy { !$0.dialogs.contains(where: \.pinned) })
        #expect(all.filter(\.pinned).count == 3 && pages[0].dialogs.count == 8)
        #expect(pages.dropFirst().dropLast().allSatisfy { $0.dialogs.count == 5 })
        // Unpinned dialogs are ordered by (top message date, id, peer), newest first.
        func position(_ dialog: ApiDialog) -> ApiDialogsOffset {
            let message = snapshot.chatStates[dialog.peerId]!.messages[dialog.topMessage]
            return ApiDialogsOffset(date: message?.date ?? 0, id: dialog.topMessage, peerId: dialog.peerId)
        }
        let unpinned = all.filter { !$0.pinned }.map(position)
        #expect(unpinned == unpinned.sorted(by: >))
        #expect(pages.dropLast().allSatisfy { page in page.nextOffset == page.dialogs.last.map(position) })
    }

    @Test func historyWindowsFollowOffsetIdAndAddOffset() async throws {
        let server = SimulatedServer(configuration: Self.configuration(seed: 53))
        let snapshot = server.snapshot()
        let group = Self.firstPeer(SyncNamespaces.group, in: snapshot)
        let descending = snapshot.chatStates[group]!.messages.keys.sorted(by: >)
        try #require(descending.count >= 20)
        let anchor = descending[10]
        // Around the anchor: 3 at and above it, 3 below.
        let around = try await server.getHistory(peerId: group, offsetId: anchor, addOffset: -3, limit: 6, maxId: 0, minId: 0)
        #expect(around.map(\.id) == Array(descending[8..<14]))
        // Below the anchor (add_offset 0): the next 4 older.
        let older = try await server.getHistory(peerId: group, offsetId: anchor, addOffset: 0, limit: 4, maxId: 0, minId: 0)
        #expect(older.map(\.id) == Array(descending[11..<15]))
        // From the bottom of a bounded range: the oldest ones in it.
        let (low, high) = (descending[15], descending[2])
        let bottom = try await server.getHistory(peerId: group, offsetId: low, addOffset: -4, limit: 4, maxId: high, minId: low - 1)
        #expect(bottom.map(\.id) == Array(descending[12...15]))
        // A window clipped at the newest message.
        let top = try await server.getHistory(peerId: group, offsetId: descending[1], addOffset: -5, limit: 4, maxId: 0, minId: 0)
        #expect(top.map(\.id) == Array(descending[0..<4]))
    }

    @Test func createdMessagesAreTheIncomingMessagesOfTheLog() async throws {
        let server = SimulatedServer(configuration: Self.configuration(seed: 61, channelThreshold: 10_000))
        let start = server.snapshot()
        server.generate(events: 500)
        var client = ReferenceClient(snapshot: start)
        client.chats = client.chats.mapValues { chat in
            var chat = chat
            chat.messages = [:]
            return chat
        }
        // A client without history sees exactly the created messages (minus deleted ones) plus outgoing ones.
        try await client.sync(with: server)
        #expect(client.issues.isEmpty)
        let created = server.messagesCreated()
        let final = server.snapshot()
        #expect(!created.isEmpty)
        for (peer, chat) in client.chats {
            let incoming = Set(chat.messages.values.filter { !$0.outgoing }.map(\.id))
            #expect(incoming.isSubset(of: created[peer] ?? []))
            let stillPresent = (created[peer] ?? []).filter { final.chatStates[peer]!.messages[$0] != nil }
            #expect(incoming == stillPresent)
        }
    }
}
