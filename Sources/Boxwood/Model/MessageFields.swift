/// The fields a message is stored with besides its id, timestamp and stable id: what ``StoreMessage`` (a message
/// handed to Postbox) and `IntermediateMessage` (a message as table 7 holds it) have in common, and the one place
/// those fields are encoded and decoded (the field keys of `docs/postbox-tables-history.md`).
struct MessageFields: Sendable {
    var globallyUniqueId: Int64?
    var groupingKey: Int64?
    var threadId: Int64?
    var flags: MessageFlags
    var tags: MessageTags
    var globalTags: GlobalMessageTags
    var localTags: LocalMessageTags
    var forwardInfo: StoreMessageForwardInfo?
    var authorId: PeerId?
    var text: String
    var attributes: [any MessageAttribute]
    var media: [any Media]

    /// Writes the fields in their stored order. `timestamp` goes between the thread id and the flags where the
    /// layout has one (``StoreMessage``'s; table 7 keeps it in the key); `emptyText` says whether an empty text is
    /// written (``StoreMessage`` writes it, table 7 leaves it out). Absent and empty optional fields are left out.
    func encode(_ encoder: PostboxEncoder, timestamp: Int32?, emptyText: Bool) {
        if let globallyUniqueId { encoder.encodeInt64(globallyUniqueId, forKey: "u") }
        if let groupingKey { encoder.encodeInt64(groupingKey, forKey: "g") }
        if let threadId { encoder.encodeInt64(threadId, forKey: "h") }
        if let timestamp { encoder.encodeInt32(timestamp, forKey: "t") }
        if !flags.isEmpty { encoder.encodeInt32(Int32(bitPattern: flags.rawValue), forKey: "f") }
        if !tags.isEmpty { encoder.encodeInt32(Int32(bitPattern: tags.rawValue), forKey: "tg") }
        if !globalTags.isEmpty { encoder.encodeInt32(Int32(bitPattern: globalTags.rawValue), forKey: "gt") }
        if !localTags.isEmpty { encoder.encodeInt32(Int32(bitPattern: localTags.rawValue), forKey: "lt") }
        if let forwardInfo { encoder.encodeObject(forwardInfo, forKey: "fi") }
        if let authorId { encoder.encodeInt64(authorId.toInt64(), forKey: "a") }
        if emptyText || !text.isEmpty { encoder.encodeString(text, forKey: "x") }
        if !attributes.isEmpty { encoder.encodeObjectArray(attributes.map { $0 as any PostboxCoding }, forKey: "at") }
        if !media.isEmpty { encoder.encodeObjectArray(media.map { $0 as any PostboxCoding }, forKey: "m") }
    }
}

extension MessageFields {
    /// Reads the fields (absent ones take their empty value). Attribute and media types the reader does not know
    /// (written by a newer app version) are left out rather than failing the whole message.
    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
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
