import Boxwood

/// Operation-log tags of the outbound queues.
public enum SyncOperationLogTags {
    /// Messages waiting to be sent.
    public static let sendMessage = PeerOperationLogTag(1)
    /// A chat's read position waiting to be sent.
    public static let synchronizeReadState = PeerOperationLogTag(2)
}

/// A message waiting to be sent: its local copy is found by `randomId` (its globally unique id).
public struct SendMessageOperation: PostboxCoding, Equatable, Sendable {
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
}
