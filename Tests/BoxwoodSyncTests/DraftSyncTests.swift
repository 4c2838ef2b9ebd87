import Foundation
import Testing
import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator

/// Cloud drafts: saved here and shown at once in the chat-list row, saved to the server; other devices' drafts
/// arrive by push and difference; a draft of this device not sent yet wins over older ones from the server.
@Suite("Draft sync", .timeLimit(.minutes(1)))
struct DraftSyncTests {
    static func row(_ postbox: Postbox, _ peerId: PeerId) async throws -> ChatListItem? {
        let entries = try await postbox.get(.chatList(count: 0))
        for case let .chat(item) in entries where item.peerId == peerId { return item }
        return nil
    }

    @Test("a draft typed here is shown in its row and saved; another device's draft arrives; clearing clears both")
    func draftsBothWays() async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(seed: 81, users: 3, groups: 1, channels: 1, secretChats: 0,
                                                                                 initialHistory: 3...6, faults: .realistic))
        let directory = SyncTemporaryDirectory()
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: .fast)
        try await client.start()
        await client.waitUntilQuiet()
        let chats = server.snapshot().chatStates.keys.sorted()
        let group = try #require(chats.first { $0.namespace == SyncNamespaces.group })
        let channel = try #require(chats.first { $0.namespace == SyncNamespaces.channel })

        // Typed here: the row shows it at once, and the chat moves to the top (the draft is newer than every message).
        try await client.outbound.saveDraft(peerId: group, text: "see you at", timestamp: Int32.max - 10)
        let row = try await Self.row(client.postbox, group)
        #expect(row?.embeddedState?.text == "see you at")
        let first = try await client.postbox.get(.chatList(count: 1)).first
        if case let .chat(item)? = first { #expect(item.peerId == group) } else { Issue.record("no first row") }

        // Another device types in the channel (its request goes through the same faults: retried until applied).
        var saved = false
        for _ in 0..<50 where !saved { saved = (try? await server.saveDraft(peerId: channel, text: "from the laptop")) != nil }
        server.setFaults(.none)
        if !saved { _ = try await server.saveDraft(peerId: channel, text: "from the laptop") }
        await SyncSimulation.quiesce(client: client, server: server)
        #expect(server.snapshot().chatStates[group]?.draft?.text == "see you at")
        #expect(try await Self.row(client.postbox, channel)?.embeddedState?.text == "from the laptop")
        var report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(5))")

        // Cleared here: gone from the row and from the server.
        try await client.outbound.saveDraft(peerId: group, text: "", timestamp: 1)
        await SyncSimulation.quiesce(client: client, server: server)
        #expect(try await Self.row(client.postbox, group)?.embeddedState == nil)
        #expect(server.snapshot().chatStates[group]?.draft == nil)
        report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(5))")
        try await client.stop()
    }

    @Test("a draft of this device not sent yet is not replaced by the server's older one, and wins on the server")
    func pendingDraftWins() async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(seed: 82, users: 3, groups: 1, channels: 0, secretChats: 0,
                                                                                 initialHistory: 3...6, faults: .none))
        let directory = SyncTemporaryDirectory()
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: .fast)
        let group = try #require(server.snapshot().chatStates.keys.sorted().first { $0.namespace == SyncNamespaces.group })
        // Saved before syncing starts (the queue is not running), while another device saved an older one.
        _ = try await server.saveDraft(peerId: group, text: "older, from the phone")
        try await client.outbound.saveDraft(peerId: group, text: "newer, typed here", timestamp: 5)
        try await client.start()
        await client.waitUntilQuiet()
        await SyncSimulation.quiesce(client: client, server: server)
        #expect(try await Self.row(client.postbox, group)?.embeddedState?.text == "newer, typed here")
        #expect(server.snapshot().chatStates[group]?.draft?.text == "newer, typed here")
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(5))")
        try await client.stop()
    }
}
