import Testing
@testable import Boxwood
import BoxwoodStore

/// An object exercising every field type.
private struct EverythingObject: PostboxCoding, Equatable {
    static let postboxTypeName = "EverythingObject"

    var i32: Int32 = -7
    var i64: Int64 = .min
    var flag = true
    var real = -0.125
    var text = "héllo 🙂"
    var raw: [UInt8] = [0, 1, 255]
    var ints: [Int32] = [1, -2, .max]
    var longs: [Int64] = [.max, 0]
    var strings = ["", "a", "Ж"]
    var blobs: [[UInt8]] = [[], [9, 9]]
    var ids = [MessageId(peerId: PeerId(1), namespace: 0, id: 5)]
    var child = MediaId(namespace: 3, id: 99)

    init() {}

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        i32 = try decoder.decodeInt32(forKey: "i32")
        i64 = try decoder.decodeInt64(forKey: "i64")
        flag = try decoder.decodeBool(forKey: "flag")
        real = try decoder.decodeDouble(forKey: "real")
        text = try decoder.decodeString(forKey: "text")
        raw = decoder.decodeByteArrayForKey("raw") ?? []
        ints = decoder.decodeInt32ArrayForKey("ints")
        longs = decoder.decodeInt64ArrayForKey("longs")
        strings = decoder.decodeStringArrayForKey("strings")
        blobs = decoder.decodeBytesArrayForKey("blobs").map { $0.makeArray() }
        ids = try decoder.decodeObjectArrayForKey("ids", as: MessageId.self)
        child = try decoder.decodeObject(forKey: "child", as: MediaId.self)
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(i32, forKey: "i32")
        encoder.encodeInt64(i64, forKey: "i64")
        encoder.encodeBool(flag, forKey: "flag")
        encoder.encodeDouble(real, forKey: "real")
        encoder.encodeString(text, forKey: "text")
        encoder.encodeBytes(raw, forKey: "raw")
        encoder.encodeInt32Array(ints, forKey: "ints")
        encoder.encodeInt64Array(longs, forKey: "longs")
        encoder.encodeStringArray(strings, forKey: "strings")
        encoder.encodeBytesArray(blobs.map { MemoryBuffer($0) }, forKey: "blobs")
        encoder.encodeObjectArray(ids, forKey: "ids")
        encoder.encodeObject(child, forKey: "child")
    }
}

/// A chain of objects `depth` levels deep.
private struct Chain: PostboxCoding {
    static let postboxTypeName = "Chain"

    let depth: Int
    init(depth: Int) { self.depth = depth }
    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        depth = 1 + (try decoder.decodeObjectForKey("next", as: Chain.self)?.depth ?? -1)
    }
    func encode(_ encoder: PostboxEncoder) {
        if depth > 0 { encoder.encodeObject(Chain(depth: depth - 1), forKey: "next") }
    }
}

private struct Renamed: PostboxCoding {
    static var postboxTypeName: String { "StableName" }
    init() {}
    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {}
    func encode(_ encoder: PostboxEncoder) {}
}

private struct NeverRegistered: PostboxCoding {
    static let postboxTypeName = "NeverRegistered"

    init() {}
    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {}
    func encode(_ encoder: PostboxEncoder) { encoder.encodeInt32(1, forKey: "x") }
}

@Suite struct CoderTests {
    @Test func murmurHash3MatchesPublishedVectors() {
        let vectors: [(String, UInt32, UInt32)] = [
            ("", 0, 0),
            ("", 1, 0x514e_28b7),
            ("", 0xffff_ffff, 0x81f1_6f39),
            ("test", 0, 0xba6b_d213),
            ("aaaa", 0x9747_b28c, 0x5a97_808a),
            ("Hello, world!", 0x9747_b28c, 0x2488_4cba),
            ("The quick brown fox jumps over the lazy dog", 0x9747_b28c, 0x2fa8_26cd),
        ]
        for (text, seed, expected) in vectors {
            #expect(MurmurHash3.hash32(text, seed: seed) == expected, "\(text) seed \(seed)")
        }
        #expect(postboxTypeHash(of: Renamed.self) == Int32(bitPattern: MurmurHash3.hash32("StableName", seed: MurmurHash3.postboxSeed)))
        #expect(postboxTypeHash(of: TestUser.self) == Int32(bitPattern: MurmurHash3.hash32("TestUser", seed: UInt32(bitPattern: -137_723_950))))
    }

    @Test func everyFieldTypeRoundTrips() throws {
        let value = EverythingObject()
        #expect(try roundTrip(value) == value)
        var empty = EverythingObject()
        empty.text = ""
        empty.raw = []
        empty.ints = []
        empty.longs = []
        empty.strings = []
        empty.blobs = []
        empty.ids = []
        #expect(try roundTrip(empty) == empty)
    }

