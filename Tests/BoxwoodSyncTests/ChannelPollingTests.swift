import Foundation
import Testing
import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator

/// Channels kept polled while the app shows them (Telegram's `polledChannel`): a channel whose updates are never
/// pushed is caught up only while a handle lives; no task runs once the last handle ends; at most
/// `maxPolledChannels` channels, the most recently opened, are polled.
@Suite("Channel polling", .timeLimit(.minutes(1)))
struct ChannelPollingTests {
    static func localPts(_ client: SyncClient, _ channel: PeerId) async throws -> Int32? {
        try await SyncInspector.read(client.postbox, peerIds: [channel]).chats[channel]?.channelPts
    }

    /// Server traffic until `channel`'s pts moved by at least `posts`.
    static func post(_ server: SimulatedServer, in channel: PeerId, posts: Int32) {
        let start = server.snapshot().channelPts[channel] ?? 0
        for _ in 0..<2_000 where (server.snapshot().channelPts[channel] ?? 0) < start + posts {
            _ = server.generate(.channelPost)
        }
    }

    @Test("an unpushed channel is caught up only while it is polled, and nothing runs after the handle ends")
    func pollsWhileOpen() async throws {
        var configuration = SimulatedServerConfiguration(seed: 41, users: 3, groups: 1, channels: 2, secretChats: 0,
                                                         initialHistory: 3...6, faults: .none)
        configuration.unpushedChannels = 1
        let server = SimulatedServer(configuration: configuration)
        let channel = try #require(server.unpushedChannels.first)
        let directory = SyncTemporaryDirectory()
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: .fast)
        try await client.start()
        await client.waitUntilQuiet()
        #expect(try await Self.localPts(client, channel) == server.snapshot().channelPts[channel])

        // Not polled: its posts are not pushed, so the client stays behind (the other channel's pushes arrive).
        Self.post(server, in: channel, posts: 5)
        await client.waitUntilQuiet()
        try await Task.sleep(for: .milliseconds(300))
        let behind = try await Self.localPts(client, channel)
        #expect(behind != server.snapshot().channelPts[channel], "the unpushed channel's posts reached the client")

        // Polled: caught up at once, then again after new posts.
        let polling = await client.manager.pollChannel(channel)
        #expect(await client.manager.polledChannelIds == [channel])
        for round in 0..<2 {
            if round == 1 { Self.post(server, in: channel, posts: 3) }
            let target = server.snapshot().channelPts[channel]
            var caughtUp = false
            for _ in 0..<200 where !caughtUp {
                try await Task.sleep(for: .milliseconds(20))
                caughtUp = try await Self.localPts(client, channel) == target
            }
            #expect(caughtUp, "round \(round): the polled channel was not caught up")
        }
        await client.waitUntilQuiet()
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(10))")

        // Closed: polling stops, and nothing wakes (no round in five intervals).
        polling.cancel()
        try await Task.sleep(for: .milliseconds(50))
        #expect(await client.manager.polledChannelIds.isEmpty)
        let rounds = await client.manager.statistics.channelPollRounds
        #expect(rounds >= 1)
        try await Task.sleep(for: .milliseconds(500))
        #expect(await client.manager.statistics.channelPollRounds == rounds)
        try await client.stop()
    }

    @Test("at most maxPolledChannels channels are polled: the most recently opened; a released handle lets another in")
    func limit() async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(seed: 42, users: 2, groups: 0, channels: 7, secretChats: 0,
                                                                                 initialHistory: 1...3, faults: .none))
        let channels = server.snapshot().chatStates.keys.filter { $0.namespace == SyncNamespaces.channel }.sorted()
        #expect(channels.count == 7)
        let directory = SyncTemporaryDirectory()
        var configuration = SyncConfiguration.fast
        configuration.maxPolledChannels = 5
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: configuration)
        try await client.start()
        var handles: [ChannelPolling] = []
        for channel in channels { handles.append(await client.manager.pollChannel(channel)) }
        // A second handle of a polled channel polls it once.
        let twice = await client.manager.pollChannel(channels[6])
        #expect(await client.manager.polledChannelIds == Array(channels[2...].reversed()))
        handles[6].cancel()
        try await Task.sleep(for: .milliseconds(20))
        #expect(await client.manager.polledChannelIds == Array(channels[2...].reversed()), "the second handle keeps channel 6 polled")
        twice.cancel()
        handles[5].cancel()
        try await Task.sleep(for: .milliseconds(20))
        #expect(await client.manager.polledChannelIds == Array(channels[0...4].reversed()))
        await client.waitUntilQuiet()
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(10))")
        handles.removeAll()
        try await Task.sleep(for: .milliseconds(20))
        #expect(await client.manager.polledChannelIds.isEmpty, "released handles end their polling")
        try await client.stop()
    }
}
