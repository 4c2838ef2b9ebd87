import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// Interface states (table 67): set, read, replaced and removed in transactions, recorded in the change record only
/// when they change, durable across a reopen; malformed stored values are typed errors.
@Suite(.timeLimit(.minutes(1))) struct PeerChatInterfaceStateTests {
    static let alice = peer(0, 1)
    static let bob = peer(0, 2)

    static let draft = StoredPeerChatInterfaceState(
        overrideChatTimestamp: 500,
        historyScrollMessageIndex: MessageIndex(id: MessageId(peerId: alice, namespace: 1, id: 42), timestamp: 77),
        associatedMessageIds: [MessageId(peerId: alice, namespace: 0, id: 7), MessageId(peerId: bob, namespace: 2, id: -3)],
        data: [0, 1, 2, 255],
        chatListEmbeddedState: ChatListEmbeddedState(text: "Draft: héllo 👋", timestamp: 499))

    @Test func setReadRemoveRecordAndReopen() async throws {
        let path = NSTemporaryDirectory() + "bw-interface-states-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var postbox = try await Postbox.open(path: path)
        let log = ChangeLog()
        _ = postbox.addTransactionObserver { log.append($0) }
        let bare = StoredPeerChatInterfaceState()

        try await postbox.transaction { tx in
            #expect(try tx.getPeerChatInterfaceState(Self.alice) == nil)
            try tx.setPeerChatInterfaceState(Self.alice, state: Self.draft)
            try tx.setPeerChatInterfaceState(Self.bob, state: bare)
            // Read back inside the transaction (write-back cache).
            #expect(try tx.getPeerChatInterfaceState(Self.alice) == Self.draft)
        }
        #expect(log.records.count == 1)
        #expect(log.records.last?.updatedPeerChatInterfaceStates == [Self.alice: .some(Self.draft), Self.bob: .some(bare)])

        // The same state again changes nothing: no record at all.
        try await postbox.transaction { tx in try tx.setPeerChatInterfaceState(Self.alice, state: Self.draft) }
        #expect(log.records.count == 1)

        try await postbox.transaction { tx in try tx.setPeerChatInterfaceState(Self.bob, state: nil) }
        #expect(log.records.count == 2)
        #expect(log.records.last?.updatedPeerChatInterfaceStates == [Self.bob: StoredPeerChatInterfaceState?.none])

        // A rolled-back change leaves the stored state.
        await #expect(throws: PostboxTestError.self) {
            try await postbox.transaction { tx in
                try tx.setPeerChatInterfaceState(Self.alice, state: nil)
                throw PostboxTestError()
            }
        }
        #expect(try await postbox.transaction { tx in try tx.getPeerChatInterfaceState(Self.alice) } == Self.draft)

        try await postbox.close()
        postbox = try await Postbox.open(path: path)
        let (alice, bob) = try await postbox.transaction { tx in
            (try tx.getPeerChatInterfaceState(Self.alice), try tx.getPeerChatInterfaceState(Self.bob))
        }
        #expect(alice == Self.draft)
        #expect(bob == nil)
        try await postbox.close()
    }

    @Test func valueRoundTripsAndMalformedValuesAreTypedErrors() throws {
        let states = [Self.draft, StoredPeerChatInterfaceState(),
                      StoredPeerChatInterfaceState(chatListEmbeddedState: ChatListEmbeddedState(text: "", timestamp: 0))]
        for state in states {
            let bytes = PeerChatInterfaceStateValue.encode(state).withBytes { Array($0) }
            #expect(try bytes.withUnsafeBytes { try PeerChatInterfaceStateValue.decode($0) } == state)
            // Every truncation, and a trailing byte, is an error (never a trap).
            for length in 0..<bytes.count {
                #expect(throws: PostboxDecodingError.self) { try Array(bytes.prefix(length)).withUnsafeBytes { try PeerChatInterfaceStateValue.decode($0) } }
            }
            #expect(throws: PostboxDecodingError.self) { try (bytes + [0]).withUnsafeBytes { try PeerChatInterfaceStateValue.decode($0) } }
        }
        func decode(_ bytes: [UInt8]) throws -> StoredPeerChatInterfaceState { try bytes.withUnsafeBytes { try PeerChatInterfaceStateValue.decode($0) } }
        let empty: [UInt8] = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        #expect(try decode(empty) == StoredPeerChatInterfaceState())
        #expect(throws: PostboxDecodingError.self) { try decode([2] + empty.dropFirst()) }              // unknown format
        #expect(throws: PostboxDecodingError.self) { try decode([1, 0x08] + empty.dropFirst(2)) }      // undefined flag
        #expect(throws: PostboxDecodingError.self) { try decode([1, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]) }  // negative id count
        #expect(throws: PostboxDecodingError.self) { try decode([1, 0, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0]) }  // huge id count
        #expect(throws: PostboxDecodingError.self) { try decode([1, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]) }  // negative data length
        // Draft text that is not UTF-8.
        #expect(throws: PostboxDecodingError.invalidValue(key: "chatListEmbeddedState.text", reason: "not UTF-8")) {
            try decode([1, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 2, 0, 0, 0, 0xc3, 0x28])
        }
        // Tag summaries: 12 bytes, a count never negative.
        let summary: [UInt8] = [3, 0, 0, 0, 5, 0, 0, 0, 10, 0, 0, 0]
        #expect(try summary.withUnsafeBytes { try MessageHistoryTagsSummaryTable.decode($0) }
                == MessageHistoryTagNamespaceSummary(version: 3, count: 5, range: MessageHistoryTagNamespaceCountValidityRange(maxId: 10)))
        #expect(throws: PostboxDecodingError.self) { try Array(summary.prefix(11)).withUnsafeBytes { try MessageHistoryTagsSummaryTable.decode($0) } }
        #expect(throws: PostboxDecodingError.self) {
            try [3, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 10, 0, 0, 0].withUnsafeBytes { try MessageHistoryTagsSummaryTable.decode($0) }
        }
    }
}
