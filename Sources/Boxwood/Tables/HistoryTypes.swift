/// Types shared by the message-history tables: the stored message record, the change records every table
/// accumulates during a transaction, the configuration taken from Postbox's `SeedConfiguration`, and small
/// byte helpers for keys and hand-rolled values.

/// Why a history table operation failed. Bad stored bytes are reported, never trapped on.
public enum HistoryTableError: Error, Equatable, CustomStringConvertible {
    /// A stored key or value does not have the expected layout.
    case corrupt(table: Int32, reason: String)
    /// Every id of a (peer, namespace) has been used: a partial id cannot be assigned.
    case idSpaceExhausted(peerId: PeerId, namespace: MessageId.Namespace)
    /// The message to update or change does not exist.
    case messageNotFound(MessageId)
    /// An argument no table accepts (for example a partial id where a full one is needed).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case let .corrupt(table, reason): return "table \(table) is corrupt: \(reason)"
        case let .idSpaceExhausted(peerId, namespace): return "no message id left in \(peerId) namespace \(namespace)"
        case let .messageNotFound(id): return "message \(id) not found"
        case let .invalidArgument(reason): return "invalid argument: \(reason)"
        }
    }
}

/// Where added messages belong (Postbox's `AddMessagesLocation`).
public enum AddMessagesLocation: Sendable {
    /// Anywhere in history (for example a page fetched to fill a hole). Holes are not touched: the caller removes
    /// the range it fetched.
    case Random
    /// The newest messages of their chats (for example real-time updates): for each (peer, namespace), every id
    /// from the lowest added id up to Int32.max−1 is known afterwards, so that range is removed from the holes
    /// of every space.
    case UpperHistoryBlock
}

/// Which (peer namespace, message namespace) pairs use account-wide message ids (Telegram's private chats and
/// basic groups in the cloud namespace), indexed by `GlobalMessageIdsTable`.
public struct GlobalMessageIdsNamespace: Hashable, Sendable {
    public let peerIdNamespace: PeerId.Namespace
    public let messageIdNamespace: MessageId.Namespace

    public init(peerIdNamespace: PeerId.Namespace, messageIdNamespace: MessageId.Namespace) {
        self.peerIdNamespace = peerIdNamespace
        self.messageIdNamespace = messageIdNamespace
    }
}

/// Whether and how a peer appears in the chat list (Postbox's `PeerChatListInclusion`).
public enum PeerChatListInclusion: Hashable, Sendable {
    /// Never listed.
    case notIncluded
    /// Listed in `groupId` when the peer has a top message, is pinned, or has a `minTimestamp` (then listed even
    /// without messages, at that timestamp at least).
    case ifHasMessagesOrOneOf(groupId: PeerGroupId, pinningIndex: UInt16?, minTimestamp: Int32?)

    var groupId: PeerGroupId? {
        if case let .ifHasMessagesOrOneOf(groupId, _, _) = self { return groupId }
        return nil
    }

    var pinningIndex: UInt16? {
        if case let .ifHasMessagesOrOneOf(_, pinningIndex, _) = self { return pinningIndex }
        return nil
    }

    func withPinningIndex(_ pinningIndex: UInt16?) -> PeerChatListInclusion {
        switch self {
        case .notIncluded: return self
        case let .ifHasMessagesOrOneOf(groupId, _, minTimestamp):
            return .ifHasMessagesOrOneOf(groupId: groupId, pinningIndex: pinningIndex, minTimestamp: minTimestamp)
        }
    }
}

/// What the history tables need from Postbox's `SeedConfiguration`.
struct MessageHistoryConfiguration: Sendable {
    /// `SeedConfiguration.messageHoles`: the holes a peer's history starts with (1…Int32.max−1 in the everywhere
    /// space of each namespace, and in the space of each listed tag), by peer namespace.
    var messageHoles: [PeerId.Namespace: [MessageId.Namespace: Set<MessageTags>]] = [:]
    /// `SeedConfiguration.defaultMessageNamespaceReadStates`: read states a peer without stored ones starts with.
    var defaultReadStates: [MessageId.Namespace: PeerReadState] = [:]
    /// `SeedConfiguration.chatMessagesNamespaces`: the namespaces whose messages can be a chat's top message in
    /// the chat list (nil: every namespace).
    var chatMessagesNamespaces: Set<MessageId.Namespace>? = nil
    /// Namespace pairs whose message ids are account-wide (see ``GlobalMessageIdsNamespace``).
    var globalMessageIdsNamespaces: Set<GlobalMessageIdsNamespace> = []
    /// The inclusion of a peer that has no stored chat-list entry. Postbox starts every peer `.notIncluded` and
    /// lets the app include it; Boxwood's default lists a peer in the root group once it has messages.
    var defaultInclusion: PeerChatListInclusion = .ifHasMessagesOrOneOf(groupId: .root, pinningIndex: nil, minTimestamp: nil)
    /// Whether message text is put in the full-text index (table 41).
    var indexMessageText = true

