import Foundation
import Testing
import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator

/// The sync layer's typed data items: content, reactions and the state of a sent message, read and followed without
/// casts.
@Suite("Sync data items", .timeLimit(.minutes(1)))
struct SyncDataItemTests {
    @Test("reactions, content and the outgoing state are read and followed, yielding only on a change")
    func itemsFollowChanges() async throws {
        var configuration = SimulatedServerConfiguration(seed: 61, users: 3, groups: 1, channels: 2, secretChats: 0, initialHistory: 3...6,
                                                         faults: .none)
        configuration.readOnlyChannels = 1
        let server = SimulatedServer(configuration: configuration)
        let directory = SyncTemporaryDirectory()
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: .fast)
        try await client.start()
        await client.waitUntilQuiet()
        let postbox = client.postbox
        let group = try #require(server.snapshot().chatStates.keys.sorted().first { $0.namespace == SyncNamespaces.group })
        let stored = try await SyncInspector.read(postbox, peerIds: [group]).chats[group]?.messages.keys.max()
        let id = MessageId(peerId: group, namespace: SyncNamespaces.cloudMessages, id: try #require(stored))

        let message = try #require(try await postbox.get(.message(id)))
        #expect(try await postbox.get(.messageContent(id)) == SyncMessageContent.content(of: message))
        #expect(try await postbox.get(.reactions(id)) == SyncMessageContent.content(of: message).reactions)

        // Following the reactions: the current value, then the account's reaction once it is set.
        var reactions = postbox.subscribe(.reactions(id)).makeAsyncIterator()
        let before = try await reactions.next()
        try await client.outbound.setReaction(id, emoji: "🦉")
        let after = try #require(try await reactions.next())
        #expect(after != before)
        #expect(after.contains { $0.emoji == "🦉" && $0.chosen })

        // A sent message: sending, then sent; a send the server refuses: failed with the reason.
        let user = try #require(server.snapshot().chatStates.keys.sorted().first { $0.namespace == SyncNamespaces.user })
        let localId = try await client.outbound.sendMessage(peerId: user, text: "typed", timestamp: 5)
        let state = try await postbox.get(.outgoingState(localId))
        #expect(state == .sending || state == nil, "state: \(String(describing: state))")
        let readOnly = try #require(server.snapshot().chatStates.keys.filter { $0.namespace == SyncNamespaces.channel }.sorted().last)
        let refusedId = try await client.outbound.sendMessage(peerId: readOnly, text: "refused", timestamp: 6)
        var refused = postbox.subscribe(.outgoingState(refusedId)).makeAsyncIterator()
        var last: SyncOutgoingState?
        while let next = try await refused.next() {
            last = next
            if case .failed = next { break }
        }
        #expect(last == .failed(reason: "CHAT_WRITE_FORBIDDEN"))
        #expect(try await postbox.get(.outgoingState(id)) == (message.flags.contains(.incoming) ? nil : .sent))
        try await client.stop()
    }
}