    /// The exact bytes of a small object, as `docs/coding-format.md` specifies them.
    @Test func byteLayoutMatchesTheDocumentation() throws {
        let encoder = PostboxEncoder()
        encoder.encodeInt32(-2, forKey: "a")
        encoder.encodeString("hi", forKey: "bc")
        encoder.encodeBool(true, forKey: "")
        encoder.encodeNil(forKey: "n")
        encoder.encodeObject(MediaId(namespace: 1, id: 2), forKey: "o")
        let hash = postboxTypeHash(of: MediaId.self)
        let h = UInt32(bitPattern: hash)
        let expected: [UInt8] = [1, 0x61, 0, 0xfe, 0xff, 0xff, 0xff]
            + [2, 0x62, 0x63, 4, 2, 0, 0, 0, 0x68, 0x69]
            + [0, 2, 1]
            + [1, 0x6e, 11]
            + [1, 0x6f, 5, UInt8(h & 0xff), UInt8((h >> 8) & 0xff), UInt8((h >> 16) & 0xff), UInt8(h >> 24), 18, 0, 0, 0]
            + [1, 0x6e, 0, 1, 0, 0, 0]
            + [1, 0x69, 1, 2, 0, 0, 0, 0, 0, 0, 0]
        #expect(try encoder.makeArray() == expected)
        #expect(hash == Int32(bitPattern: MurmurHash3.hash32("MediaId", seed: MurmurHash3.postboxSeed)))
    }

    @Test func longKeysUseAMultiByteVarint() throws {
        let key = String(repeating: "k", count: 300)
        let encoder = PostboxEncoder()
        encoder.encodeInt32(42, forKey: key)
        let bytes = try encoder.makeArray()
        #expect(Array(bytes.prefix(2)) == [0xac, 0x02])
        let decoder = try PostboxDecoder(bytes: bytes)
        #expect(decoder.decodeOptionalInt32ForKey(key) == 42)
        #expect(decoder.fieldKeys == [key])
    }

