/// A message as stored in `MessageHistoryTable` (Postbox's `IntermediateMessage`): the fields of a
/// `StoreMessage` with a complete id, plus the stable id and version. Peers and associated messages are not
/// resolved here; `MessageRenderer` turns it into the public `Message`.
struct IntermediateMessage: Sendable {
    var stableId: UInt32
    var stableVersion: UInt32
    var id: MessageId
    var timestamp: Int32
    /// Everything else, shared with ``StoreMessage``.
    var fields: MessageFields

    var globallyUniqueId: Int64? { get { fields.globallyUniqueId } set { fields.globallyUniqueId = newValue } }
    var groupingKey: Int64? { get { fields.groupingKey } set { fields.groupingKey = newValue } }
    var threadId: Int64? { get { fields.threadId } set { fields.threadId = newValue } }
    var flags: MessageFlags { get { fields.flags } set { fields.flags = newValue } }
    var tags: MessageTags { get { fields.tags } set { fields.tags = newValue } }
    var globalTags: GlobalMessageTags { get { fields.globalTags } set { fields.globalTags = newValue } }
    var localTags: LocalMessageTags { get { fields.localTags } set { fields.localTags = newValue } }
    var forwardInfo: StoreMessageForwardInfo? { get { fields.forwardInfo } set { fields.forwardInfo = newValue } }
    var authorId: PeerId? { get { fields.authorId } set { fields.authorId = newValue } }
    var text: String { get { fields.text } set { fields.text = newValue } }
    var attributes: [any MessageAttribute] { get { fields.attributes } set { fields.attributes = newValue } }
    var media: [any Media] { get { fields.media } set { fields.media = newValue } }

    var index: MessageIndex { MessageIndex(id: id, timestamp: timestamp) }

    /// Whether the message counts for unread counters (`incoming` or `countedAsIncoming`).
    var countsAsIncoming: Bool { flags.contains(.incoming) || flags.contains(.countedAsIncoming) }

    init(stableId: UInt32, stableVersion: UInt32, id: MessageId, message: StoreMessage) {
        self.stableId = stableId
        self.stableVersion = stableVersion
        self.id = id
        timestamp = message.timestamp
        fields = message.fields
    }

    /// The message as a `StoreMessage` (for example to re-store it with changes).
    var storeMessage: StoreMessage {
        StoreMessage(id: .id(id), timestamp: timestamp, fields: fields)
    }

    /// The value stored in table 7: the object fields of `docs/postbox-tables-history.md` (peer, namespace, id and
    /// timestamp are in the key and not repeated).
    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(Int32(bitPattern: stableId), forKey: "s")
        encoder.encodeInt32(Int32(bitPattern: stableVersion), forKey: "v")
        fields.encode(encoder, timestamp: nil, emptyText: false)
    }

    /// Decodes a value of table 7 whose key gave `index`. Attribute and media types the reader does not know are
    /// left out.
    init(index: MessageIndex, decoder: PostboxDecoder) throws(PostboxDecodingError) {
        stableId = UInt32(bitPattern: try decoder.decodeInt32(forKey: "s"))
        stableVersion = UInt32(bitPattern: decoder.decodeInt32ForKey("v", orElse: 0))
        id = index.id
        timestamp = index.timestamp
        fields = try MessageFields(decoder: decoder)
    }
}
