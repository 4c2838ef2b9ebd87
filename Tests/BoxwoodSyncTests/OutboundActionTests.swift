import Foundation
import Testing
import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator

/// Edits, reactions and deletions sent exactly once, and what a refusal leaves: a send refused for good is flagged
/// failed with the server's reason (and can be sent again), a refused edit or reaction is undone, and each refusal
/// is reported as an event.
@Suite("Outbound message actions", .timeLimit(.minutes(2)))
struct OutboundActionTests {
    struct Session {
        let server: SimulatedServer
        let client: SyncClient
        let directory: SyncTemporaryDirectory
        var events: Task<[SyncEvent], Never>
    }

    func open(faults: SimulatedFaults = .none) async throws -> Session {
        var configuration = SimulatedServerConfiguration(seed: 11, users: 3, groups: 1, channels: 2, secretChats: 0, initialHistory: 3...6,
                                                         faults: faults)
        configuration.readOnlyChannels = 1
        let server = SimulatedServer(configuration: configuration)
        let directory = SyncTemporaryDirectory()
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId,
                                               transport: server, configuration: .fast)
        let stream = client.manager.events
        let events = Task { var all: [SyncEvent] = []; for await event in stream { all.append(event) }; return all }
        try await client.start()
        await client.waitUntilQuiet()
        return Session(server: server, client: client, directory: directory, events: events)
    }

    func settle(_ session: Session) async {
        for _ in 0..<200 {
            await SyncSimulation.quiesce(client: session.client, server: session.server)
            if !(await session.client.outbound.isBusy) { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        await SyncSimulation.quiesce(client: session.client, server: session.server)
    }

    func finish(_ session: Session) async throws -> [OutboundFailure] {
        try await session.client.stop()
        let events = await session.events.value
        return events.compactMap { if case let .outboundFailed(failure) = $0 { failure } else { nil } }
    }

    func local(_ session: Session, _ peerId: PeerId) async throws -> LocalChatState {
        try await session.client.postbox.transaction { transaction in try SyncInspector.chatState(peerId, in: transaction) }
    }

    @Test func aRefusedSendIsFailedWithTheReasonAndCanBeSentAgain() async throws {
        let session = try await open()
        let readOnly = try #require(session.server.snapshot().chatStates.keys.filter { $0.namespace == SyncNamespaces.channel }.sorted().last)
        let localId = try await session.client.outbound.sendMessage(peerId: readOnly, text: "may I?", timestamp: session.server.snapshot().state.date)
        await settle(session)
        var state = try await local(session, readOnly)
        #expect(state.unsent.isEmpty && state.failed.map(\.text) == ["may I?"])
        #expect(state.failed.first?.failureReason == "CHAT_WRITE_FORBIDDEN")
        try await session.client.outbound.resendMessage(localId)
        state = try await local(session, readOnly)
        // Queued again: unsent, without its reason — unless the queue already sent it and it was refused again.
        #expect(state.unsent.count + state.failed.count == 1, "one copy, sending or failed again")
        await settle(session)
        state = try await local(session, readOnly)
        #expect(state.failed.count == 1, "refused again")
        let report = try await ConsistencyCheck.check(session.client.postbox, server: session.server)
        #expect(report.isConsistent, "\(report.differences.prefix(3))")
        let failures = try await finish(session)
        #expect(failures.map(\.action) == [.send, .send] && failures.allSatisfy { $0.reason == "CHAT_WRITE_FORBIDDEN" && $0.messageIds == [localId] })
    }

    @Test func editsReactionsAndDeletionsApplyOnceAndRefusalsAreUndone() async throws {
        // Half the answers are lost after the server applied the request: each is asked again with its mutation id.
        let session = try await open(faults: SimulatedFaults(lostAnswer: 0.5))
        let group = try #require(session.server.snapshot().chatStates.keys.first { $0.namespace == SyncNamespaces.group })
        session.server.generateBurst(messages: 2, into: group)
        let date = session.server.snapshot().state.date
        _ = try await session.client.outbound.sendMessage(peerId: group, text: "draft", timestamp: date)
        _ = try await session.client.outbound.sendMessage(peerId: group, text: "to delete", timestamp: date)
        await settle(session)
        let cloud = try await local(session, group).messages.values
        let mine = try #require(cloud.first { $0.outgoing && $0.text == "draft" })
        let doomed = try #require(cloud.first { $0.outgoing && $0.text == "to delete" })
        let theirs = try #require(cloud.filter { !$0.outgoing }.max { $0.id < $1.id })
        func id(_ message: LocalMessage) -> MessageId { MessageId(peerId: group, namespace: SyncNamespaces.cloudMessages, id: message.id) }

        try await session.client.outbound.editMessage(id(mine), text: "final")
        try await session.client.outbound.editMessage(id(theirs), text: "not mine to edit")
        #expect(try await local(session, group).messages[theirs.id]?.text == "not mine to edit", "shown at once")
        try await session.client.outbound.setReaction(id(theirs), emoji: "🔥")
        try await session.client.outbound.deleteMessages([id(doomed)])
        #expect(try await local(session, group).messages[doomed.id] == nil, "gone here at once")
        await settle(session)

        let server = session.server.snapshot().chatStates[group]!
        #expect(server.messages[mine.id]?.text == "final" && server.messages[mine.id]?.editVersion == 1, "edited once")
        #expect(server.messages[theirs.id]?.text == theirs.text, "someone else's message is not edited")
        #expect(server.messages[theirs.id]?.content.reactions.filter(\.chosen).map(\.emoji) == ["🔥"])
        #expect(server.messages[doomed.id] == nil)
        let state = try await local(session, group)
        #expect(state.messages[theirs.id]?.text == theirs.text, "the refused edit is undone")
        #expect(state.messages[mine.id]?.editVersion == 1 && state.messages[mine.id]?.text == "final")
        let report = try await ConsistencyCheck.check(session.client.postbox, server: session.server)
        #expect(report.isConsistent, "\(report.differences.prefix(3))")
        let failures = try await finish(session)
        #expect(failures.map(\.action) == [.edit] && failures.first?.reason == "MESSAGE_AUTHOR_REQUIRED")
    }

    @Test func deletionsForEveryoneAndForMe() async throws {
        let session = try await open()
        let group = try #require(session.server.snapshot().chatStates.keys.first { $0.namespace == SyncNamespaces.group })
        let date = session.server.snapshot().state.date
        // An incoming message of the group (pushed, so stored here), then one of the account's.
        let before = session.server.snapshot().chatStates[group]?.messages.count ?? 0
        for _ in 0..<200 where (session.server.snapshot().chatStates[group]?.messages.count ?? 0) == before {
            _ = session.server.generate(.incomingGroupMessage)
        }
        _ = try await session.client.outbound.sendMessage(peerId: group, text: "mine, for me only", timestamp: date)
        await settle(session)
        let cloud = try await local(session, group).messages.values
        let mine = try #require(cloud.first { $0.outgoing && $0.text == "mine, for me only" })
        let theirs = try #require(cloud.filter { !$0.outgoing }.max { $0.id < $1.id })
        func id(_ message: LocalMessage) -> MessageId { MessageId(peerId: group, namespace: SyncNamespaces.cloudMessages, id: message.id) }

        try await session.client.outbound.deleteMessages([id(mine)], forEveryone: false)
        // Someone else's message of a group for everyone: refused (no admin), then deleted for the account.
        try await session.client.outbound.deleteMessages([id(theirs)], forEveryone: true)
        #expect(try await local(session, group).messages[theirs.id] == nil, "gone here at once")
        await settle(session)

        let deletions = session.server.deletions().filter { $0.peerId == group }
        #expect(deletions.contains { $0.ids == [mine.id] && !$0.revoke })
        #expect(deletions.contains { $0.ids == [theirs.id] && !$0.revoke }, "the refused deletion for everyone is sent for the account")
        #expect(!deletions.contains { $0.ids == [theirs.id] && $0.revoke })
        #expect(session.server.snapshot().chatStates[group]?.messages[theirs.id] == nil)
        #expect(try await local(session, group).messages[theirs.id] == nil, "it stays deleted here")
        let report = try await ConsistencyCheck.check(session.client.postbox, server: session.server)
        #expect(report.isConsistent, "\(report.differences.prefix(3))")
        let failures = try await finish(session)
        #expect(failures.map(\.action) == [.delete] && failures.first?.reason == "MESSAGE_DELETE_FORBIDDEN")
    }

    @Test func aReactionOnAMessageDeletedOnTheServerIsRefusedAndUndone() async throws {
        let session = try await open()
        let group = try #require(session.server.snapshot().chatStates.keys.first { $0.namespace == SyncNamespaces.group })
        let target = try #require(try await local(session, group).messages.values.max { $0.id < $1.id })
        // Deleted on the server; the client has not heard yet (the push is lost).
        session.server.setFaults(SimulatedFaults(dropPush: 1))
        var deleted = false
        for _ in 0..<50 where !deleted {
            session.server.generate(.deleteMessages)
            deleted = session.server.snapshot().chatStates[group]?.messages[target.id] == nil
        }
        session.server.setFaults(.none)
        try #require(deleted)
        try await session.client.outbound.setReaction(MessageId(peerId: group, namespace: SyncNamespaces.cloudMessages, id: target.id), emoji: "👍")
        await settle(session)
        #expect(try await local(session, group).messages[target.id] == nil, "the deletion reached the client")
        let report = try await ConsistencyCheck.check(session.client.postbox, server: session.server)
        #expect(report.isConsistent, "\(report.differences.prefix(3))")
        let failures = try await finish(session)
        #expect(failures.map(\.reason) == ["MESSAGE_ID_INVALID"])
    }
}
