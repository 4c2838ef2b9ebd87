import Foundation
import Testing
import Boxwood
import BoxwoodStore

/// The seed of a randomized test: BOXWOOD_SEED, or a fresh random one. Printed by each test so a failure
/// replays with `BOXWOOD_SEED=<seed> swift test --filter <test>`.
func testSeed(_ name: String) -> UInt64 {
    let seed: UInt64
    if let text = ProcessInfo.processInfo.environment["BOXWOOD_SEED"], let value = UInt64(text) {
        seed = value
    } else {
        seed = UInt64.random(in: 0...UInt64.max)
    }
    print("\(name) seed: \(seed) (replay with BOXWOOD_SEED=\(seed))")
    return seed
}

extension SplitMix64 {
    mutating func int32(in range: ClosedRange<Int32>) -> Int32 {
        let width = UInt64(Int64(range.upperBound) - Int64(range.lowerBound) + 1)
        return Int32(Int64(range.lowerBound) + Int64(next() % width))
    }

    mutating func int64() -> Int64 { Int64(bitPattern: next()) }

    /// Mostly small values, sometimes the extremes of Int32.
    mutating func interestingInt32() -> Int32 {
        switch below(8) {
        case 0: return [Int32.min, Int32.max, 0, -1, 1][below(5)]
        case 1: return Int32(truncatingIfNeeded: next())
        default: return int32(in: -3...3)
        }
    }

    mutating func string(maxLength: Int) -> String {
        let alphabet = Array("abcxyz012 ÄéЖ漢🙂")
        return String((0..<below(maxLength + 1)).map { _ in alphabet[below(alphabet.count)] })
    }
}

/// Encodes `value` as a root object.
func encodeRoot(_ value: any PostboxCoding) throws -> ReadBuffer {
    try PostboxEncoder.encodeRoot(value)
}

/// Round-trips `value` through a root encoding, decoding it as `T`.
func roundTrip<T: PostboxCoding>(_ value: T) throws -> T {
    try PostboxDecoder.decodeRoot(from: encodeRoot(value), as: T.self)
}

// MARK: App types used by the tests (registered once, by `registerTestTypes()`)

struct TestUser: Peer, Equatable {
    static let postboxTypeName = "TestUser"

    let id: PeerId
    let firstName: String
    let lastName: String
    let username: String?
    let associatedPeerId: PeerId?

    var indexName: PeerIndexNameRepresentation {
        .personName(first: firstName, last: lastName, addressNames: username.map { [$0] } ?? [], phoneNumber: nil)
    }

    init(id: PeerId, firstName: String, lastName: String, username: String?, associatedPeerId: PeerId? = nil) {
        self.id = id
        self.firstName = firstName
        self.lastName = lastName
        self.username = username
        self.associatedPeerId = associatedPeerId
    }

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        id = PeerId(try decoder.decodeInt64(forKey: "i"))
        firstName = decoder.decodeStringForKey("fn", orElse: "")
        lastName = decoder.decodeStringForKey("ln", orElse: "")
        username = decoder.decodeOptionalStringForKey("un")
        associatedPeerId = decoder.decodeOptionalInt64ForKey("ap").map(PeerId.init)
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(id.toInt64(), forKey: "i")
        encoder.encodeString(firstName, forKey: "fn")
        encoder.encodeString(lastName, forKey: "ln")
        if let username { encoder.encodeString(username, forKey: "un") }
        if let associatedPeerId { encoder.encodeInt64(associatedPeerId.toInt64(), forKey: "ap") }
    }
}

struct TestChannel: Peer, Equatable {
    static let postboxTypeName = "TestChannel"

    let id: PeerId
    let title: String

    var indexName: PeerIndexNameRepresentation { .title(title: title, addressNames: []) }

    init(id: PeerId, title: String) {
        self.id = id
        self.title = title
    }

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        id = PeerId(try decoder.decodeInt64(forKey: "i"))
        title = decoder.decodeStringForKey("t", orElse: "")
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(id.toInt64(), forKey: "i")
        encoder.encodeString(title, forKey: "t")
    }
}