    @Test func absentNullAndMismatchedFields() throws {
        let encoder = PostboxEncoder()
        encoder.encodeString("text", forKey: "s")
        encoder.encodeNil(forKey: "n")
        encoder.encodeInt32(7, forKey: "small")
        let decoder = try PostboxDecoder(bytes: encoder.makeArray())
        #expect(decoder.decodeOptionalInt32ForKey("missing") == nil)
        #expect(decoder.decodeInt32ForKey("missing", orElse: 5) == 5)
        #expect(decoder.decodeOptionalStringForKey("n") == nil)
        #expect(decoder.decodeOptionalInt32ForKey("s") == nil)
        #expect(decoder.decodeBoolForKey("s", orElse: true) == true)
        #expect(decoder.decodeInt32ArrayForKey("s") == [])
        #expect(try decoder.decodeObjectForKey("s") == nil)
        #expect(decoder.decodeOptionalInt64ForKey("small") == 7, "Int64 readers widen Int32 fields")
        #expect(!decoder.containsKey("n") && decoder.containsKey("s") && !decoder.containsKey("missing"))
        #expect(decoder.fieldType(forKey: "n") == .null)
        #expect(throws: PostboxDecodingError.missingField(key: "missing")) { try decoder.decodeInt32(forKey: "missing") }
        #expect(throws: PostboxDecodingError.missingField(key: "n")) { try decoder.decodeString(forKey: "n") }
        #expect(throws: PostboxDecodingError.typeMismatch(key: "s", expected: .int32, found: .string)) { try decoder.decodeInt32(forKey: "s") }
        #expect(throws: PostboxDecodingError.typeMismatch(key: "s", expected: .object, found: .string)) {
            try decoder.decodeObject(forKey: "s", as: MediaId.self)
        }
    }

    @Test func fieldsDecodeInAnyOrder() throws {
        let encoder = PostboxEncoder()
        for i in 0..<20 { encoder.encodeInt32(Int32(i), forKey: "f\(i)") }
        let decoder = try PostboxDecoder(bytes: encoder.makeArray())
        for i in [19, 0, 7, 7, 3, 18, 1, 12, 19, 0] {
            #expect(decoder.decodeOptionalInt32ForKey("f\(i)") == Int32(i))
        }
        #expect(decoder.decodeOptionalInt32ForKey("f20") == nil)
        #expect(decoder.decodeOptionalInt32ForKey("f5") == 5)
    }

    @Test func registeredTypesDecodePolymorphically() throws {
        try registerTestTypes()
        try declareEncodable(Renamed.self)
        let peers: [any PostboxCoding] = [
            TestUser(id: PeerId(5), firstName: "Ada", lastName: "L", username: "ada"),
            TestChannel(id: PeerId(namespace: PeerId.Namespace(2), id: PeerId.Id(9)), title: "News"),
            Renamed(),
        ]
        let encoder = PostboxEncoder()
        encoder.encodeObjectArray(peers, forKey: "p")
        encoder.encodeObject(peers[1], forKey: "one")
        let decoder = try PostboxDecoder(bytes: encoder.makeArray())
        let decoded = try decoder.decodeObjectArrayForKey("p")
        #expect(decoded.count == 3)
        #expect((decoded[0] as? TestUser) == (peers[0] as? TestUser))
        #expect((decoded[1] as? any Peer)?.isEqual(peers[1] as! any Peer) == true)
        #expect(decoded[2] is Renamed)
        let one = try decoder.decodeObjectForKey("one") as? any Peer
        #expect(one?.id == PeerId(namespace: PeerId.Namespace(2), id: PeerId.Id(9)))
        let root = try PostboxDecoder.decodeRoot(from: encodeRoot(peers[0]))
        #expect((root as? TestUser)?.firstName == "Ada")
    }

    @Test func unknownRegisteredTypesThrowOrAreSkipped() throws {
        try registerTestTypes()
        let encoder = PostboxEncoder()
        encoder.encodeObject(NeverRegistered(), forKey: "x")
        encoder.encodeObjectArray([EditedAttribute(date: 1), NeverRegistered(), EditedAttribute(date: 2)] as [any PostboxCoding], forKey: "a")
        let decoder = try PostboxDecoder(bytes: encoder.makeArray())
        let hash = postboxTypeHash(of: NeverRegistered.self)
        let known = PostboxTypeIdentity(NeverRegistered.self)   // encoding it made its name known
        #expect(throws: PostboxDecodingError.unknownType(hash: hash, key: "x", knownType: known)) { try decoder.decodeObjectForKey("x") }
        #expect(throws: PostboxDecodingError.unknownType(hash: hash, key: "a", knownType: known)) { try decoder.decodeObjectArrayForKey("a") }
        let skipped = try decoder.decodeObjectArrayForKey("a", skippingUnknownTypes: true)
        #expect(skipped.compactMap { ($0 as? EditedAttribute)?.date } == [1, 2])
        #expect(try decoder.decodeObjectForKey("x", as: NeverRegistered.self) != nil, "typed decoding ignores the registry")
    }

    @Test func objectDictionaryRoundTrips() throws {
        let dictionary: [MessageId: MediaId] = [
            MessageId(peerId: PeerId(1), namespace: 0, id: 1): MediaId(namespace: 1, id: 10),
            MessageId(peerId: PeerId(2), namespace: 1, id: -1): MediaId(namespace: 2, id: -20),
        ]
        let encoder = PostboxEncoder()
        encoder.encodeObjectDictionary(dictionary, forKey: "d")
        let decoder = try PostboxDecoder(bytes: encoder.makeArray())
        #expect(try decoder.decodeObjectDictionaryForKey("d", keyType: MessageId.self, valueType: MediaId.self) == dictionary)
        #expect(try decoder.decodeObjectDictionaryForKey("missing", keyType: MessageId.self, valueType: MediaId.self).isEmpty)
    }

    @Test func nestingIsLimited() throws {
        #expect(try roundTrip(Chain(depth: 60)).depth == 60)
        #expect(throws: PostboxDecodingError.nestingTooDeep(limit: PostboxDecoder.maximumNestingDepth)) {
            try PostboxDecoder(buffer: encodeRoot(Chain(depth: 150)))
        }
    }

    @Test func rootObjectIsRequired() throws {
        let encoder = PostboxEncoder()
        encoder.encodeInt32(1, forKey: "x")
        #expect(throws: PostboxDecodingError.missingRootObject) { try PostboxDecoder.decodeRoot(from: encoder.makeReadBuffer()) }
        #expect(throws: PostboxDecodingError.missingRootObject) { try PostboxDecoder(bytes: []).decodeRootObject(as: MediaId.self) }
    }

    @Test func encoderResetsAndDecodesFromBorrowedMemory() throws {
        let encoder = PostboxEncoder()
        encoder.encodeString(String(repeating: "x", count: 10_000), forKey: "big")
        encoder.reset()
        #expect(encoder.length == 0)
        encoder.encodeRootObject(MediaId(namespace: 4, id: 44))
        let value = try encoder.withBytes { bytes throws(PostboxDecodingError) in
            try PostboxDecoder.withDecoder(over: bytes) { decoder throws(PostboxDecodingError) in try decoder.decodeRootObject(as: MediaId.self) }
        }
        #expect(value == MediaId(namespace: 4, id: 44))
    }
}
