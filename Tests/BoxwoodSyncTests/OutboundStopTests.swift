import Foundation
import Testing
import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator

/// The outbound queue stops promptly: once the manager has stopped, a queued send ends the queue's work instead
/// of being started again and again (it spun before), and the entry stays queued for the next run.
@Suite("Outbound queue stop", .timeLimit(.minutes(1)))
struct OutboundStopTests {
    @Test func aStoppedManagerStopsTheQueueInsteadOfSpinning() async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(
            seed: 3, users: 2, groups: 0, channels: 0, secretChats: 0, initialHistory: 1...3, faults: .none))
        let directory = SyncTemporaryDirectory()
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId,
                                               transport: server, configuration: .fast)
        try await client.start()
        await client.waitUntilQuiet()
        let chat = try #require(server.snapshot().chatStates.keys.sorted().first)

        await client.manager.stop()
        _ = try await client.outbound.sendMessage(peerId: chat, text: "after the manager stopped", timestamp: server.snapshot().state.date)

        // The consumer picks the entry up, its request ends with `.stopped`, and the queue goes idle for good.
        var idleSamples = 0
        for _ in 0..<400 where idleSamples < 20 {
            idleSamples = await client.outbound.isBusy ? 0 : idleSamples + 1
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(idleSamples >= 20, "the outbound queue kept working after its manager stopped")
        let queued = try await client.postbox.get(.chatList(count: 10)).contains { entry in
            if case let .chat(item) = entry { item.peerId == chat && item.topMessage?.flags.contains(.unsent) == true } else { false }
        }
        #expect(queued, "the unsent message is kept for the next run")
        #expect(await client.outbound.completed == 0)
        try await client.stop()
    }
}