struct ReplyAttribute: MessageAttribute, Equatable {
    static let postboxTypeName = "ReplyAttribute"

    let messageId: MessageId
    var associatedMessageIds: [MessageId] { [messageId] }

    init(messageId: MessageId) { self.messageId = messageId }

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        messageId = try decoder.decodeObject(forKey: "m", as: MessageId.self)
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeObject(messageId, forKey: "m")
    }
}

struct EditedAttribute: MessageAttribute, Equatable {
    static let postboxTypeName = "EditedAttribute"

    let date: Int32

    init(date: Int32) { self.date = date }

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        date = decoder.decodeInt32ForKey("d", orElse: 0)
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(date, forKey: "d")
    }
}

struct TestImage: Media, Equatable {
    static let postboxTypeName = "TestImage"

    let mediaId: MediaId?
    let sizes: [Int32]
    let caption: String
    var id: MediaId? { mediaId }

    init(mediaId: MediaId?, sizes: [Int32], caption: String) {
        self.mediaId = mediaId
        self.sizes = sizes
        self.caption = caption
    }

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        mediaId = try decoder.decodeObjectForKey("i", as: MediaId.self)
        sizes = decoder.decodeInt32ArrayForKey("s")
        caption = decoder.decodeStringForKey("c", orElse: "")
    }

    func encode(_ encoder: PostboxEncoder) {
        if let mediaId { encoder.encodeObject(mediaId, forKey: "i") }
        encoder.encodeInt32Array(sizes, forKey: "s")
        encoder.encodeString(caption, forKey: "c")
    }
}

struct TestPresence: PeerPresence, Equatable {
    static let postboxTypeName = "TestPresence"

    let lastSeen: Int32

    init(lastSeen: Int32) { self.lastSeen = lastSeen }
    init(decoder: PostboxDecoder) throws(PostboxDecodingError) { lastSeen = try decoder.decodeInt32(forKey: "l") }
    func encode(_ encoder: PostboxEncoder) { encoder.encodeInt32(lastSeen, forKey: "l") }
}

struct TestNotificationSettings: PeerNotificationSettings, Equatable {
    static let postboxTypeName = "TestNotificationSettings"

    let muteUntil: Int32?

    init(muteUntil: Int32?) { self.muteUntil = muteUntil }
    init(decoder: PostboxDecoder) throws(PostboxDecodingError) { muteUntil = decoder.decodeOptionalInt32ForKey("m") }
    func encode(_ encoder: PostboxEncoder) { if let muteUntil { encoder.encodeInt32(muteUntil, forKey: "m") } }
    func isRemovedFromTotalUnreadCount(default defaultValue: Bool) -> Bool { muteUntil.map { $0 > 0 } ?? defaultValue }
}

struct TestCachedData: CachedPeerData, Equatable {
    static let postboxTypeName = "TestCachedData"

    let about: String
    let pinnedMessageId: MessageId?
    let memberIds: [PeerId]
    var peerIds: Set<PeerId> { Set(memberIds) }
    var messageIds: Set<MessageId> { pinnedMessageId.map { [$0] } ?? [] }

    init(about: String, pinnedMessageId: MessageId?, memberIds: [PeerId]) {
        self.about = about
        self.pinnedMessageId = pinnedMessageId
        self.memberIds = memberIds
    }

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        about = decoder.decodeStringForKey("a", orElse: "")
        pinnedMessageId = try decoder.decodeObjectForKey("p", as: MessageId.self)
        memberIds = decoder.decodeInt64ArrayForKey("m").map(PeerId.init)
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeString(about, forKey: "a")
        if let pinnedMessageId { encoder.encodeObject(pinnedMessageId, forKey: "p") }
        encoder.encodeInt64Array(memberIds.map { $0.toInt64() }, forKey: "m")
    }
}