    init() {}
}

/// A message as stored in `MessageHistoryTable` (Postbox's `IntermediateMessage`): the fields of a
/// ``StoreMessage`` with a complete id, plus the stable id and version. Peers and associated messages are not
/// resolved here.
public struct StoredMessage: Sendable {
    public var stableId: UInt32
    public var stableVersion: UInt32
    public var id: MessageId
    public var globallyUniqueId: Int64?
    public var groupingKey: Int64?
    public var threadId: Int64?
    public var timestamp: Int32
    public var flags: MessageFlags
    public var tags: MessageTags
    public var globalTags: GlobalMessageTags
    public var localTags: LocalMessageTags
    public var forwardInfo: StoreMessageForwardInfo?
    public var authorId: PeerId?
    public var text: String
    public var attributes: [any MessageAttribute]
    public var media: [any Media]

    public var index: MessageIndex { MessageIndex(id: id, timestamp: timestamp) }

    /// Whether the message counts for unread counters (`incoming` or `countedAsIncoming`).
    public var countsAsIncoming: Bool { flags.contains(.incoming) || flags.contains(.countedAsIncoming) }

    init(stableId: UInt32, stableVersion: UInt32, id: MessageId, message: StoreMessage) {
        self.stableId = stableId
        self.stableVersion = stableVersion
        self.id = id
        globallyUniqueId = message.globallyUniqueId
        groupingKey = message.groupingKey
        threadId = message.threadId
        timestamp = message.timestamp
        flags = message.flags
        tags = message.tags
        globalTags = message.globalTags
        localTags = message.localTags
        forwardInfo = message.forwardInfo
        authorId = message.authorId
        text = message.text
        attributes = message.attributes
        media = message.media
    }

    /// The message as a ``StoreMessage`` (for example to re-store it with changes).
    public var storeMessage: StoreMessage {
        StoreMessage(id: .id(id), globallyUniqueId: globallyUniqueId, groupingKey: groupingKey, threadId: threadId,
                     timestamp: timestamp, flags: flags, tags: tags, globalTags: globalTags, localTags: localTags,
                     forwardInfo: forwardInfo, authorId: authorId, text: text, attributes: attributes, media: media)
    }

    /// The value stored in table 7: the object fields of `docs/postbox-tables-history.md` (peer, namespace, id and
    /// timestamp are in the key and not repeated).
    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(Int32(bitPattern: stableId), forKey: "s")
        encoder.encodeInt32(Int32(bitPattern: stableVersion), forKey: "v")
        if let globallyUniqueId { encoder.encodeInt64(globallyUniqueId, forKey: "u") }
        if let groupingKey { encoder.encodeInt64(groupingKey, forKey: "g") }
        if let threadId { encoder.encodeInt64(threadId, forKey: "h") }
        if !flags.isEmpty { encoder.encodeInt32(Int32(bitPattern: flags.rawValue), forKey: "f") }
        if !tags.isEmpty { encoder.encodeInt32(Int32(bitPattern: tags.rawValue), forKey: "tg") }
        if !globalTags.isEmpty { encoder.encodeInt32(Int32(bitPattern: globalTags.rawValue), forKey: "gt") }
        if !localTags.isEmpty { encoder.encodeInt32(Int32(bitPattern: localTags.rawValue), forKey: "lt") }
        if let forwardInfo { encoder.encodeObject(forwardInfo, forKey: "fi") }
        if let authorId { encoder.encodeInt64(authorId.toInt64(), forKey: "a") }
        if !text.isEmpty { encoder.encodeString(text, forKey: "x") }
        if !attributes.isEmpty { encoder.encodeObjectArray(attributes.map { $0 as any PostboxCoding }, forKey: "at") }
        if !media.isEmpty { encoder.encodeObjectArray(media.map { $0 as any PostboxCoding }, forKey: "m") }
    }

    /// Decodes a value of table 7 whose key gave `index`. Attribute and media types the reader does not know are
    /// left out.
    init(index: MessageIndex, decoder: PostboxDecoder) throws(PostboxDecodingError) {
        stableId = UInt32(bitPattern: try decoder.decodeInt32(forKey: "s"))
        stableVersion = UInt32(bitPattern: decoder.decodeInt32ForKey("v", orElse: 0))
        id = index.id
        timestamp = index.timestamp
        globallyUniqueId = decoder.decodeOptionalInt64ForKey("u")
        groupingKey = decoder.decodeOptionalInt64ForKey("g")
        threadId = decoder.decodeOptionalInt64ForKey("h")
        flags = MessageFlags(rawValue: UInt32(bitPattern: decoder.decodeInt32ForKey("f", orElse: 0)))
        tags = MessageTags(rawValue: UInt32(bitPattern: decoder.decodeInt32ForKey("tg", orElse: 0)))
        globalTags = GlobalMessageTags(rawValue: UInt32(bitPattern: decoder.decodeInt32ForKey("gt", orElse: 0)))
        localTags = LocalMessageTags(rawValue: UInt32(bitPattern: decoder.decodeInt32ForKey("lt", orElse: 0)))
        forwardInfo = try decoder.decodeObjectForKey("fi", as: StoreMessageForwardInfo.self)
        authorId = decoder.decodeOptionalInt64ForKey("a").map(PeerId.init)
        text = decoder.decodeStringForKey("x", orElse: "")
        attributes = try decoder.decodeObjectArrayForKey("at", skippingUnknownTypes: true).compactMap { $0 as? any MessageAttribute }
        media = try decoder.decodeObjectArrayForKey("m", skippingUnknownTypes: true).compactMap { $0 as? any Media }
    }
}

