import BoxwoodSync
@testable import BoxwoodSyncSimulator
import Testing

/// The server's read marker against deletes: message ids are never reused, so a client that read up to its
/// newest message keeps that position when the message was deleted before the read arrived (the sync
/// simulation once ended with the client at 510 and the server at 506 that way).
@Suite struct ServerReadStateTests {
    @Test func aReadUpToADeletedNewestMessageKeepsItsPosition() {
        var state = ServerState(configuration: SimulatedServerConfiguration(
            seed: 5, users: 2, groups: 1, channels: 1, secretChats: 1, initialHistory: 4...6))
        let peers = state.chats.keys.filter { state.chats[$0]!.messages.count >= 2 }.sorted()
        #expect(Set(peers.map(\.namespace)).count >= 3, "expected chats of several kinds with history")
        var sequence: Int64 = 0
        for peerId in peers {
            let top = state.chats[peerId]!.topMessageId
            state.chats[peerId]!.messages[top] = nil
            #expect(state.chats[peerId]!.topMessageId < top)
            sequence += 1
            _ = state.readHistory(peerId: peerId, maxId: top, mutation: ClientMutationId(clientId: 7, sequence: sequence))
            #expect(state.chats[peerId]!.readInboxMaxId == top, "\(peerId)")
            // A read past every id the chat ever had stops at the highest one.
            sequence += 1
            _ = state.readHistory(peerId: peerId, maxId: top + 1_000, mutation: ClientMutationId(clientId: 7, sequence: sequence))
            #expect(state.chats[peerId]!.readInboxMaxId == top, "\(peerId)")
        }
    }
}
