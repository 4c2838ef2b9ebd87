import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator
import Testing

/// A chat discovered below the chat list's hole (issue 26, lazy chat-list paging) whose dialog is taken while its
/// newest messages and a read of its mentions are still on the way: the dialog's count already holds both, so
/// applying them on top of it would count the read twice. The chat's unread-mention count must end as the server's.
@Suite("Mentions of a discovered chat", .timeLimit(.minutes(2)))
struct DiscoveredMentionTests {
    @Test("a dialog taken while mentions and their reads are in flight ends with the server's mention count")
    func countSurvivesInFlightUpdates() async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(seed: 41, users: 6, groups: 4, channels: 1, secretChats: 0,
                                                                                 initialHistory: 20...30, faults: .none))
        let snapshot = server.snapshot()
        let groups = snapshot.chatStates.keys.filter { $0.namespace == SyncNamespaces.group }
        // The group at the bottom of the dialog list: below the first page.
        let group = try #require(groups.min { snapshot.dialogPosition($0) < snapshot.dialogPosition($1) })
        let raced = RaceRecord()
        let transport = InterceptingTransport(base: server) { server in
            // Sent and read while the client asks for the dialog; their pushes are lost, so their updates come later,
            // by difference, over the dialog that already counts them.
            // The two newest mentions are stored here (the burst that discovered the chat brought them).
            server.setFaults(SimulatedFaults(dropPush: 1))
            raced.read = server.readMentionsFromOtherDevice(in: group, count: 2)
            server.generateBurst(messages: 40, into: group)
            server.setFaults(.none)
        }
        let directory = SyncTemporaryDirectory()
        var configuration = SyncConfiguration.fast
        configuration.dialogsPageSize = 2
        configuration.dialogPagesAtReset = 1
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: transport,
                                               configuration: configuration)
        try await client.start()
        await client.waitUntilQuiet()
        let hole = try #require(try await SyncInspector.read(client.postbox, peerIds: []).chatListHoleOffset)
        #expect(server.snapshot().dialogPosition(group) < hole, "the group is below the chat list's hole")

        // Messages in the group (pushed): it is discovered, and its dialog is taken while the hook's traffic is on
        // its way.
        server.generateBurst(messages: 40, into: group)
        await client.waitUntilQuiet()
        await SyncSimulation.quiesce(client: client, server: server)
        #expect(raced.read.count == 2, "the race read two mentions (seed 41 mentions the account in the group)")

        let serverChat = try #require(server.snapshot().chatStates[group])
        let serverCount = serverChat.messages.values.filter(\.isUnreadMention).count
        let local = try await SyncInspector.read(client.postbox, peerIds: [group])
        #expect(serverCount > 0)
        #expect(local.chats[group]?.mentionCount == Int32(serverCount))
        #expect(local.chats[group]?.mentionHoles == [])
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.isConsistent, "\(report)")
        try await client.stop()
    }
}

private final class RaceRecord: @unchecked Sendable {
    var read: [Int32] = []
}
