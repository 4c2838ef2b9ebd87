import Testing
import Boxwood

/// Version 1 of an app type.
private struct ProfileV1: PostboxCoding, Equatable {
    static var postboxTypeName: String { "Profile" }
    var id: Int64
    var name: String
    var age: Int32

    init(id: Int64, name: String, age: Int32) {
        self.id = id
        self.name = name
        self.age = age
    }

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        id = try decoder.decodeInt64(forKey: "id")
        name = decoder.decodeStringForKey("name", orElse: "")
        age = decoder.decodeInt32ForKey("age", orElse: 0)
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(id, forKey: "id")
        encoder.encodeString(name, forKey: "name")
        encoder.encodeInt32(age, forKey: "age")
    }
}

/// Version 2 of the same type: new fields of every kind before, between and after the old ones.
private struct ProfileV2: PostboxCoding, Equatable {
    static var postboxTypeName: String { "Profile" }
    var id: Int64
    var name: String
    var age: Int32
    var bio: String?
    var scores: [Double]
    var languages: [String]
    var avatar: MediaId?
    var history: [MessageId]
    var verified: Bool

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        id = try decoder.decodeInt64(forKey: "id")
        name = decoder.decodeStringForKey("name", orElse: "")
        age = decoder.decodeInt32ForKey("age", orElse: 0)
        bio = decoder.decodeOptionalStringForKey("bio")
        scores = (decoder.decodeInt64ArrayForKey("scores")).map { Double(bitPattern: UInt64(bitPattern: $0)) }
        languages = decoder.decodeStringArrayForKey("languages")
        avatar = try decoder.decodeObjectForKey("avatar", as: MediaId.self)
        history = try decoder.decodeObjectArrayForKey("history", as: MessageId.self)
        verified = decoder.decodeBoolForKey("verified", orElse: false)
    }

    init(id: Int64, name: String, age: Int32, bio: String?, scores: [Double], languages: [String], avatar: MediaId?, history: [MessageId], verified: Bool) {
        self.id = id
        self.name = name
        self.age = age
        self.bio = bio
        self.scores = scores
        self.languages = languages
        self.avatar = avatar
        self.history = history
        self.verified = verified
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeObjectArray(history, forKey: "history")
        encoder.encodeInt64(id, forKey: "id")
        if let avatar { encoder.encodeObject(avatar, forKey: "avatar") }
        encoder.encodeString(name, forKey: "name")
        if let bio { encoder.encodeString(bio, forKey: "bio") }
        encoder.encodeInt64Array(scores.map { Int64(bitPattern: $0.bitPattern) }, forKey: "scores")
        encoder.encodeInt32(age, forKey: "age")
        encoder.encodeStringArray(languages, forKey: "languages")
        encoder.encodeBool(verified, forKey: "verified")
        try? encoder.encodeCodable(["extra": [1, 2, 3]], forKey: "codableExtra")
    }
}

/// Version 3 changed the type of `age` (now a string): a version 1 reader falls back to its default.
private struct ProfileV3: PostboxCoding {
    static var postboxTypeName: String { "Profile" }
    init() {}
    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {}
    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(3, forKey: "id")
        encoder.encodeString("C", forKey: "name")
        encoder.encodeString("thirty", forKey: "age")
    }
}

private struct SettingsV1: Codable, Equatable {
    var theme: String
    var fontSize: Int
    var muted: [Int64]?
}

private struct SettingsV2: Codable, Equatable {
    enum Layout: String, Codable { case compact, regular }
    var theme: String
    var fontSize: Int
    var muted: [Int64]?
    var layout: Layout?
    var shortcuts: [String: [Int]]?
}

@Suite struct CompatibilityTests {
    private let v2 = ProfileV2(id: 77, name: "Grace", age: 45, bio: "admiral", scores: [1.5, -2], languages: ["en", "fr"],
                               avatar: MediaId(namespace: 1, id: 8), history: [MessageId(peerId: PeerId(3), namespace: 0, id: 4)], verified: true)

    @Test func olderReaderSkipsFieldsANewerWriterAdded() throws {
        let v1 = try PostboxDecoder.decodeRoot(from: encodeRoot(v2), as: ProfileV1.self)
        #expect(v1 == ProfileV1(id: 77, name: "Grace", age: 45))
    }

    @Test func newerReaderDefaultsFieldsAnOlderWriterLacked() throws {
        let v2 = try PostboxDecoder.decodeRoot(from: encodeRoot(ProfileV1(id: 1, name: "Alan", age: 41)), as: ProfileV2.self)
        #expect(v2 == ProfileV2(id: 1, name: "Alan", age: 41, bio: nil, scores: [], languages: [], avatar: nil, history: [], verified: false))
    }

    @Test func fieldWhoseTypeChangedReadsAsAbsent() throws {
        let v1 = try PostboxDecoder.decodeRoot(from: encodeRoot(ProfileV3()), as: ProfileV1.self)
        #expect(v1 == ProfileV1(id: 3, name: "C", age: 0))
    }

    @Test func newerVersionRoundTrips() throws {
        #expect(try roundTrip(v2) == v2)
    }

    @Test func codableTypesEvolveBothWays() throws {
        let newer = SettingsV2(theme: "dark", fontSize: 17, muted: [5, 6], layout: .compact, shortcuts: ["a": [1], "b": []])
        let encoder = PostboxEncoder()
        try encoder.encodeCodable(newer, forKey: "s")
        let readByOld = try PostboxDecoder(bytes: encoder.makeArray()).decodeCodable(SettingsV1.self, forKey: "s")
        #expect(readByOld == SettingsV1(theme: "dark", fontSize: 17, muted: [5, 6]))

        let older = SettingsV1(theme: "light", fontSize: 12, muted: nil)
        let oldEncoder = PostboxEncoder()
        try oldEncoder.encodeCodable(older, forKey: "s")
        let readByNew = try PostboxDecoder(bytes: oldEncoder.makeArray()).decodeCodable(SettingsV2.self, forKey: "s")
        #expect(readByNew == SettingsV2(theme: "light", fontSize: 12, muted: nil, layout: nil, shortcuts: nil))
    }
}
