import Boxwood
import BoxwoodStore

/// Operation-log tags of the outbound queues.
public enum SyncOperationLogTags {
    /// Messages waiting to be sent.
    public static let sendMessage = PeerOperationLogTag(1)
    /// A chat's read position waiting to be sent.
    public static let synchronizeReadState = PeerOperationLogTag(2)
}

/// A message waiting to be sent: its local copy is found by `randomId` (its globally unique id).
public struct SendMessageOperation: PostboxCoding, Equatable, Sendable {
    public static let postboxTypeName = "SendMessageOperation"

    public let randomId: Int64
    public let text: String
    /// The client mutation sequence, persisted with the operation before it is first sent.
    public let mutation: Int64

    public init(randomId: Int64, text: String, mutation: Int64) {
        self.randomId = randomId
        self.text = text
        self.mutation = mutation
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        randomId = try decoder.decodeInt64(forKey: "r")
        text = decoder.decodeStringForKey("t", orElse: "")
        mutation = try decoder.decodeInt64(forKey: "m")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(randomId, forKey: "r")
        encoder.encodeString(text, forKey: "t")
        encoder.encodeInt64(mutation, forKey: "m")
    }
}

/// A read position waiting to be sent (one per chat: a newer one replaces it).
public struct SynchronizeReadStateOperation: PostboxCoding, Equatable, Sendable {
    public static let postboxTypeName = "SynchronizeReadStateOperation"

    public let maxId: Int32
    public let mutation: Int64

    public init(maxId: Int32, mutation: Int64) {
        self.maxId = maxId
        self.mutation = mutation
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        maxId = try decoder.decodeInt32(forKey: "x")
        mutation = try decoder.decodeInt64(forKey: "m")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(maxId, forKey: "x")
        encoder.encodeInt64(mutation, forKey: "m")
    }
}

extension SyncStorage {
    static let clientIdentityKey = ValueBoxKey("sync.client-identity")

    /// Takes the next client mutation id (creating the installation's client id on first use); the caller
    /// stores it with its operation in the same transaction, so it is persisted before it is sent.
    static func nextMutation(in transaction: Transaction) throws -> ClientMutationId {
        let identity = try transaction.getPreferencesEntry(key: clientIdentityKey) as? SyncClientIdentity
            ?? SyncClientIdentity(clientId: Int64.random(in: 1...Int64.max), nextSequence: 1)
        try transaction.setPreferencesEntry(key: clientIdentityKey, value: SyncClientIdentity(clientId: identity.clientId, nextSequence: identity.nextSequence + 1))
        return ClientMutationId(clientId: identity.clientId, sequence: identity.nextSequence)
    }

    static func clientId(in transaction: Transaction) throws -> Int64? {
        (try transaction.getPreferencesEntry(key: clientIdentityKey) as? SyncClientIdentity)?.clientId
    }

    static let storedAnswersKey = ValueBoxKey("sync.stored-answers")

    /// How many outbound answers were stored so far (see ``SyncStoredAnswers``).
    static func storedAnswers(in transaction: Transaction) throws -> Int64 {
        (try transaction.getPreferencesEntry(key: storedAnswersKey) as? SyncStoredAnswers)?.count ?? 0
    }

    /// Counts an outbound answer (a send's server copy, a read position) this transaction stores.
    static func recordStoredAnswer(in transaction: Transaction) throws {
        let count = try storedAnswers(in: transaction)
        try transaction.setPreferencesEntry(key: storedAnswersKey, value: SyncStoredAnswers(count: count + 1))
    }
}

/// The number of outbound answers stored: sends' server copies and read positions. A reset from a dialog list
/// deletes every stored message the list does not show above a chat's oldest listed one and sets each read
/// position to the list's; a send or read answered after the list was fetched is newer than the list, and in
/// a secret chat no pts step would bring it back. So every batch that resets chats records this count before
/// its first request and is replayed only if it did not move (otherwise it is discarded and fetched again,
/// like a batch whose cursor moved). An answer stored before the reset's replay is covered by the count; a
/// reset replayed before the answer is followed by the answer's transaction, which applies its result again.
public struct SyncStoredAnswers: PreferencesEntry, Equatable {
    public static let postboxTypeName = "SyncStoredAnswers"

    public let count: Int64

    public init(count: Int64) { self.count = count }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        count = try decoder.decodeInt64(forKey: "c")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(count, forKey: "c")
    }
}