struct TestPreferences: PreferencesEntry, Equatable {
    static let postboxTypeName = "TestPreferences"

    let autoDownload: Bool
    let limits: [Int64]

    init(autoDownload: Bool, limits: [Int64]) {
        self.autoDownload = autoDownload
        self.limits = limits
    }

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        autoDownload = decoder.decodeBoolForKey("a", orElse: true)
        limits = decoder.decodeInt64ArrayForKey("l")
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeBool(autoDownload, forKey: "a")
        encoder.encodeInt64Array(limits, forKey: "l")
    }
}

struct TestStickerItem: OrderedItemListEntryContents, Equatable {
    static let postboxTypeName = "TestStickerItem"

    let fileId: Int64
    let emoji: [String]

    init(fileId: Int64, emoji: [String]) {
        self.fileId = fileId
        self.emoji = emoji
    }

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        fileId = try decoder.decodeInt64(forKey: "f")
        emoji = decoder.decodeStringArrayForKey("e")
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(fileId, forKey: "f")
        encoder.encodeStringArray(emoji, forKey: "e")
    }
}

/// Registers the test app types (idempotent; every test that decodes polymorphically calls it first).
func registerTestTypes() throws {
    try declareEncodable(TestUser.self)
    try declareEncodable(TestChannel.self)
    try declareEncodable(ReplyAttribute.self)
    try declareEncodable(EditedAttribute.self)
    try declareEncodable(TestImage.self)
    try declareEncodable(TestPresence.self)
    try declareEncodable(TestNotificationSettings.self)
    try declareEncodable(TestCachedData.self)
    try declareEncodable(TestPreferences.self)
    try declareEncodable(TestStickerItem.self)
}

/// A message-sized StoreMessage: ~100 characters of text, a reply, an edit date and one photo.
func sampleStoreMessage(id: Int32 = 4_242) -> StoreMessage {
    let peerId = PeerId(namespace: PeerId.Namespace(2), id: PeerId.Id(1_234_567_890))
    return StoreMessage(
        id: .id(MessageId(peerId: peerId, namespace: 0, id: id)),
        globallyUniqueId: 0x1234_5678_9abc,
        timestamp: 1_709_251_200,
        flags: [.incoming, .topIndexable],
        tags: MessageTags(rawValue: 1 << 3),
        forwardInfo: StoreMessageForwardInfo(authorId: PeerId(namespace: PeerId.Namespace(0), id: PeerId.Id(77)), sourceId: nil,
                                             sourceMessageId: nil, date: 1_709_000_000, authorSignature: "Editor"),
        authorId: PeerId(namespace: PeerId.Namespace(0), id: PeerId.Id(987_654)),
        text: "Meeting moved to 15:30 tomorrow — the room on the second floor is booked, bring the quarterly numbers.",
        attributes: [ReplyAttribute(messageId: MessageId(peerId: peerId, namespace: 0, id: id - 3)), EditedAttribute(date: 1_709_251_500)],
        media: [TestImage(mediaId: MediaId(namespace: 1, id: 5_000_000_001), sizes: [90, 320, 800, 1280], caption: "")]
    )
}

/// Field-by-field equality of two stored messages (StoreMessage holds existentials, so it is not Equatable).
func storeMessagesEqual(_ a: StoreMessage, _ b: StoreMessage) -> Bool {
    a.id == b.id && a.globallyUniqueId == b.globallyUniqueId && a.groupingKey == b.groupingKey && a.threadId == b.threadId
        && a.timestamp == b.timestamp && a.flags == b.flags && a.tags == b.tags && a.globalTags == b.globalTags
        && a.localTags == b.localTags && a.forwardInfo == b.forwardInfo && a.authorId == b.authorId && a.text == b.text
        && a.attributes.count == b.attributes.count && zip(a.attributes, b.attributes).allSatisfy { $0.isEqual(to: $1) }
        && a.media.count == b.media.count && zip(a.media, b.media).allSatisfy { $0.isEqual(to: $1) }
}
