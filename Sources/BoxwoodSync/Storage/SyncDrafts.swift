import Boxwood

extension SyncOperationLogTags {
    /// The cloud drafts waiting to be saved (at most one per chat: a newer one replaces it).
    public static let drafts = PeerOperationLogTag(4)
}

/// Drafts in Postbox: a chat's draft is its interface state's chat-list embedded state (the row shows it) with the
/// override timestamp (a draft newer than the chat's top message moves the chat up); the app's other interface
/// state (scroll position, opaque data) is kept.
enum SyncDrafts {
    /// The chat's draft as stored, nil when none.
    static func draft(of peerId: PeerId, in transaction: Transaction) throws -> ApiDraft? {
        guard let embedded = try transaction.getPeerChatInterfaceState(peerId)?.chatListEmbeddedState else { return nil }
        return ApiDraft(text: embedded.text, date: embedded.timestamp)
    }

    /// Stores `draft` (nil or empty: none) as the chat's draft.
    static func store(_ draft: ApiDraft?, for peerId: PeerId, in transaction: Transaction) throws {
        let draft = draft.flatMap { $0.text.isEmpty ? nil : $0 }
        var state = try transaction.getPeerChatInterfaceState(peerId) ?? StoredPeerChatInterfaceState()
        let embedded = draft.map { ChatListEmbeddedState(text: $0.text, timestamp: $0.date) }
        guard state.chatListEmbeddedState != embedded || state.overrideChatTimestamp != draft?.date else { return }
        state.chatListEmbeddedState = embedded
        state.overrideChatTimestamp = draft?.date
        let isEmpty = state == StoredPeerChatInterfaceState()
        try transaction.setPeerChatInterfaceState(peerId, state: isEmpty ? nil : state)
    }

    /// Applies the server's draft of a chat, unless this device saved a draft there that is not sent yet: that one is
    /// newer (the server takes it after everything it sent before), so the server's is skipped.
    static func apply(_ draft: ApiDraft?, to peerId: PeerId, in transaction: Transaction) throws {
        // Nothing to change (the common case of a rebuild: no draft here or there) needs no look at the queue.
        let wanted = draft.flatMap { $0.text.isEmpty ? nil : $0 }
        guard try self.draft(of: peerId, in: transaction) != wanted else { return }
        var pending = false
        try transaction.operationLogEnumerateEntries(peerId: peerId, tag: SyncOperationLogTags.drafts) { _ in
            pending = true
            return false
        }
        guard !pending else { return }
        try store(draft, for: peerId, in: transaction)
    }
}

/// A draft waiting to be saved to the cloud (empty text: clear it).
public struct SaveDraftOperation: PostboxCoding, Equatable, Sendable {
    public static let postboxTypeName = "SaveDraftOperation"

    public let text: String

    public init(text: String) { self.text = text }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        text = decoder.decodeStringForKey("t", orElse: "")
    }

    public func encode(_ encoder: PostboxEncoder) { encoder.encodeString(text, forKey: "t") }
}
