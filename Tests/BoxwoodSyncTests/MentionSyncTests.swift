import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator
import Foundation
import Testing

/// The simulated server without `getUnreadMentions` (a server of an older layer, or one refusing it for a while):
/// everything else is forwarded.
private final class NoMentionsTransport: SyncTransport, @unchecked Sendable {
    let base: SimulatedServer

    init(base: SimulatedServer) { self.base = base }

    func getState() async throws(SyncTransportError) -> ApiUpdatesState { try await base.getState() }
    func getDifference(pts: Int32, qts: Int32, date: Int32, ptsTotalLimit: Int32) async throws(SyncTransportError) -> ApiDifference {
        try await base.getDifference(pts: pts, qts: qts, date: date, ptsTotalLimit: ptsTotalLimit)
    }
    func getChannelDifference(channelId: PeerId, pts: Int32, limit: Int32) async throws(SyncTransportError) -> ApiChannelDifference {
        try await base.getChannelDifference(channelId: channelId, pts: pts, limit: limit)
    }
    func getDialogs(offset: ApiDialogsOffset?, limit: Int32) async throws(SyncTransportError) -> ApiDialogs {
        try await base.getDialogs(offset: offset, limit: limit)
    }
    func getPeerDialogs(peers: [PeerId]) async throws(SyncTransportError) -> ApiDialogs { try await base.getPeerDialogs(peers: peers) }
    func getHistory(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        try await base.getHistory(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit, maxId: maxId, minId: minId)
    }
    func sendMessage(peerId: PeerId, text: String, randomId: Int64, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        try await base.sendMessage(peerId: peerId, text: text, randomId: randomId, mutation: mutation)
    }
    func readHistory(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        try await base.readHistory(peerId: peerId, maxId: maxId, mutation: mutation)
    }
    func connect() async -> AsyncStream<SyncPushEvent> { await base.connect() }
}

/// Unread mentions (issue 26): each chat's count in the chat list is the server's — for mentions stored or not —
/// and stays exact through new mentions, reads on other devices, reads here, and a restart before the chat's
/// mentions were fetched.
@Suite("Unread mentions", .timeLimit(.minutes(2)))
struct MentionSyncTests {
    static func row(_ postbox: Postbox, _ peerId: PeerId) async throws -> ChatListItem? {
        for case let .chat(item) in try await postbox.get(.chatList(count: 100)) where item.peerId == peerId { return item }
        return nil
    }

    static func serverMentions(_ server: SimulatedServer, _ peerId: PeerId) -> [Int32] {
        server.snapshot().chatStates[peerId]?.messages.values.filter(\.isUnreadMention).map(\.id).sorted() ?? []
    }

    /// A group and a channel with long histories: most of their mentions lie below the messages the first sync stores.
    static func server(seed: UInt64, faults: SimulatedFaults) -> SimulatedServer {
        SimulatedServer(configuration: SimulatedServerConfiguration(seed: seed, users: 3, groups: 1, channels: 1, secretChats: 0,
                                                                    initialHistory: 150...200, faults: faults))
    }

