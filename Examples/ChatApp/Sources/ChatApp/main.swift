// A chat app's storage, written from the README and the DocC catalogue only (public API, no @testable): opens a
// Postbox, registers its types, adds peers and messages, renders a chat list and a history from typed live views,
// handles errors, and counts unread. Every step checks what it sees; any mismatch exits 1. `make test` runs it.
import Boxwood
import Foundation

/// The app's user type: Codable, so it needs no hand-written PostboxCoding, only its stable stored name.
struct ChatUser: Peer, PostboxCodable, Equatable {
    static let postboxTypeName = "ChatApp.User"
    let id: PeerId
    let name: String
    var indexName: PeerIndexNameRepresentation { .personName(first: name, last: "", addressNames: [], phoneNumber: nil) }
}

struct AppFailure: Error {}

extension PeerId.Namespace {
    /// The app's namespace of people.
    static let user: Self = 0
}

func check(_ condition: Bool, _ what: String) {
    if condition {
        print("ok: \(what)")
    } else {
        print("FAILED: \(what)")
        exit(1)
    }
}

/// The whole session, in one function so that its iterators are local state.
func runExample() async throws {
    let directory = NSTemporaryDirectory() + "boxwood-example-chat-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }

    try declareEncodable(ChatUser.self)
    let postbox = try await Postbox.open(path: directory)   // the default SeedConfiguration keeps read states

    let alice = ChatUser(id: PeerId(.user, 1), name: "Alice")
    let bob = ChatUser(id: PeerId(.user, 2), name: "Bob")

    // Live views first: the chat list, Alice's history and the unread total, each typed.
    var chatList = postbox.view(.chatList(count: 20)).makeAsyncIterator()
    var history = postbox.view(.messageHistory(peerId: alice.id, count: 10)).makeAsyncIterator()
    var unread = postbox.view(.totalUnreadState()).makeAsyncIterator()
    check(try await chatList.next()?.entries.contains { if case .chat = $0 { true } else { false } } == false, "the chat list starts empty")
    check(try await history.next()?.entries.isEmpty == true, "Alice's history starts empty")
    check(try await unread.next()?.state.messageCount == 0, "nothing is unread")

    // Peers and incoming messages in one transaction.
    try await postbox.transaction { tx in
        try tx.updatePeers([alice, bob])
        let messages = (1...3).map { n in
            StoreMessage(id: .id(MessageId(peerId: alice.id, namespace: 0, id: Int32(n))), timestamp: 1_700_000_000 + Int32(n),
                         flags: [.incoming], authorId: alice.id, text: "hello \(n)")
        } + [StoreMessage(id: .id(MessageId(peerId: bob.id, namespace: 0, id: 1)), timestamp: 1_700_000_010, flags: [.incoming],
                          authorId: bob.id, text: "hi from Bob")]
        let result = try tx.addMessages(messages, location: .upperHistoryBlock)
        check(result.existing.isEmpty, "four new messages")
    }

    // Render the chat list: each row carries the peer, the top message and the unread count; no further reads.
    let list = try await chatList.next()
    let rows = (list?.entries ?? []).compactMap { entry -> String? in
        guard case let .chat(item) = entry else { return nil }
        return "\((item.peer as? ChatUser)?.name ?? "?"): \(item.topMessage?.text ?? "") (\(item.unreadCount) unread)"
    }
    print(rows.map { "  " + $0 }.joined(separator: "\n"))
    check(rows == ["Bob: hi from Bob (1 unread)", "Alice: hello 3 (3 unread)"], "the chat list shows both chats, newest first")

    let aliceHistory = try await history.next()
    check(aliceHistory?.entries.map(\.text) == ["hello 1", "hello 2", "hello 3"], "Alice's history, oldest first")
    check(aliceHistory?.entries.allSatisfy { ($0.author as? ChatUser)?.name == "Alice" } == true, "each message comes with its author")

    // Renaming a peer re-renders the history that shows it.
    try await postbox.transaction { tx in try tx.updatePeers([ChatUser(id: alice.id, name: "Alice L.")]) }
    check(try await history.next()?.entries.first.flatMap { ($0.author as? ChatUser)?.name } == "Alice L.", "the history follows the author's new name")
    check(try await unread.next()?.state.messageCount == 4, "four unread messages")

    // Reading Alice's chat: the unread total follows.
    try await postbox.transaction { tx in try tx.applyIncomingReadMaxId(MessageId(peerId: alice.id, namespace: 0, id: 3)) }
    check(try await unread.next()?.state.messageCount == 1, "one unread message after reading Alice's chat")

    // Adding a message that exists reports it instead of dropping it silently.
    let again = try await postbox.transaction { tx in
        try tx.addMessages([StoreMessage(id: .id(MessageId(peerId: bob.id, namespace: 0, id: 1)), timestamp: 1, authorId: bob.id,
                                         text: "changed")], location: .random)
    }
    check(again.existing == [MessageId(peerId: bob.id, namespace: 0, id: 1)], "an existing message is reported")

    // Errors: a transaction that throws leaves nothing behind.
    do {
        try await postbox.transaction { tx in
            try tx.updatePeers([ChatUser(id: alice.id, name: "Mallory")])
            throw AppFailure()
        }
        check(false, "the transaction should have thrown")
    } catch is AppFailure {
        let name = try await postbox.transaction { tx in (try tx.getPeer(alice.id) as? ChatUser)?.name }
        check(name == "Alice L.", "a failed transaction is rolled back")
    }

    // Errors: a path that cannot be a database says why, for a person to read.
    let notADirectory = directory + ".plain-file"
    defer { try? FileManager.default.removeItem(atPath: notADirectory) }
    _ = FileManager.default.createFile(atPath: notADirectory, contents: Data("not a database".utf8))
    do {
        _ = try await Postbox.open(path: notADirectory)
        check(false, "opening a plain file should fail")
    } catch {
        print("  \(error.localizedDescription)")
        check(!error.localizedDescription.isEmpty && !error.localizedDescription.contains("error 1"), "the open error explains itself")
    }

    // Errors: a view asked for after close throws instead of ending silently.
    try await postbox.close()
    do {
        for try await _ in postbox.view(.chatList(count: 5)) {}
        check(false, "a view of a closed Postbox should throw")
    } catch let error as PostboxError {
        check(error == .closed, "a view of a closed Postbox throws .closed")
    }
    print("chat app example: all checks passed")
}

do {
    try await runExample()
} catch {
    print("FAILED: \(error.localizedDescription)")
    exit(1)
}
