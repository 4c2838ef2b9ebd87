import Boxwood

/// Formatting and links over a message's text (Telegram's `TextEntitiesMessageAttribute`), in UTF-16 offsets. Only
/// entities that lie inside the text are stored.
///
/// Stored as parallel arrays (``SyncEntityCoding``); a value written by builds before the compact form (the Codable
/// bridge's field `"entities"`) still reads.
public struct SyncTextEntitiesAttribute: MessageAttribute, Codable, Equatable {
    public static let postboxTypeName = "SyncTextEntitiesAttribute"

    public let entities: [ApiMessageEntity]

    public init(entities: [ApiMessageEntity]) { self.entities = entities }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        if decoder.containsKey(SyncEntityCoding.legacyKey) {
            entities = try decoder.decodeCodable([ApiMessageEntity].self, forKey: SyncEntityCoding.legacyKey) ?? []
        } else {
            entities = try SyncEntityCoding.decode(decoder)
        }
    }

    public func encode(_ encoder: PostboxEncoder) {
        SyncEntityCoding.encode(entities, to: encoder)
    }

    public var associatedPeerIds: [PeerId] {
        entities.compactMap { if case let .mentionName(peerId) = $0.kind { peerId } else { nil } }
    }
}

/// The message this one replies to (Telegram's `ReplyMessageAttribute`). Reads resolve it into
/// ``Message/associatedMessages``; a reply whose message is not stored (deleted, or in a hole) resolves to nothing,
/// which a client shows as "deleted message".
public struct SyncReplyAttribute: MessageAttribute, Equatable {
    public static let postboxTypeName = "SyncReplyAttribute"

    public let messageId: MessageId

    public init(messageId: MessageId) { self.messageId = messageId }

    public var associatedMessageIds: [MessageId] { [messageId] }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        messageId = MessageId(peerId: PeerId(try decoder.decodeInt64(forKey: "p")), namespace: MessageId.Namespace(try decoder.decodeInt32(forKey: "n")),
                              id: try decoder.decodeInt32(forKey: "i"))
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(messageId.peerId.toInt64(), forKey: "p")
        encoder.encodeInt32(messageId.namespace.rawValue, forKey: "n")
        encoder.encodeInt32(messageId.id, forKey: "i")
    }
}

/// Reactions with their counts and the account's choice (Telegram's `ReactionsMessageAttribute`).
///
/// Stored as parallel arrays: `"re"` the emoji (strings), `"rc"` the counts and `"rs"` the chosen flags (0 or 1)
/// (Int32 arrays), all of one length. A value written by builds before this form (the Codable bridge's field
/// `"reactions"`) still reads.
public struct SyncReactionsAttribute: MessageAttribute, Codable, Equatable {
    public static let postboxTypeName = "SyncReactionsAttribute"

    public let reactions: [ApiReaction]

    public init(reactions: [ApiReaction]) { self.reactions = reactions }

    /// The Codable bridge's field, in values written before the compact form.
    static let legacyKey = "reactions"

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        if decoder.containsKey(Self.legacyKey) {
            reactions = try decoder.decodeCodable([ApiReaction].self, forKey: Self.legacyKey) ?? []
            return
        }
        let emoji = decoder.decodeStringArrayForKey("re")
        let counts = decoder.decodeInt32ArrayForKey("rc")
        let chosen = decoder.decodeInt32ArrayForKey("rs")
        guard counts.count == emoji.count, chosen.count == emoji.count else {
            throw .invalidValue(key: "re", reason: "\(emoji.count) emoji, \(counts.count) counts, \(chosen.count) flags")
        }
        reactions = emoji.indices.map { ApiReaction(emoji: emoji[$0], count: counts[$0], chosen: chosen[$0] != 0) }
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeStringArray(reactions.map(\.emoji), forKey: "re")
        encoder.encodeInt32Array(reactions.map(\.count), forKey: "rc")
        encoder.encodeInt32Array(reactions.map { $0.chosen ? 1 : 0 }, forKey: "rs")
    }

    /// The reaction the account chose, if any.
    public var chosen: String? { reactions.first { $0.chosen }?.emoji }
}

/// A channel post's view and forward counters (Telegram's `ViewCountMessageAttribute` and
/// `ForwardCountMessageAttribute`).
///
/// Int32 fields `"views"` and `"forwards"`, each left out when nil: the same bytes the Codable bridge wrote before.
public struct SyncCountersAttribute: MessageAttribute, Codable, Equatable {
    public static let postboxTypeName = "SyncCountersAttribute"

