import Testing
@testable import Boxwood
import BoxwoodStore

/// A stored type that only writes one Int32 field, declared under any name.
private protocol MarkedObject: PostboxCoding {
    var marker: Int32 { get }
    init(marker: Int32)
}

extension MarkedObject {
    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        self.init(marker: try decoder.decodeInt32(forKey: "m"))
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(marker, forKey: "m")
    }
}

/// Two app types named `Title` in different enums: under the old default (`String(describing:)`) both were named
/// `"Title"`; here they say so explicitly.
private enum Fruit {
    struct Title: MarkedObject {
        static let postboxTypeName = "Title"
        let marker: Int32
    }
}

private enum Book {
    struct Title: MarkedObject {
        static let postboxTypeName = "Title"
        let marker: Int32
    }
}

/// A different name with the same MurmurHash3 as `"Title"` (found by inverting the hash).
private struct HashTwinOfTitle: MarkedObject {
    static let postboxTypeName = "CollaaidUBUo"
    let marker: Int32
}

/// A name that hashes to 0, the type hash reserved for anonymous Codable objects.
private struct ZeroHashed: MarkedObject {
    static let postboxTypeName = "ZeroaadXdjJl"
    let marker: Int32
}

/// Encoded by the tests but never registered.
private struct NeverDeclared: MarkedObject {
    static let postboxTypeName = "TypeRegistryTests.NeverDeclared"
    let marker: Int32
}

/// Registered twice with different factories.
private struct Reregistered: MarkedObject {
    static let postboxTypeName = "TypeRegistryTests.Reregistered"
    let marker: Int32
}

@Suite struct TypeRegistryTests {
    /// The root object of `bytes`, decoded through the registry.
    private func decodeRegistered(_ bytes: MemoryBuffer) throws(PostboxDecodingError) -> any PostboxCoding {
        try PostboxDecoder.decodeRoot(from: bytes)
    }

    @Test func twoNestedTypesWithTheSameNameAreAThrownCollisionNamingBoth() throws {
        try declareEncodable(Fruit.Title.self)
        let hash = postboxTypeHash(of: Fruit.Title.self)
        let expected = PostboxTypeRegistrationError.hashCollision(
            type: PostboxTypeIdentity(typeName: "Title", swiftType: String(reflecting: Book.Title.self)),
            registered: PostboxTypeIdentity(typeName: "Title", swiftType: String(reflecting: Fruit.Title.self)),
            hash: hash)
        // Before the registry threw, this call trapped (preconditionFailure) and took the test process with it.
        let error = #expect(throws: PostboxTypeRegistrationError.self) { try declareEncodable(Book.Title.self) }
        #expect(error == expected)
        let description = String(describing: error)
        #expect(description.contains("Fruit.Title") && description.contains("Book.Title"))
        #expect(description.contains("\"Title\"") && description.contains("\(hash)"))

        // Nothing was registered by the refused call: the hash still decodes as the first type.
        let decoded = try decodeRegistered(encodeRoot(Book.Title(marker: 5)))
        #expect((decoded as? Fruit.Title)?.marker == 5)
    }

