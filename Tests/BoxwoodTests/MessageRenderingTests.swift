import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// `Message` as every read returns it: the author, the forward info's peers and the replied-to message resolved
/// from the tables; views re-render when one of those changes and stay quiet when an unrelated one does.
@Suite(.timeLimit(.minutes(1))) struct MessageRenderingTests {
    init() throws { try registerViewTestTypes() }

    static let chat = peer(0, 1)
    static let alice = peer(0, 2)
    static let stranger = peer(0, 3)
    static let channel = peer(2, 7)
    static let unrelated = peer(0, 9)
    static let question = MessageId(peerId: chat, namespace: 0, id: 1)
    static let answer = MessageId(peerId: chat, namespace: 0, id: 2)
    static let forwarded = MessageId(peerId: chat, namespace: 0, id: 3)
    static let channelPost = MessageId(peerId: channel, namespace: 0, id: 40)

    static func user(_ id: PeerId, _ name: String) -> TestUser { TestUser(id: id, firstName: name, lastName: "", username: nil) }

    func withPostbox(_ tag: String, _ body: (Postbox) async throws -> Void) async throws {
        let path = NSTemporaryDirectory() + "bw-rendering-\(tag)-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        try await body(postbox)
        try await postbox.close()
    }

    /// The chat, Alice, a channel; a question by Alice, an answer replying to it by an author not stored, and a
    /// message forwarded from the channel replying to a channel post.
    func populate(_ tx: Transaction) throws {
        try tx.updatePeers([Self.user(Self.chat, "Chat"), Self.user(Self.alice, "Alice"), TestChannel(id: Self.channel, title: "News")])
        let forward = StoreMessageForwardInfo(authorId: Self.alice, sourceId: Self.channel, sourceMessageId: Self.channelPost,
                                              date: 5, authorSignature: "A.")
        try tx.addMessages([
            StoreMessage(id: .id(Self.question), timestamp: 10, authorId: Self.alice, text: "why?"),
            StoreMessage(id: .id(Self.answer), timestamp: 11, authorId: Self.stranger, text: "because",
                         attributes: [ReplyAttribute(messageId: Self.question)]),
            StoreMessage(id: .id(Self.forwarded), timestamp: 12, forwardInfo: forward, authorId: Self.alice, text: "fwd",
                         attributes: [ReplyAttribute(messageId: Self.channelPost)]),
            StoreMessage(id: .id(Self.channelPost), timestamp: 4, authorId: nil, text: "post"),
        ], location: .random)
    }

    @Test func getMessageResolvesAuthorForwardAndReply() async throws {
        try await withPostbox("get") { postbox in
            try await postbox.transaction { tx in try populate(tx) }
            try await postbox.transaction { tx in
                let question = try #require(try tx.getMessage(Self.question))
                #expect((question.author as? TestUser)?.firstName == "Alice" && question.authorId == Self.alice)
                #expect((question.peer as? TestUser)?.firstName == "Chat")
                #expect(question.associatedMessages.isEmpty)

                // An author that is not stored: the id stays, the peer is nil.
                let answer = try #require(try tx.getMessage(Self.answer))
                #expect(answer.authorId == Self.stranger && answer.author == nil && answer.peers[Self.stranger] == nil)
                #expect(answer.associatedMessageIds == [Self.question])
                #expect(answer.associatedMessages[Self.question]?.text == "why?")
                #expect((answer.associatedMessages[Self.question]?.author as? TestUser)?.firstName == "Alice")

                let forwarded = try #require(try tx.getMessage(Self.forwarded))
                #expect((forwarded.forwardInfo?.author as? TestUser)?.firstName == "Alice")
                #expect((forwarded.forwardInfo?.source as? TestChannel)?.title == "News")
                #expect(forwarded.forwardInfo?.sourceId == Self.channel && forwarded.forwardInfo?.authorSignature == "A.")
                #expect(Set(forwarded.peers.keys) == [Self.chat, Self.alice, Self.channel])
                #expect(forwarded.associatedMessages[Self.channelPost]?.text == "post")

                // The stored form round-trips: storing it again changes nothing but the version.
                let before = forwarded.stableVersion
                try tx.updateMessage(Self.forwarded, forwarded.storeMessage)
                let again = try #require(try tx.getMessage(Self.forwarded))
                #expect(storeMessagesEqual(again.storeMessage, forwarded.storeMessage) && again.stableVersion == before &+ 1)

                let history = try tx.getMessageHistory(peerId: Self.chat, anchor: nil, direction: .later, limit: 10)
                #expect(history.map(\.text) == ["why?", "because", "fwd"])
                #expect(history.map { ($0.author as? TestUser)?.firstName } == ["Alice", nil, "Alice"])
            }
        }
    }

    /// An observer's change record carries the inserted message as it reads at the end of the transaction: an
    /// author stored later in the same transaction is resolved.
    @Test func changeRecordsCarryRenderedMessages() async throws {
        try await withPostbox("changes") { postbox in
            let log = ChangeLog()
            let token = postbox.addTransactionObserver { log.append($0) }
            try await postbox.transaction { tx in
                try tx.addMessages([StoreMessage(id: .id(Self.question), timestamp: 10, authorId: Self.alice, text: "why?")], location: .random)
                try tx.updatePeers([Self.user(Self.alice, "Alice")])
            }
            postbox.removeTransactionObserver(token)
            let inserted = log.records.flatMap { $0.operationsByPeerId[Self.chat] ?? [] }.compactMap { operation -> Message? in
                if case let .insertMessage(message) = operation { return message } else { return nil }
            }
            #expect(inserted.count == 1)
            #expect((inserted.first?.author as? TestUser)?.firstName == "Alice")
        }
    }

    /// The record lists the chats whose history changed in ``PostboxChanges/historyPeerIds`` (what views test, and
    /// all a record has when no observer is registered), exactly the chats of the operations an observer gets.
    @Test func historyPeerIdsAreTheChatsOfTheOperations() async throws {
        try await withPostbox("history-peers") { postbox in
            let other = peer(0, 9)
            try await postbox.transaction { tx in
                try tx.addMessages([StoreMessage(id: .id(Self.question), timestamp: 10, authorId: Self.alice, text: "why?")], location: .random)
            }
            let log = ChangeLog()
            let token = postbox.addTransactionObserver { log.append($0) }
            try await postbox.transaction { tx in
                try tx.addMessages([StoreMessage(id: .id(MessageId(peerId: other, namespace: Self.question.namespace, id: 1)), timestamp: 11,
                                                 authorId: Self.alice, text: "hi")], location: .random)
                try tx.deleteMessages([Self.question])
            }
            try await postbox.transaction { tx in try tx.updatePeers([Self.user(Self.alice, "Alice")]) }
            postbox.removeTransactionObserver(token)
            #expect(log.records.count == 2)
            #expect(log.records.first?.historyPeerIds == [Self.chat, other])
            #expect(log.records.first.map { Set($0.operationsByPeerId.keys) } == [Self.chat, other])
            #expect(log.records.last?.historyPeerIds == [] && log.records.last?.operationsByPeerId.isEmpty == true)
        }
    }

    @Test func historyViewFollowsAuthorsAndRepliedMessages() async throws {
        try await withPostbox("history") { postbox in
            try await postbox.transaction { tx in try populate(tx) }
            let key = PostboxViewQuery.messageHistory(peerId: Self.chat, count: 10).key
            @Sendable func authors(_ view: any PostboxView) -> [String?] {
                (view as! MessageHistoryView).entries.map { ($0.author as? TestUser)?.firstName }
            }
            try await expectSelectiveView(postbox, key, initial: { authors($0) == ["Alice", nil, "Alice"] }, steps: [
                .irrelevant { tx in try tx.updatePeers([Self.user(Self.unrelated, "Nobody")]) },
                // Storing the same peer again changes nothing.
                .irrelevant { tx in try tx.updatePeers([Self.user(Self.alice, "Alice")]) },
                .relevant({ tx in try tx.updatePeers([Self.user(Self.alice, "Alicia")]) }, expect: { authors($0) == ["Alicia", nil, "Alicia"] }),
                // The unknown author becomes known.
                .relevant({ tx in try tx.updatePeers([Self.user(Self.stranger, "Stranger")]) }, expect: { authors($0) == ["Alicia", "Stranger", "Alicia"] }),
                .irrelevant { tx in
                    try tx.addMessages([StoreMessage(id: .id(MessageId(peerId: Self.channel, namespace: 0, id: 41)), timestamp: 50, authorId: nil, text: "x")],
                                       location: .random)
                },
                // The replied-to post lives in another chat; its edit shows in this chat's view.
                .relevant({ tx in
                    try tx.updateMessage(Self.channelPost, StoreMessage(id: .id(Self.channelPost), timestamp: 4, authorId: nil, text: "post, edited"))
                }, expect: { view in
                    (view as! MessageHistoryView).entries.last?.associatedMessages[Self.channelPost]?.text == "post, edited"
                }),
            ])
        }
    }

    @Test func messagesViewFollowsRepliedMessages() async throws {
        try await withPostbox("messages") { postbox in
            try await postbox.transaction { tx in try populate(tx) }
            try await expectSelectiveView(postbox, .messages([Self.answer]), initial: { view in
                (view as! MessagesView).messages[Self.answer]?.associatedMessages[Self.question]?.text == "why?"
            }, steps: [
                .irrelevant { tx in try tx.updatePeers([Self.user(Self.unrelated, "Nobody")]) },
                .relevant({ tx in
                    try tx.updateMessage(Self.question, StoreMessage(id: .id(Self.question), timestamp: 10, authorId: Self.alice, text: "why not?"))
                }, expect: { view in
                    (view as! MessagesView).messages[Self.answer]?.associatedMessages[Self.question]?.text == "why not?"
                }),
                .relevant({ tx in try tx.deleteMessages([Self.question]) }, expect: { view in
                    let answer = (view as! MessagesView).messages[Self.answer]
                    return answer != nil && answer?.associatedMessages.isEmpty == true && answer?.associatedMessageIds == [Self.question]
                }),
            ])
        }
    }

    /// After another process's commits the views are rebuilt, and a history view emits only when its window changed:
    /// a commit to another chat, or a peer no message of it names, wakes it not.
    @Test func externalCommitElsewhereWakesNoHistoryView() async throws {
        let path = NSTemporaryDirectory() + "bw-rendering-external-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        let other = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        try await postbox.transaction { tx in try populate(tx) }
        let recorder = ViewRecorder()
        let key = PostboxViewQuery.messageHistory(peerId: Self.chat, count: 10).key
        let disposable = postbox.combinedView(keys: [key], onNext: { recorder.record($0) }, onError: { recorder.recordError($0) })
        _ = try await recorder.waitFor(count: 1)

        try await other.transaction { tx in
            try tx.addMessages([StoreMessage(id: .id(MessageId(peerId: Self.unrelated, namespace: 0, id: 1)), timestamp: 60, authorId: nil,
                                             text: "elsewhere")], location: .random)
            try tx.updatePeers([Self.user(Self.unrelated, "Nobody")])
        }
        try await postbox.transaction { _ in }   // sees the other instance's commit and rebuilds its views
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorder.count == 1, "a commit to another chat re-emitted the history view")

        try await other.transaction { tx in
            try tx.addMessages([StoreMessage(id: .id(MessageId(peerId: Self.chat, namespace: 0, id: 9)), timestamp: 70, authorId: Self.alice,
                                             text: "here")], location: .random)
        }
        try await postbox.transaction { _ in }
        let views = try await recorder.waitFor(count: 2)
        let history = views.last?.views[key] as? MessageHistoryView
        #expect(history?.entries.last?.text == "here" && history?.updateType == .updateVisible)
        disposable.dispose()
        try await other.close()
        try await postbox.close()
    }
}
