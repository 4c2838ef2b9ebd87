import Boxwood
@testable import BoxwoodSync
import BoxwoodSyncSimulator
import Testing

/// Each rebuild from the dialog list marks the chats it resets with a generation, and a chat not marked with the
/// current one is unverified (its history a hole) and discovered when it gets messages. A rebuild whose pages were
/// stored but which never closed (discarded, stopped, killed) must not lend its marks to the next rebuild: that one
/// takes a later cursor, so a chat only the first one reset would look known while the messages it got in between are
/// never fetched. (The sync simulation found it with lazy chat-list paging: a group's message missing between stored
/// ones, seed 1236 about once in twenty runs.)
@Suite("Rebuild generations", .timeLimit(.minutes(1)))
struct RebuildGenerationTests {
    @Test func aRebuildThatNeverClosedLeavesItsChatsUnverifiedForTheNextOne() async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(seed: 5, users: 4, groups: 1, channels: 0, secretChats: 0,
                                                                                 initialHistory: 10...20, faults: .none))
        let directory = SyncTemporaryDirectory()
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: .fast)
        let chats = server.snapshot().chatStates.keys.sorted()
        let (early, late) = (chats[0], chats[1])
        let answer = try await server.getPeerDialogs(peers: [early, late])
        let dialogs = Dictionary(uniqueKeysWithValues: answer.dialogs.map { ($0.peerId, $0) })
        let messages = Dictionary(grouping: answer.messages, by: \.peerId)
        let dialogOfLate = try #require(dialogs[late])
        let topOfLate = try #require(messages[late]?.first { $0.id == dialogOfLate.topMessage })
        let replayer = SyncReplayer(accountPeerId: server.accountPeerId)
        let cursor = SyncAccountState(pts: 1, qts: 0, date: 1, seq: 0)

        // Each batch in its own transaction, as the state manager stores them.
        let dialogOfEarly = try #require(dialogs[early])
        let firstGeneration = try await client.postbox.transaction { transaction in
            // The first rebuild stores a page resetting `early`, then stops before its closing batch.
            var first = SyncMutableState(initialState: nil, state: cursor, storedAnswers: 0, writesCursor: false)
            first.dialogGeneration = try SyncChatListHoles.nextGeneration(in: transaction)
            first.add(.resetChat(dialogOfEarly, messages: messages[early] ?? []))
            _ = try replayer.replay(first, in: transaction)
            return first.dialogGeneration
        }
        // The next one resets `late` only and closes with the rest of the list a hole.
        let generation = try await client.postbox.transaction { transaction in try SyncChatListHoles.nextGeneration(in: transaction) }
        #expect(generation != firstGeneration)
        try await client.postbox.transaction { transaction in
            var page = SyncMutableState(initialState: nil, state: cursor, storedAnswers: 0, writesCursor: false)
            page.dialogGeneration = generation
            page.add(.resetChat(dialogOfLate, messages: messages[late] ?? []))
            _ = try replayer.replay(page, in: transaction)
        }
        try await client.postbox.transaction { transaction in
            var closing = SyncMutableState(initialState: nil, state: cursor, storedAnswers: 0)
            closing.dialogGeneration = generation
            closing.add(.setChatListHole(below: ApiDialogsOffset(date: topOfLate.date, id: topOfLate.id, peerId: late)))
            _ = try replayer.replay(closing, in: transaction)
        }
        try await client.postbox.transaction { transaction in
            let current = try SyncChatListHoles.generation(in: transaction)
            #expect(current == generation)
            #expect(try SyncChatListHoles.isKnown(late, generation: current, in: transaction))
            #expect(try !SyncChatListHoles.isKnown(early, generation: current, in: transaction),
                    "a chat only the rebuild that never closed reset looks known to the next one")
            let holes = try transaction.getHoles(peerId: early, namespace: SyncNamespaces.cloudMessages, space: .everywhere)
            #expect(holes.contains { $0.upperBound >= Int32.max - 1 }, "the unverified chat's history is a hole up to the top: \(holes)")
        }
        try await client.stop()
    }
}
