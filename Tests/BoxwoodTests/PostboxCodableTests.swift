import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// A peer stored with nothing but `Codable`, a name and a registration.
private struct CodableUser: Peer, PostboxCodable, Equatable {
    static let postboxTypeName = "PostboxCodableTests.CodableUser"
    let id: PeerId
    var firstName: String
    var lastName: String
    var usernames: [String]
    var bio: String?

    var indexName: PeerIndexNameRepresentation {
        .personName(first: firstName, last: lastName, addressNames: usernames, phoneNumber: nil)
    }
}

/// The first version of a stored profile.
private struct ProfileV1: PostboxCodable, Equatable {
    static let postboxTypeName = "PostboxCodableTests.Profile"
    var name: String
    var age: Int
}

/// The profile after two fields were added: one optional (nil in older objects), one with a default.
private struct ProfileV2: PostboxCodable, Equatable {
    static let postboxTypeName = "PostboxCodableTests.Profile"
    var name: String
    var age: Int
    var nickname: String?
    var theme: String

    init(name: String, age: Int, nickname: String?, theme: String) {
        self.name = name
        self.age = age
        self.nickname = nickname
        self.theme = theme
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        age = try container.decode(Int.self, forKey: .age)
        nickname = try container.decodeIfPresent(String.self, forKey: .nickname)
        theme = try container.decodeIfPresent(String.self, forKey: .theme) ?? "light"
    }
}

/// The same fields as ``ProfileV1``, written by hand: the documented layout says the bytes are equal.
private struct HandWrittenProfile: PostboxCoding {
    static let postboxTypeName = "PostboxCodableTests.Profile"
    var name: String
    var age: Int

    init(name: String, age: Int) {
        self.name = name
        self.age = age
    }

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        name = try decoder.decodeString(forKey: "name")
        age = Int(try decoder.decodeInt64(forKey: "age"))
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeString(name, forKey: "name")
        encoder.encodeInt64(Int64(age), forKey: "age")
    }
}

/// A value that is not a keyed container: stored as the single field `"_"`.
private enum Mood: String, PostboxCodable {
    static let postboxTypeName = "PostboxCodableTests.Mood"
    case calm, busy
}

private struct Refusal: Error {}

/// A peer whose `encode(to:)` writes a field and then throws.
private struct RefusingUser: Peer, PostboxCodable, Equatable {
    static let postboxTypeName = "PostboxCodableTests.RefusingUser"
    let id: PeerId
    var name: String

    var indexName: PeerIndexNameRepresentation { .title(title: name, addressNames: []) }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        throw Refusal()
    }
}

/// A message attribute whose `encode(to:)` throws.
private struct RefusingAttribute: MessageAttribute, PostboxCodable, Equatable {
    static let postboxTypeName = "PostboxCodableTests.RefusingAttribute"
    var note = "n"

    func encode(to encoder: any Encoder) throws { throw Refusal() }
}

/// A hand-written type with a Codable field that fails: it records the error instead of dropping it.
private struct HandWrittenWithRefusingField: PostboxCoding {
    static let postboxTypeName = "PostboxCodableTests.HandWrittenWithRefusingField"

    init() {}
    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {}

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(1, forKey: "before")
        do {
            try encoder.encodeCodable(RefusingAttribute(), forKey: "c")
        } catch {
            encoder.recordEncodingError(error)
        }
        encoder.recordEncodingError(.codable("a second error is not kept"))
    }
}

@Suite struct PostboxCodableTests {
    private func temporaryPath(_ tag: String) -> String {
        NSTemporaryDirectory() + "bw-postbox-codable-\(tag)-\(UUID().uuidString)"
    }

    /// The Codable failure `body` ends in (fails the test if it throws anything else or nothing).
    private func codableFailure(_ body: () throws -> Void) -> String? {
        let error = #expect(throws: PostboxEncodingError.self) { try body() }
        guard case let .codable(reason)? = error else { return nil }
        return reason
    }

    @Test func aCodablePeerRoundTripsThroughAPostboxWithOnlyANameAndARegistration() async throws {
        try declareEncodable(CodableUser.self)
        let path = temporaryPath("peer")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let alice = CodableUser(id: peer(0, 1), firstName: "Alice", lastName: "Liddell", usernames: ["alice", "al"], bio: nil)
        let bob = CodableUser(id: peer(0, 2), firstName: "Bob", lastName: "", usernames: [], bio: "hi")

        let postbox = try await Postbox.open(path: path)
        try await postbox.transaction { tx in try tx.updatePeers([alice, bob]) }
        try await postbox.close()

        let reopened = try await Postbox.open(path: path)   // read from disk, not from a cache
        let read = try await reopened.transaction { tx in
            [try tx.getPeer(alice.id) as? CodableUser, try tx.getPeer(bob.id) as? CodableUser]
        }
        #expect(read == [alice, bob])
        try await reopened.close()
    }

