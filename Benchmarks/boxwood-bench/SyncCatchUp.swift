import Boxwood
import BoxwoodPlatform
import BoxwoodSync
import BoxwoodSyncSimulator

/// The sizes of `sync-catchup`: how many chats the account has, how many live history views the client keeps open,
/// and how many updates it catches up with.
struct SyncCatchUpSize: Sendable {
    let users: Int
    let groups: Int
    let channels: Int
    let views: Int
    let updates: Int

    init(profile: Profile) {
        switch profile {
        case .full: (users, groups, channels, views, updates) = (700, 200, 100, 20, 100_000)
        case .quick: (users, groups, channels, views, updates) = (300, 80, 40, 20, 20_000)
        case .smoke: (users, groups, channels, views, updates) = (40, 8, 4, 5, 1_500)
        }
    }

    var chats: Int { users + groups + channels }
}

extension Bench {
    /// `sync-catchup`: a client of the simulated server (in process, no faults) that synced its account once and
    /// keeps `views` history views open goes offline while the server generates `updates` events over every chat;
    /// then one `synchronize()` — getDifference in slices, the channels' differences, each batch one transaction
    /// that the open views see — is timed. Ops are updates applied; the note gives the rate beside this run's own
    /// `txn-1000-set` rate when that ran. Verified: afterwards the database equals the server (`ConsistencyCheck`).
    func syncCatchUp(txnSetRate: Double?) throws(BenchError) -> Measurement {
        let workload = WorkloadID.syncCatchUp.rawValue
        let size = SyncCatchUpSize(profile: sizes.profile)
        let directory = root + "/boxwood-sync-catchup"
        removeTree(directory)
        let seed = self.seed
        let result = try runAsync { () async throws -> (applied: Int, seconds: Double, report: ConsistencyReport, batches: Int) in
            let server = SimulatedServer(configuration: SimulatedServerConfiguration(
                seed: seed, users: size.users, groups: size.groups, channels: size.channels, secretChats: 0, initialHistory: 1...3,
                differenceSliceSize: 1_000, channelTooLongThreshold: Int32.max, faults: .none))
            var configuration = SyncConfiguration()
            // The whole dialog list at the first sync: every chat is known when the catch-up starts.
            configuration.dialogPagesAtReset = Int.max
            configuration.ptsTotalLimit = Int32.max
            configuration.channelDifferenceLimit = 1_000
            try makeDirectory(directory)
            let client = try await SyncClient.open(path: directory + "/db", accountPeerId: server.accountPeerId, transport: server,
                                                   configuration: configuration)
            try await client.start()
            await client.waitUntilQuiet()
            var tasks: [Task<Void, Never>] = []
            for peerId in server.snapshot().chatStates.keys.sorted().prefix(size.views) {
                let stream = client.postbox.view(.messageHistory(peerId: peerId, namespace: SyncNamespaces.cloudMessages, count: 30))
                tasks.append(Task { do { for try await _ in stream {} } catch {} })
            }
            await client.waitUntilQuiet()
            // Offline: the server moves on and nothing is pushed.
            server.setFaults(SimulatedFaults(dropPush: 1))
            server.generate(events: size.updates)
            server.setFaults(.none)
            let before = await client.manager.statistics
            let start = monotonicNanoseconds()
            try await client.manager.synchronize()
            await client.manager.waitUntilIdle()
            let seconds = Double(monotonicNanoseconds() - start) / 1e9
            let after = await client.manager.statistics
            await client.waitUntilQuiet()
            let report = try await ConsistencyCheck.check(client.postbox, server: server)
            for task in tasks { task.cancel() }
            try await client.stop()
            return (after.updatesApplied - before.updatesApplied, seconds, report, after.commits - before.commits)
        }
        removeTree(directory)
        guard result.report.isConsistent else {
            throw .verification(engine: .boxwood, workload: workload, detail: "the database differs from the server: \(result.report.differences.prefix(3))")
        }
        let rate = Double(result.applied) / result.seconds
        let versus = txnSetRate.map { "; this run's txn-1000-set: \(fixed($0, 0)) ops/s (catch-up ÷ txn-1000-set \(fixed(rate / $0, 2))x)" } ?? ""
        return Measurement(row: workload, engine: .boxwood, ops: result.applied, seconds: result.seconds,
                           note: "\(result.applied) updates over \(size.chats) chats with \(size.views) live history views, in \(result.batches) batches: \(fixed(rate, 0)) updates/s\(versus)")
    }
}
