import Boxwood

/// The account's update cursor as stored in Postbox's state (Telegram's `AuthorizedAccountState.State`):
/// written in the same transaction as the data it covers, after it.
public struct SyncAccountState: PostboxCoding, Hashable, Sendable {
    public static let postboxTypeName = "SyncAccountState"

    public var pts: Int32
    public var qts: Int32
    /// Advanced by seq-ordered groups and difference answers (the cursor of the seq box).
    public var date: Int32
    public var seq: Int32

    public init(pts: Int32, qts: Int32, date: Int32, seq: Int32) {
        self.pts = pts
        self.qts = qts
        self.date = date
        self.seq = seq
    }

    init(_ state: ApiUpdatesState) { self.init(pts: state.pts, qts: state.qts, date: state.date, seq: state.seq) }

    /// Whether this cursor is further than `other` in what a difference is asked from: none of pts, qts and
    /// date behind, at least one ahead. (seq is not compared: a slice's seq is the server's at the slice's date,
    /// which may be below a seq the client took from pushes.)
    func isAhead(of other: SyncAccountState) -> Bool {
        pts >= other.pts && qts >= other.qts && date >= other.date && (pts, qts, date) != (other.pts, other.qts, other.date)
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        pts = try decoder.decodeInt32(forKey: "p")
        qts = try decoder.decodeInt32(forKey: "q")
        date = try decoder.decodeInt32(forKey: "d")
        seq = try decoder.decodeInt32(forKey: "s")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(pts, forKey: "p")
        encoder.encodeInt32(qts, forKey: "q")
        encoder.encodeInt32(date, forKey: "d")
        encoder.encodeInt32(seq, forKey: "s")
    }
}

/// A chat's sync state, stored as its peer chat state: a channel's cursor, and the dialog-list generation in which
/// the chat's dialog was last fetched (``SyncChatListHoles``). Both optional: a chat stored by an older build has only
/// a channel's pts; a chat whose dialog was never fetched has no generation.
public struct SyncChatState: Codable, Hashable, Sendable {
    /// A channel's pts (nil for other chats).
    public var pts: Int32?
    /// The ``SyncDialogListGeneration`` of the rebuild, hole fill or refresh that last reset the chat from its dialog.
    public var dialogGeneration: Int32?

    public init(pts: Int32? = nil, dialogGeneration: Int32? = nil) {
        self.pts = pts
        self.dialogGeneration = dialogGeneration
    }
}

/// Counts the rebuilds from the dialog list (a preferences entry): each rebuild's chats are marked with the generation
/// it starts (``SyncChatState/dialogGeneration``), so that while the list has a hole, a chat marked with an older one
/// (or none) is known to be unverified.
public struct SyncDialogListGeneration: PreferencesEntry, Equatable {
    public static let postboxTypeName = "SyncDialogListGeneration"

    public let generation: Int32

    public init(generation: Int32) { self.generation = generation }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        generation = try decoder.decodeInt32(forKey: "g")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(generation, forKey: "g")
    }
}

/// This installation's identity for exactly-once outbound requests: a random client id and the next mutation
/// sequence, persisted (as a preferences entry) before any request that uses it is sent.
public struct SyncClientIdentity: PreferencesEntry, Equatable {
    public static let postboxTypeName = "SyncClientIdentity"

    public let clientId: Int64
    public let nextSequence: Int64

    public init(clientId: Int64, nextSequence: Int64) {
        self.clientId = clientId
        self.nextSequence = nextSequence
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        clientId = try decoder.decodeInt64(forKey: "c")
        nextSequence = try decoder.decodeInt64(forKey: "n")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(clientId, forKey: "c")
        encoder.encodeInt64(nextSequence, forKey: "n")
    }
}