    @Test func aFieldAddedLaterReadsAsNilOrItsDefaultAndARemovedOneIsIgnored() throws {
        let v1 = ProfileV1(name: "Ada", age: 36)
        let upgraded = try PostboxDecoder.decodeRoot(from: encodeRoot(v1), as: ProfileV2.self)
        #expect(upgraded == ProfileV2(name: "Ada", age: 36, nickname: nil, theme: "light"))

        let v2 = ProfileV2(name: "Grace", age: 45, nickname: "Amazing", theme: "dark")
        #expect(try roundTrip(v2) == v2)
        #expect(try PostboxDecoder.decodeRoot(from: encodeRoot(v2), as: ProfileV1.self) == ProfileV1(name: "Grace", age: 45))
    }

    @Test func theFieldsAreTheCodingKeysAsAHandWrittenTypeWouldWriteThem() throws {
        let codable = try encodeRoot(ProfileV1(name: "Ada", age: 36)).makeArray()
        let handWritten = try encodeRoot(HandWrittenProfile(name: "Ada", age: 36)).makeArray()
        #expect(codable == handWritten)
        #expect(try PostboxDecoder.decodeRoot(from: MemoryBuffer(handWritten), as: ProfileV1.self) == ProfileV1(name: "Ada", age: 36))

        // A single value is the field "_".
        #expect(try roundTrip(Mood.busy) == .busy)
        let object = try PostboxDecoder(bytes: encodeRoot(Mood.busy).makeArray()).decodeRootObject(as: CodableObjectFields.self)
        #expect(object.fields == ["_"] && object.wholeValue == "busy")
    }

    @Test func aThrowingEncodableIsAnErrorOfTheEncoderNotACrashOrAHalfValue() throws {
        let reason = codableFailure { _ = try PostboxEncoder.encodeRoot(RefusingUser(id: peer(0, 9), name: "x")) }
        #expect(reason?.contains("RefusingUser") == true && reason?.contains("Refusal") == true)

        let encoder = PostboxEncoder()
        encoder.encodeObject(RefusingUser(id: peer(0, 9), name: "x"), forKey: "nested")
        #expect(encoder.encodingError != nil)
        #expect(throws: PostboxEncodingError.self) { try encoder.makeArray() }
        encoder.reset()
        #expect(encoder.encodingError == nil)
        #expect(try encoder.makeArray().isEmpty)

        // A hand-written encode(_:) records the failure of a Codable field; the first error is the one kept.
        let handWritten = codableFailure { _ = try PostboxEncoder.encodeRoot(HandWrittenWithRefusingField()) }
        #expect(handWritten?.contains("Refusal") == true)
    }

    @Test func aTransactionStoringAValueThatCannotBeEncodedThrowsAndLeavesNothing() async throws {
        try declareEncodable(CodableUser.self)
        try declareEncodable(RefusingUser.self)
        let path = temporaryPath("refusal")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path)
        let log = ChangeLog()
        let token = postbox.addTransactionObserver { log.append($0) }
        let good = CodableUser(id: peer(0, 1), firstName: "Good", lastName: "", usernames: [], bio: nil)
        let refusing = RefusingUser(id: peer(0, 2), name: "Refusing")

        let error = await #expect(throws: PostboxEncodingError.self) {
            try await postbox.transaction { tx in try tx.updatePeers([good, refusing]) }
        }
        guard case let .codable(reason)? = error else { Issue.record("expected a Codable failure, got \(String(describing: error))"); return }
        #expect(reason.contains("Refusal"))
        #expect(log.records.isEmpty)   // no observer (or view) heard of the failed transaction
        let afterFailure = try await postbox.transaction { tx in [try tx.getPeer(good.id), try tx.getPeer(refusing.id)] }
        #expect(afterFailure.allSatisfy { $0 == nil })

        // A message whose attribute cannot be encoded is refused by addMessages itself.
        let messageId = MessageId(peerId: good.id, namespace: 0, id: 1)
        await #expect(throws: PostboxEncodingError.self) {
            try await postbox.transaction { tx in
                _ = try tx.addMessages([StoreMessage(id: .id(messageId), timestamp: 1, authorId: nil, text: "x",
                                                     attributes: [RefusingAttribute()])], location: .random)
            }
        }
        #expect(try await postbox.transaction { tx in try tx.getMessage(messageId) } == nil)

        // The next transaction is unaffected.
        try await postbox.transaction { tx in try tx.updatePeers([good]) }
        #expect(try await postbox.transaction { tx in try tx.getPeer(good.id) as? CodableUser } == good)
        #expect(log.records.count == 1)
        postbox.removeTransactionObserver(token)
        try await postbox.close()
    }
}

/// Reads an object's field keys and its `"_"` string, to check a stored layout.
private struct CodableObjectFields: PostboxCoding {
    static let postboxTypeName = "PostboxCodableTests.CodableObjectFields"
    let fields: [String]
    let wholeValue: String?

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        fields = decoder.fieldKeys
        wholeValue = decoder.decodeOptionalStringForKey("_")
    }

    func encode(_ encoder: PostboxEncoder) {}
}
