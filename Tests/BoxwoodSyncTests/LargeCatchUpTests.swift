import Foundation
import Testing
import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator

/// A catch-up in large batches (difference slices of 1,000 updates): everything of a long offline stretch replayed in
/// a few transactions, with shared media carried, edited and deleted inside one batch.
@Suite("Large catch-up", .timeLimit(.minutes(2)))
struct LargeCatchUpTests {
    @Test("an offline stretch of 1,500 updates over 52 chats is caught up in large batches and ends consistent",
          arguments: ProcessInfo.processInfo.environment["BOXWOOD_CATCHUP_SEED"].flatMap(UInt64.init).map { [$0] } ?? [UInt64(42), 43, 44])
    func largeBatches(seed: UInt64) async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(
            seed: seed, users: 40, groups: 8, channels: 4, secretChats: 0, initialHistory: 1...3,
            differenceSliceSize: Int(ProcessInfo.processInfo.environment["BOXWOOD_SLICE"].flatMap(Int.init) ?? 1_000),
            channelTooLongThreshold: Int32.max, faults: .none))
        var configuration = SyncConfiguration()
        configuration.ptsTotalLimit = Int32.max
        configuration.channelDifferenceLimit = 1_000
        let directory = SyncTemporaryDirectory()
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: configuration)
        try await client.start()
        await client.waitUntilQuiet()
        server.setFaults(SimulatedFaults(dropPush: 1))
        server.generate(events: 1_500)
        server.setFaults(.none)
        try await client.manager.synchronize()
        await client.waitUntilQuiet()
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.differences.isEmpty, "seed \(seed): \(report.differences.prefix(5))")
        try await client.stop()
    }
}
