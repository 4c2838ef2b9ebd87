import Foundation
import Testing
import Boxwood
import BoxwoodStore
import BoxwoodSync
import BoxwoodSyncSimulator

/// A version-1 sync database (holes in the everywhere space only, messages without media tags) is brought to the
/// current version on open: its messages are tagged and each media space gets the chat's everywhere holes (Postbox's
/// upgraded message holes), so shared-media views fill; the unread-mention space is a hole to fill (version 3); a
/// read-only open reads it as it is.
@Suite("Sync schema upgrade", .timeLimit(.minutes(1)))
struct SyncSchemaUpgradeTests {
    /// The seed configuration of version 1: no media spaces.
    static var versionOneConfiguration: SeedConfiguration {
        var configuration = SyncClient.seedConfiguration
        configuration.messageHoles = configuration.messageHoles.mapValues { $0.mapValues { _ in [] } }
        return configuration
    }

    @Test("version 1 → 2: messages tagged, media spaces given the everywhere holes, the photos view fills")
    func upgradeAddsMediaSpaces() async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(seed: 91, users: 2, groups: 1, channels: 0, secretChats: 0,
                                                                                 initialHistory: 200...260, faults: .none))
        let directory = SyncTemporaryDirectory()
        let path = directory.path + "/db"
        let snapshot = server.snapshot()
        let chat = try #require(snapshot.chatStates.keys.sorted().first { $0.namespace == SyncNamespaces.group })
        let messages = snapshot.chatStates[chat]!.messages.values.sorted { $0.id > $1.id }
        let stored = Array(messages.prefix(60))
        let lowest = try #require(stored.last?.id)
        let photosStored = stored.filter { ApiSearchFilter.photos.matches($0.content) }
        try #require(!photosStored.isEmpty, "the seed's newest 60 messages hold no photo")

        // Version 1, written as the earlier build did: the newest 60 messages, untagged, a hole below them.
        try SyncClient.registerTypes()
        let old = try await Postbox.open(path: path, seedConfiguration: Self.versionOneConfiguration, userVersion: 1)
        try await old.transaction { transaction in
            try transaction.updatePeerChatListInclusion(chat, inclusion: .ifHasMessagesOrOneOf(groupId: .root, pinningIndex: nil, minTimestamp: nil))
            let store = stored.map { message -> StoreMessage in
                let media: [any Media] = { if case let .photo(photo)? = message.content.media { return [SyncMediaImage(photo)] } else { return [] } }()
                return StoreMessage(id: .id(MessageId(peerId: chat, namespace: SyncNamespaces.cloudMessages, id: message.id)), timestamp: message.date,
                                    flags: message.outgoing ? [] : [.incoming], authorId: message.fromId, text: message.text,
                                    attributes: [SyncMessageAttribute(editVersion: 0)], media: media)
            }
            _ = try transaction.addMessages(store, location: .random)
            try transaction.removeHole(peerId: chat, namespace: SyncNamespaces.cloudMessages, space: .everywhere, range: lowest...(Int32.max - 1))
        }
        try await old.close()

        // A tool's read-only open reads it as version 1, without writing.
        var readOnly = ValueBoxOptions()
        readOnly.readOnly = true
        let reader = try await SyncClient.openPostbox(path: path, options: readOnly)
        #expect(reader.userVersion == 1)
        try await reader.close()

        // The sync client's open upgrades it.
        let postbox = try await SyncClient.openPostbox(path: path)
        #expect(try await postbox.transaction { try $0.getUserVersion() } == SyncClient.userVersion)
        // 2 → 3: whether a stored message mentions the account was never stored, so the whole mention space is a hole.
        let mentionHoles = try await SyncInspector.read(postbox, peerIds: [chat]).chats[chat]?.mentionHoles
        #expect(mentionHoles == [1...messages[0].id])
        let (tagged, everywhere, photoHoles) = try await postbox.transaction { transaction in
            let history = try transaction.getMessageHistory(peerId: chat, namespaces: [SyncNamespaces.cloudMessages], anchor: nil,
                                                            direction: .earlier, limit: 1_000)
            return (history.filter { $0.tags.contains(SyncMessageTags.photo) }.map(\.id.id).sorted(),
                    try transaction.getHoles(peerId: chat, namespace: SyncNamespaces.cloudMessages),
                    try transaction.getHoles(peerId: chat, namespace: SyncNamespaces.cloudMessages, space: .tag(SyncMessageTags.photo)))
        }
        #expect(tagged == photosStored.map(\.id).sorted())
        #expect(!everywhere.isEmpty && photoHoles == everywhere)

        // Syncing: the photos view of the chat shows the server's newest photos, those below the stored ones included.
        let client = SyncClient(postbox: postbox, transport: server, accountPeerId: server.accountPeerId, configuration: .fast)
        try await client.start()
        let photos = messages.filter { ApiSearchFilter.photos.matches($0.content) }.map(\.id)
        let want = Array(photos.prefix(photosStored.count + 5))
        let view = postbox.view(.messageHistory(peerId: chat, namespace: SyncNamespaces.cloudMessages, count: want.count, tag: SyncMessageTags.photo))
        let shown = await withDeadline(.seconds(30)) { () async -> [Int32]? in
            var last: [Int32] = []
            do {
                for try await snapshot in view {
                    last = snapshot.entries.map(\.id.id).sorted(by: >)
                    if Array(last.prefix(want.count)) == want { return last }
                }
            } catch {}
            return last
        }
        #expect(shown.map { Array($0.prefix(want.count)) } == want)
        // The mention space was filled: the chat list counts the server's unread mentions.
        await SyncSimulation.quiesce(client: client, server: server)
        let serverMentions = Int32(messages.filter(\.isUnreadMention).count)
        #expect(serverMentions > 0, "the seed's chat has unread mentions")
        let local = try await SyncInspector.read(postbox, peerIds: [chat]).chats[chat]
        #expect(local?.mentionCount == serverMentions)
        #expect(local?.mentionHoles == [])
        try await client.stopSyncing()
        try await postbox.close()
    }
}