/// One change to a chat's history, as the views replay it (Postbox's `MessageHistoryOperation`).
public enum MessageHistoryOperation {
    /// A message was stored (also the second half of an update).
    case insertMessage(StoredMessage)
    /// Messages were removed (also the first half of an update), with the tags they had.
    case remove([(MessageIndex, MessageTags)])
    /// The chat's read state changed.
    case updateReadState(PeerId, CombinedPeerReadState)
    /// A message moved to another timestamp (its old index and the new timestamp).
    case updateTimestamp(MessageIndex, Int32)
}

/// The (peer, namespace, space) a hole operation applies to (Postbox's `MessageHistoryIndexHoleOperationKey`).
public struct MessageHistoryHoleOperationKey: Hashable, Sendable {
    public let peerId: PeerId
    public let namespace: MessageId.Namespace
    public let space: MessageHistoryHoleSpace
}

/// A change to the holes of one (peer, namespace, space): the range the caller added or removed (clipped).
public enum MessageHistoryHoleOperation: Hashable, Sendable {
    case insert(ClosedRange<MessageId.Id>)
    case remove(ClosedRange<MessageId.Id>)
}

/// One change to a chat list group, in the order the views apply them (Postbox's `ChatListOperation`).
public enum ChatListOperation: Hashable, Sendable {
    /// A chat was listed at `index` with its top message (nil for a pinned or `minTimestamp` chat without one).
    case insertEntry(ChatListIndex, MessageIndex?)
    /// A hole was added.
    case insertHole(ChatListHole)
    /// Chats were unlisted from these indices.
    case removeEntry([ChatListIndex])
    /// Holes were removed.
    case removeHoles([ChatListHole])
}

/// Unread totals of one chat-list group: unread incoming messages of the listed chats, and the number of
/// listed chats with something unread (a count or the manual mark).
public struct ChatListTotalUnreadState: Hashable, Sendable, CustomStringConvertible {
    public var messageCount: Int64 = 0
    public var chatCount: Int64 = 0

    public var isEmpty: Bool { messageCount == 0 && chatCount == 0 }
    public var description: String { "(messages: \(messageCount), chats: \(chatCount))" }
}

extension ValueBox {
    /// Stores the bytes an encoder wrote.
    func set(_ table: ValueBoxTable, key: ValueBoxKey, encoder: PostboxEncoder) throws {
        try encoder.withBytes { raw throws(BoxwoodError) in try self.set(table, key: key, bytes: raw) }
    }
}

extension ValueBoxKey {
    /// This key followed by one zero byte: the least key greater than this one (keys compare as memcmp, shorter
    /// first), so it is an exclusive bound that includes this key.
    var immediateSuccessor: ValueBoxKey {
        var extra = ValueBoxKey(length: 1)
        extra.setUInt8(0, value: 0)
        return self + extra
    }

    /// This key followed by `count` 0xFF bytes: greater than every key of at most `length + count` bytes that
    /// starts with it.
    func paddedWithMax(_ count: Int) -> ValueBoxKey {
        var extra = ValueBoxKey(length: count)
        for i in 0..<count { extra.setUInt8(i, value: 0xff) }
        return self + extra
    }
}
