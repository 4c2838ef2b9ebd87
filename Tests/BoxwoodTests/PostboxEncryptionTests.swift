import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// Postbox's encryption contract: the parameters pass through to the engine, the message text and its full-text
/// index are encrypted, and `removeDatabaseOnError` wipes only a database that cannot be decrypted.
@Suite(.timeLimit(.minutes(1))) struct PostboxEncryptionTests {
    init() throws { try registerViewTestTypes() }

    static let chat = peer(0, 1)
    static var key: ValueBoxEncryptionParameters {
        ValueBoxEncryptionParameters(forceEncryptionIfNoSet: false, key: ValueBoxEncryptionParameters.Key(bytes: Array(repeating: 0x5A, count: 32))!,
                                     salt: ValueBoxEncryptionParameters.Salt(bytes: Array(repeating: 0x11, count: 16))!)
    }
    static var otherKey: ValueBoxEncryptionParameters {
        ValueBoxEncryptionParameters(forceEncryptionIfNoSet: false, key: ValueBoxEncryptionParameters.Key(bytes: Array(repeating: 0x5B, count: 32))!,
                                     salt: ValueBoxEncryptionParameters.Salt(bytes: Array(repeating: 0x11, count: 16))!)
    }
    static let marker = "quixotically-zymurgical"

    func populate(_ postbox: Postbox) async throws {
        try await postbox.transaction { tx in
            try tx.updatePeers([TestUser(id: Self.chat, firstName: "Alice", lastName: "", username: nil)])
            try tx.addMessages((1...40).map { i in
                StoreMessage(id: .id(MessageId(peerId: Self.chat, namespace: 0, id: Int32(i))), timestamp: Int32(i), authorId: Self.chat,
                             text: "message \(i) about \(Self.marker)")
            }, location: .upperHistoryBlock)
        }
    }

    @Test func messagesAndTheirSearchIndexAreEncrypted() async throws {
        let path = NSTemporaryDirectory() + "bw-postbox-encrypted-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed, encryptionParameters: Self.key)
        try await populate(postbox)
        let found = try await postbox.transaction { tx in try tx.searchMessages("zymurgical").count }
        #expect(found == 40)
        try await postbox.close()
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
            #expect(bytes.range(of: Data(Self.marker.utf8)) == nil, "the message text is in \(name) in the clear")
            #expect(bytes.range(of: Data("zymurgical".utf8)) == nil, "an indexed word is in \(name) in the clear")
        }
        postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed, encryptionParameters: Self.key)
        let text = try await postbox.transaction { tx in
            try tx.getMessage(MessageId(peerId: Self.chat, namespace: 0, id: 7))?.text
        }
        #expect(text == "message 7 about \(Self.marker)")
        try await postbox.close()
    }

    @Test func removeDatabaseOnErrorWipesOnlyADatabaseThatCannotBeDecrypted() async throws {
        let path = NSTemporaryDirectory() + "bw-postbox-wipe-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed, encryptionParameters: Self.key)
        try await populate(postbox)
        try await postbox.close()

        await #expect(throws: BoxwoodError.wrongKey(path: path + "/data")) {
            _ = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed, encryptionParameters: Self.otherKey)
        }
        var readOnly = ValueBoxOptions()
        readOnly.readOnly = true
        await #expect(throws: BoxwoodError.wrongKey(path: path + "/data")) {
            _ = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed, options: readOnly,
                                       encryptionParameters: Self.otherKey, removeDatabaseOnError: true)
        }
        // Still there under its own key.
        let again = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed, encryptionParameters: Self.key)
        #expect(try await again.transaction { tx in try tx.getMessage(MessageId(peerId: Self.chat, namespace: 0, id: 1)) } != nil)
        try await again.close()

        let wiped = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed, encryptionParameters: Self.otherKey,
                                           removeDatabaseOnError: true)
        #expect(try await wiped.transaction { tx in try tx.getMessage(MessageId(peerId: Self.chat, namespace: 0, id: 1)) } == nil)
        try await populate(wiped)
        try await wiped.close()
        let reopened = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed, encryptionParameters: Self.otherKey)
        #expect(try await reopened.transaction { tx in try tx.getMessage(MessageId(peerId: Self.chat, namespace: 0, id: 1)) } != nil)
        try await reopened.close()
    }
}
