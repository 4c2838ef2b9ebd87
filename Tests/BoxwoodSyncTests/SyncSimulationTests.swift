import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator
import Foundation
import Testing

/// Deterministic simulation: random traffic and client actions against the simulated server with faults on
/// (dropped, duplicated, delayed and reordered pushes, disconnects, failed requests, lost answers, forced
/// tooLong), then quiescence; the client's database must equal the server's state everywhere outside holes,
/// the open views must have no holes left, and every new message must be reported exactly once.
@Suite("Sync simulation", .timeLimit(.minutes(10)))
struct SyncSimulationTests {
    /// One seeded session; returns a description of what went wrong (empty: nothing).
    static func runSession(seed: UInt64, totals: SimulationTotals) async throws -> [String] {
        var random = TestRandom(seed: seed)
        // Every third seed: a tiny pts_total_limit and channel threshold, so difference and channel tooLong happen.
        let resets = seed % 3 == 0
        var serverConfiguration = SimulatedServerConfiguration(
            seed: seed, users: 5, groups: 2, channels: 2, secretChats: 1, initialHistory: 5...60,
            differenceSliceSize: 8 + Int(seed % 7), channelTooLongThreshold: resets ? 6 : 200, faults: .realistic)
        // Every fourth seed: a channel the account may not post in, so sends there are refused and left failed.
        serverConfiguration.readOnlyChannels = seed % 4 == 1 ? 1 : 0
        // Every fifth seed: a channel whose updates are never pushed, which the client keeps polled (an open
        // channel the account has not joined): only polling brings its posts.
        serverConfiguration.unpushedChannels = seed % 5 == 2 ? 1 : 0
        // Some pinned chats, and dialog pages of a few chats: every reset from the dialog list takes several pages,
        // with traffic and faults between them.
        serverConfiguration.pinnedChats = Int(seed % 3)
        let server = SimulatedServer(configuration: serverConfiguration)
        let directory = SyncTemporaryDirectory()
        var configuration = SyncConfiguration.fast
        configuration.ptsTotalLimit = resets && seed % 2 == 0 ? 10 : 1000
        configuration.channelDifferenceLimit = 5
        configuration.holeFillPageSize = 10
        configuration.dialogsPageSize = 2 + Int32(seed % 4)
        // Rebuilds fetch one page of the dialog list (the default) and leave the rest a chat-list hole; chats below it
        // are not compared, those discovered above it are. Every fourth seed fetches the whole list instead.
        // BOXWOOD_SYNC_LIST=lazy or =eager makes every seed do one or the other.
        switch ProcessInfo.processInfo.environment["BOXWOOD_SYNC_LIST"] {
        case "lazy": configuration.dialogPagesAtReset = 1
        case "eager": configuration.dialogPagesAtReset = .max
        default: configuration.dialogPagesAtReset = seed % 4 == 3 ? .max : 1
        }
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId,
                                               transport: server, configuration: configuration)
        let observer = SyncSimulationObserver()
        let chats = server.snapshot().chatStates.keys.sorted()
        let viewed = Array(chats.shuffled(using: &random).prefix(3))
        await observer.observe(client, viewing: viewed, count: 15)
        try await client.start()
        var polling: [ChannelPolling] = []
        for channel in server.unpushedChannels.sorted() { polling.append(await client.manager.pollChannel(channel)) }
        // The first sync is a reset from the dialog list (no events); traffic starts after it.
        await client.waitUntilQuiet()
        let createdBefore = server.messagesCreated()
        var parameters = SyncSimulationParameters()
        parameters.rounds = 12 + Int(seed % 10)
        parameters.eventsPerRound = 4 + Int(seed % 5)
        parameters.fileDirectory = directory.path
        if resets {
            // A long offline stretch: traffic whose pushes are all lost, including a channel burst beyond the
            // channel threshold, so the client must reset the common box (difference tooLong) and the channel
            // (channel difference tooLong) and fill the rest as holes.
            server.setFaults(SimulatedFaults(dropPush: 1))
            if seed % 2 == 0 {
                server.generate(events: 40)
            } else if let channel = chats.first(where: { $0.namespace == SyncNamespaces.channel }) {
                server.generateBurst(messages: 12, into: channel)
            }
            server.setFaults(.realistic)
        }
        try await SyncSimulation.runTraffic(client: client, server: server, parameters: parameters, random: &random)
        await SyncSimulation.quiesce(client: client, server: server)
        if !polling.isEmpty {
            // Two poll rounds after the traffic ended: the polled channel has everything.
            let rounds = await client.manager.statistics.channelPollRounds
            for _ in 0..<500 where await client.manager.statistics.channelPollRounds < rounds + 2 {
                try await Task.sleep(for: .milliseconds(10))
            }
            await client.waitUntilQuiet()
        }