    @Test func differentNamesWithTheSameHashAreACollisionToo() throws {
        try declareEncodable(Fruit.Title.self)
        #expect(postboxTypeHash(of: HashTwinOfTitle.self) == postboxTypeHash(of: Fruit.Title.self))
        #expect(throws: PostboxTypeRegistrationError.hashCollision(
            type: PostboxTypeIdentity(HashTwinOfTitle.self), registered: PostboxTypeIdentity(Fruit.Title.self),
            hash: postboxTypeHash(of: Fruit.Title.self))) {
            try declareEncodable(HashTwinOfTitle.self)
        }
    }

    @Test func registeringTheSameTypeAgainReplacesItsFactory() throws {
        try declareEncodable(Reregistered.self)
        try declareEncodable(Reregistered.self) { decoder throws(PostboxDecodingError) in
            Reregistered(marker: try decoder.decodeInt32(forKey: "m") + 100)
        }
        let decoded = try decodeRegistered(encodeRoot(Reregistered(marker: 1)))
        #expect((decoded as? Reregistered)?.marker == 101)
        try declareEncodable(Reregistered.self)
        #expect((try decodeRegistered(encodeRoot(Reregistered(marker: 1))) as? Reregistered)?.marker == 1)
    }

    @Test func aNameHashingToTheReservedZeroIsRefusedAndNotEncoded() throws {
        #expect(postboxTypeHash(of: ZeroHashed.self) == 0)
        #expect(throws: PostboxTypeRegistrationError.reservedHash(type: PostboxTypeIdentity(ZeroHashed.self))) {
            try declareEncodable(ZeroHashed.self)
        }
        // The encoder writes unregistered types too, so it refuses the reserved hash itself: the error is
        // recorded and every way of getting the bytes out throws it.
        let reserved = PostboxEncodingError.reservedTypeHash(type: PostboxTypeIdentity(ZeroHashed.self))
        #expect(throws: reserved) { try PostboxEncoder.encodeRoot(ZeroHashed(marker: 1)) }
        let encoder = PostboxEncoder()
        encoder.encodeObjectArray([ZeroHashed(marker: 1)], forKey: "a")
        #expect(encoder.encodingError == reserved)
        #expect(throws: reserved) { try encoder.makeArray() }
        #expect(throws: reserved) { try encoder.makeReadBuffer() }
        encoder.reset()
        encoder.encodeObjectArray([ZeroHashed](), forKey: "a")   // no object of the type is written
        #expect(encoder.encodingError == nil)
        #expect(String(describing: reserved).contains("ZeroaadXdjJl"))
    }

    @Test func thePackagesTypesKeepTheNamesTheirStoredDataWasWrittenWith() {
        // Before postboxTypeName was required it defaulted to `String(describing:)`; stored data uses those hashes.
        let types: [any PostboxCoding.Type] = [
            MessageId.self, MediaId.self, MessageIndex.self, ChatListIndex.self, ChatListHole.self, PeerReadState.self,
            CombinedPeerReadState.self, StoreMessageForwardInfo.self, StoreMessage.self, CodableEntry.self,
            TestUser.self, TestChannel.self, ReplyAttribute.self, EditedAttribute.self, TestImage.self, TestPresence.self,
            TestNotificationSettings.self, TestCachedData.self, TestPreferences.self, TestStickerItem.self,
            TestAccountState.self, TestOperation.self, TestSecretChat.self,
        ]
        for type in types {
            #expect(type.postboxTypeName == String(describing: type))
        }
    }

    @Test func decodingAnUnregisteredTypeNamesIt() throws {
        let bytes = try encodeRoot(NeverDeclared(marker: 3))   // encoding computed (and remembered) its hash
        let hash = postboxTypeHash(of: NeverDeclared.self)
        let known = PostboxTypeIdentity(NeverDeclared.self)
        #expect(throws: PostboxDecodingError.unknownType(hash: hash, key: "_", knownType: known)) {
            try decodeRegistered(bytes)
        }
        let description = PostboxDecodingError.unknownType(hash: hash, key: "_", knownType: known).description
        #expect(description == "field \"_\": type \"TypeRegistryTests.NeverDeclared\" (hash \(hash)) is not registered; "
            + "call declareEncodable(\(String(reflecting: NeverDeclared.self)).self) at start-up")
        // Typed decoding does not need the registry.
        #expect(try PostboxDecoder.decodeRoot(from: bytes, as: NeverDeclared.self).marker == 3)
    }

    @Test func decodingAHashNoTypeHereHasExplains() throws {
        let hash: Int32 = 0x0B0C_0D0E
        #expect(PostboxTypeRegistry.shared.knownType(for: hash) == nil)
        // A root field "_" holding an empty object with that type hash, as another app version could write it.
        var bytes: [UInt8] = [1, UInt8(ascii: "_"), PostboxFieldType.object.rawValue]
        withUnsafeBytes(of: hash.littleEndian) { bytes += $0 }
        bytes += [0, 0, 0, 0]
        let error = #expect(throws: PostboxDecodingError.self) { try decodeRegistered(MemoryBuffer(bytes)) }
        #expect(error == .unknownType(hash: hash, key: "_", knownType: nil))
        let description = String(describing: error)
        #expect(description.contains("\(hash)") && description.contains("no type this process registered or encoded"))
        #expect(description.contains("declareEncodable"))
    }

    @Test func anAnonymousObjectThroughTheRegistrySaysHowToReadIt() throws {
        let encoder = PostboxEncoder()
        try encoder.encodeCodable(["a": 1], forKey: "_")
        let error = #expect(throws: PostboxDecodingError.self) { try decodeRegistered(encoder.makeReadBuffer()) }
        #expect(error == .unknownType(hash: 0, key: "_", knownType: nil))
        #expect(String(describing: error).contains("decodeCodable"))
    }
}
