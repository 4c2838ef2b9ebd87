import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator
import Testing

/// Catch-up throughput: updates applied per second from getDifference slices while 20 live history views are
/// attached (printed, not asserted: timing assertions do not belong in tests). Run in release for the number
/// quoted in docs/sync.md.
@Suite("Sync catch-up cost", .timeLimit(.minutes(5)))
struct SyncCatchUpCostTests {
    @Test("catch-up from difference slices with 20 live views (printed)")
    func catchUpWithLiveViews() async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(
            seed: 77, users: 30, groups: 3, channels: 3, secretChats: 0, initialHistory: 5...20,
            differenceSliceSize: 100, channelTooLongThreshold: 100_000, faults: .none))
        let directory = SyncTemporaryDirectory()
        var configuration = SyncConfiguration.fast
        configuration.ptsTotalLimit = 100_000
        configuration.channelDifferenceLimit = 100
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId,
                                               transport: server, configuration: configuration)
        try await client.start()
        await client.waitUntilQuiet()
        let chats = server.snapshot().chatStates.keys.sorted()
        #expect(chats.count >= 20)
        let observer = SyncSimulationObserver()
        await observer.observe(client, viewing: Array(chats.prefix(20)), count: 30)
        // Offline: the client stops listening while the server moves on.
        try await client.stop()
        let events = 3_000
        server.generate(events: events)
        let reopened = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId,
                                                 transport: server, configuration: configuration)
        let liveViews = SyncSimulationObserver()
        await liveViews.observe(reopened, viewing: Array(chats.prefix(20)), count: 30)
        let clock = ContinuousClock()
        let start = clock.now
        await reopened.manager.start()
        await reopened.manager.waitUntilIdle()
        let elapsed = clock.now - start
        let statistics = await reopened.manager.statistics
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("catch-up: \(statistics.updatesApplied) updates in \(statistics.differenceRequests) difference requests and \(statistics.channelDifferenceRequests) channel requests, \(statistics.commits) commits, \(String(format: "%.3f", seconds)) s = \(Int(Double(statistics.updatesApplied) / seconds)) updates/s with 20 live history views")
        #expect(statistics.updatesApplied > events / 2)
        _ = await liveViews.finish()
        _ = await observer.finish()
        let report = try await ConsistencyCheck.check(reopened.postbox, server: server)
        #expect(report.differences.filter { !$0.contains("outbound") }.isEmpty, "\(report)")
        try await reopened.stop()
    }
}