    public let views: Int32?
    public let forwards: Int32?

    public init(views: Int32?, forwards: Int32?) {
        self.views = views
        self.forwards = forwards
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        views = decoder.decodeOptionalInt32ForKey("views")
        forwards = decoder.decodeOptionalInt32ForKey("forwards")
    }

    public func encode(_ encoder: PostboxEncoder) {
        if let views { encoder.encodeInt32(views, forKey: "views") }
        if let forwards { encoder.encodeInt32(forwards, forKey: "forwards") }
    }
}

/// The stored form of ``SyncTextEntitiesAttribute``'s entities: parallel arrays of one length — `"ek"` the kinds
/// (``kindCodes``), `"eo"` the offsets, `"el"` the lengths (Int32 arrays) — and, in entity order, `"eu"` the URLs of
/// the `textUrl` entities (strings) and `"ep"` the peers of the `mentionName` ones (Int64 arrays).
enum SyncEntityCoding {
    /// The Codable bridge's field, in values written before this form.
    static let legacyKey = "entities"

    /// The code of each kind, written to disk: never renumber.
    static func code(_ kind: ApiMessageEntity.Kind) -> Int32 {
        switch kind {
        case .bold: 0
        case .italic: 1
        case .code: 2
        case .pre: 3
        case .url: 4
        case .mention: 5
        case .hashtag: 6
        case .textUrl: 7
        case .mentionName: 8
        }
    }

    static func encode(_ entities: [ApiMessageEntity], to encoder: PostboxEncoder) {
        var urls: [String] = []
        var peers: [Int64] = []
        for entity in entities {
            if case let .textUrl(url) = entity.kind { urls.append(url) }
            if case let .mentionName(peerId) = entity.kind { peers.append(peerId.toInt64()) }
        }
        encoder.encodeInt32Array(entities.map { code($0.kind) }, forKey: "ek")
        encoder.encodeInt32Array(entities.map(\.offset), forKey: "eo")
        encoder.encodeInt32Array(entities.map(\.length), forKey: "el")
        if !urls.isEmpty { encoder.encodeStringArray(urls, forKey: "eu") }
        if !peers.isEmpty { encoder.encodeInt64Array(peers, forKey: "ep") }
    }

    static func decode(_ decoder: PostboxDecoder) throws(PostboxDecodingError) -> [ApiMessageEntity] {
        let kinds = decoder.decodeInt32ArrayForKey("ek")
        let offsets = decoder.decodeInt32ArrayForKey("eo")
        let lengths = decoder.decodeInt32ArrayForKey("el")
        let urls = decoder.decodeStringArrayForKey("eu")
        let peers = decoder.decodeInt64ArrayForKey("ep")
        guard offsets.count == kinds.count, lengths.count == kinds.count else {
            throw .invalidValue(key: "ek", reason: "\(kinds.count) kinds, \(offsets.count) offsets, \(lengths.count) lengths")
        }
        var entities: [ApiMessageEntity] = []
        entities.reserveCapacity(kinds.count)
        var nextUrl = 0
        var nextPeer = 0
        for index in kinds.indices {
            let kind: ApiMessageEntity.Kind
            switch kinds[index] {
            case 0: kind = .bold
            case 1: kind = .italic
            case 2: kind = .code
            case 3: kind = .pre
            case 4: kind = .url
            case 5: kind = .mention
            case 6: kind = .hashtag
            case 7:
                guard nextUrl < urls.count else { throw .invalidValue(key: "eu", reason: "fewer URLs than textUrl entities") }
                kind = .textUrl(urls[nextUrl])
                nextUrl += 1
            case 8:
                guard nextPeer < peers.count else { throw .invalidValue(key: "ep", reason: "fewer peers than mentionName entities") }
                kind = .mentionName(PeerId(peers[nextPeer]))
                nextPeer += 1
            case let code:
                throw .invalidValue(key: "ek", reason: "unknown entity kind \(code)")
            }
            entities.append(ApiMessageEntity(kind: kind, offset: offsets[index], length: lengths[index]))
        }
        guard nextUrl == urls.count, nextPeer == peers.count else {
            throw .invalidValue(key: "ek", reason: "\(urls.count - nextUrl) URLs and \(peers.count - nextPeer) peers left over")
        }
        return entities
    }
}