        var problems: [String] = []
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        problems += report.differences
        // Each open view shows its newest messages with no hole left inside its window.
        try? await Task.sleep(for: .milliseconds(30))
        let observed = await observer.finish()
        for peerId in viewed {
            if let failure = observed.viewFailures[peerId] { problems.append("the view of \(peerId) failed: \(failure)"); continue }
            guard let view = observed.lastViews[peerId] else { problems.append("no view of \(peerId)"); continue }
            let serverTop = server.snapshot().chatStates[peerId]?.messages.keys.sorted(by: >).prefix(15) ?? []
            let lowest = view.entries.map(\.id.id).min() ?? Int32.max
            let windowHoles = view.holes.filter { $0.upperBound >= lowest }
            if !windowHoles.isEmpty, view.entries.count < serverTop.count || lowest > (serverTop.last ?? 0) {
                problems.append("view of \(peerId) still has holes \(windowHoles)")
            }
            if Array(view.entries.map(\.id.id).sorted(by: >).prefix(serverTop.count)) != Array(serverTop) {
                problems.append("view of \(peerId) shows \(view.entries.map(\.id.id).sorted(by: >).prefix(5)) but the server's newest are \(Array(serverTop.prefix(5)))")
            }
        }
        // New-message events: never twice; only for messages created during the session; and, when no reset
        // (tooLong) replaced updates by dialogs and hole fills, for every created incoming message.
        for (id, count) in observed.newMessageEvents where count > 1 { problems.append("message \(id) reported \(count) times") }
        var created = server.messagesCreated()
        for (peerId, ids) in createdBefore { created[peerId]?.subtract(ids) }
        for id in observed.newMessageEvents.keys where !(created[id.peerId]?.contains(id.id) ?? false) {
            problems.append("event for message \(id) the session did not create")
        }
        let statistics = await client.manager.statistics
        if statistics.differenceTooLong == 0 && statistics.channelTooLong == 0 {
            for (peerId, ids) in created {
                for id in ids where observed.newMessageEvents[MessageId(peerId: peerId, namespace: SyncNamespaces.cloudMessages, id: id)] == nil {
                    problems.append("no event for created message \(peerId):\(id)")
                }
            }
        }
        totals.add(report, statistics)
        totals.addSent(server.messagesSent())
        for handle in polling { handle.cancel() }
        try await client.stop()
        return problems.map { "seed \(seed): \($0)" }
    }

    @Test("the client converges to the server over many seeds (BOXWOOD_SYNC_SEEDS, BOXWOOD_SYNC_SEED)")
    func convergesOverManySeeds() async throws {
        let seeds = syncSeeds(default: 200, base: 1000)
        var failures: [String] = []
        let totals = SimulationTotals()
        for seed in seeds {
            let problems = try await Self.runSession(seed: seed, totals: totals)
            if !problems.isEmpty { failures.append(contentsOf: problems.prefix(8)) }
        }
        print("sync simulation: \(seeds.count) seeds (\(seeds.first ?? 0)…\(seeds.last ?? 0)), \(failures.count) problems; \(totals.summary)")
        #expect(failures.isEmpty, "\(failures.prefix(20).joined(separator: "\n"))")
    }
}

/// Sums over the seeds of a run, printed so a run shows what it exercised.
final class SimulationTotals: @unchecked Sendable {
    private(set) var compared = 0, inHoles = 0, holes = 0, gaps = 0, tooLong = 0, channelTooLong = 0, holeFills = 0
    private(set) var applied = 0, duplicates = 0, discarded = 0, retries = 0, forwardsSent = 0, filesSent = 0
    private(set) var unreadMentions = 0, mentionPages = 0

    func addSent(_ messages: [ApiMessage]) {
        forwardsSent += messages.filter { $0.content.forward != nil }.count
        filesSent += messages.filter { if case .document? = $0.content.media { return true }; return false }.count
    }

    func add(_ report: ConsistencyReport, _ statistics: SyncStatistics) {
        compared += report.messagesCompared
        inHoles += report.messagesInHoles
        holes += report.holes
        unreadMentions += report.unreadMentions
        mentionPages += statistics.mentionPagesFetched
        gaps += statistics.gapsDetected
        tooLong += statistics.differenceTooLong
        channelTooLong += statistics.channelTooLong
        holeFills += statistics.holesFilled
        applied += statistics.updatesApplied
        duplicates += statistics.duplicatesSkipped
        discarded += statistics.discardedBatches
        retries += statistics.retries
    }

    var summary: String {
        "messages compared \(compared), in holes \(inHoles), holes left \(holes), updates applied \(applied), duplicates skipped \(duplicates), gaps \(gaps), difference tooLong \(tooLong), channel tooLong \(channelTooLong), hole pages filled \(holeFills), batches discarded \(discarded), retries \(retries), forwards sent \(forwardsSent), files sent \(filesSent), unread mentions counted \(unreadMentions), mention pages fetched \(mentionPages)"
    }
}