    @Test("the chat list shows each chat's unread mentions, fetched below the first page, and follows reads here and elsewhere")
    func countsFollowTheServer() async throws {
        let server = Self.server(seed: 91, faults: .realistic)
        let directory = SyncTemporaryDirectory()
        var configuration = SyncConfiguration.fast
        configuration.holeFillPageSize = 4
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: configuration)
        try await client.start()
        await SyncSimulation.quiesce(client: client, server: server)
        let chats = server.snapshot().chatStates.keys.sorted().filter { $0.namespace != SyncNamespaces.user }
        #expect(chats.count == 2)
        for peerId in chats {
            let mentions = Self.serverMentions(server, peerId)
            #expect(mentions.count > 4, "seed 91 gives \(peerId) more mentions than one page")
            let local = try await SyncInspector.read(client.postbox, peerIds: [peerId]).chats[peerId]
            let row = try await Self.row(client.postbox, peerId)
            #expect(row?.mentionCount == Int32(mentions.count), "local \(String(describing: local?.mentionCount)) holes \(String(describing: local?.mentionHoles)) \(row?.tagSummaryCounts ?? [:])")
            // Every one of them is stored, tagged, though the history below the first page is still a hole.
            let stored = try await client.postbox.transaction { transaction in
                try transaction.getTaggedMessageIndices(peerId: peerId, tag: SyncMessageTags.unseenMention, anchor: nil, direction: .later,
                                                        limit: 1_000).map(\.id.id)
            }
            #expect(stored == mentions)
        }
        #expect(await client.manager.statistics.mentionPagesFetched >= 4)
        var report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.isConsistent, "\(report)")

        // New mentions and reads on another device (pushed or fetched through the difference, with faults).
        server.setFaults(.realistic)
        for _ in 0..<30 { _ = server.generate(.incomingGroupMessage); _ = server.generate(.channelPost) }
        for _ in 0..<3 { _ = server.generate(.readMentionsFromOtherDevice) }
        await SyncSimulation.quiesce(client: client, server: server)
        for peerId in chats {
            #expect(try await Self.row(client.postbox, peerId)?.mentionCount == Int32(Self.serverMentions(server, peerId).count))
        }

        // Read here: one mention of a chat (seen by the user), all of the other's.
        let seenChat = try #require(chats.first { !Self.serverMentions(server, $0).isEmpty }, "reads elsewhere left no mention")
        let otherChat = try #require(chats.first { $0 != seenChat })
        let seenBefore = try #require(try await Self.row(client.postbox, seenChat)?.mentionCount)
        let seen = try #require(Self.serverMentions(server, seenChat).first)
        try await client.outbound.markMentionsSeen([MessageId(peerId: seenChat, namespace: SyncNamespaces.cloudMessages, id: seen)])
        try await client.outbound.readAllMentions(peerId: otherChat)
        // At once, before the server knows.
        #expect(try await Self.row(client.postbox, seenChat)?.mentionCount == seenBefore - 1)
        #expect(try await Self.row(client.postbox, otherChat)?.mentionCount == 0)
        await SyncSimulation.quiesce(client: client, server: server)
        #expect(Self.serverMentions(server, otherChat).isEmpty)
        #expect(!Self.serverMentions(server, seenChat).contains(seen))
        #expect(try await Self.row(client.postbox, seenChat)?.mentionCount == Int32(Self.serverMentions(server, seenChat).count))
        report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.isConsistent, "\(report)")
        try await client.stop()
    }

    @Test("a chat whose mentions were not fetched before the client stopped is filled at the next start")
    func unfetchedMentionsAreFilledAtTheNextStart() async throws {
        let server = Self.server(seed: 92, faults: .none)
        let directory = SyncTemporaryDirectory()
        let path = directory.path + "/db"
        let group = try #require(server.snapshot().chatStates.keys.sorted().first { $0.namespace == SyncNamespaces.group })
        let mentions = Self.serverMentions(server, group)
        #expect(mentions.count > 1)

        // The first client syncs against a server that refuses getUnreadMentions: the count is the dialog's, the
        // mentions below the first page stay in a hole.
        let refusing = try await SyncClient.open(path: path, accountPeerId: server.accountPeerId, transport: NoMentionsTransport(base: server),
                                                 configuration: .fast)
        try await refusing.start()
        await refusing.waitUntilQuiet()
        #expect(try await Self.row(refusing.postbox, group)?.mentionCount == Int32(mentions.count))
        var local = try await SyncInspector.read(refusing.postbox, peerIds: [group]).chats[group]
        #expect(local?.mentionHoles.isEmpty == false)
        try await refusing.stop()

        // Meanwhile another device reads one of the mentions that is not stored here (its id names no chat here).
        let storedTagged = Set(local?.messages.values.filter(\.unreadMention).map(\.id) ?? [])
        let unstored = try #require(mentions.first { !storedTagged.contains($0) })
        let mutation = ClientMutationId(clientId: 77, sequence: 1)
        _ = try await server.readMessageContents(peerId: group, ids: [unstored], mutation: mutation)

        // The next start finds the chat's mention space unfilled and fills it: the count is exact again.
        let client = try await SyncClient.open(path: path, accountPeerId: server.accountPeerId, transport: server, configuration: .fast)
        try await client.start()
        await SyncSimulation.quiesce(client: client, server: server)
        #expect(await client.manager.statistics.mentionPagesFetched >= 1)
        #expect(try await Self.row(client.postbox, group)?.mentionCount == Int32(mentions.count - 1))
        local = try await SyncInspector.read(client.postbox, peerIds: [group]).chats[group]
        #expect(local?.mentionHoles.isEmpty == true)
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.isConsistent, "\(report)")
        try await client.stop()
    }
}
