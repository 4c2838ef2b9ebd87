import Boxwood

/// One committed change, with what a notification or UI layer needs to show it (read right after the commit), from
/// ``AccountStateManager/notifications(bufferSize:)``.
public struct SyncNotification: Hashable, Sendable {
    /// 1, 2, 3… per manager, across every subscriber. A subscriber that sees a jump lost the notifications in between
    /// (its buffer was full: see ``AccountStateManager/notifications(bufferSize:)``) and should read what it shows
    /// again from the database.
    public let sequence: UInt64
    public let kind: Kind

    public enum Kind: Hashable, Sendable {
        /// A message stored for the first time: an incoming message, or one the account sent from another device
        /// (`.realtime`: show a notification; `.catchUp`: stored while catching up).
        case newMessage(SyncMessageSummary, SyncSource)
        /// A stored message's text or media changed.
        case edited(SyncMessageSummary)
        /// Stored messages were deleted.
        case deleted([MessageId], SyncSource)
        /// A chat's read position moved (another device read it, or the server reset it).
        case read(PeerId, SyncSource)
        /// A stored message's reactions changed.
        case reactions(MessageId, [ApiReaction])
        /// The server refused an outbound operation for good (a message that could not be sent, an edit refused).
        case outboundFailed(OutboundFailure)
        /// The database refused a write of the sync layer (it is tried again).
        case storageFailed(SyncStorageError)
        /// Another client took over syncing the database: no more notifications come from this manager.
        case mastershipLost(MasterClientState)
    }
}

/// What a notification shows of a message.
public struct SyncMessageSummary: Hashable, Sendable {
    public let id: MessageId
    /// The chat's title or the user's name, when the peer is stored.
    public let chatTitle: String?
    /// The author's name, when the author is stored (nil also for a channel post signed by the channel).
    public let authorName: String?
    /// The text, led by a label of the media ("📷 ", "📎 report.pdf ", "❓ poll "…); empty when the message was
    /// deleted before it could be read.
    public let preview: String
    /// Sent by the account.
    public let outgoing: Bool
}

extension SyncMessageSummary {
    /// The summary of stored message `id` (with a blank preview when it is not stored any more).
    static func read(_ id: MessageId, in transaction: Transaction) throws -> SyncMessageSummary {
        guard let message = try transaction.getMessage(id) else {
            return SyncMessageSummary(id: id, chatTitle: nil, authorName: nil, preview: "", outgoing: false)
        }
        let label = SyncMessageContent.previewLabel(SyncMessageContent.content(of: message).media).map { $0 + " " } ?? ""
        return SyncMessageSummary(id: id, chatTitle: SyncPeerNames.name(of: message.peer), authorName: SyncPeerNames.name(of: message.author),
                                  preview: label + message.text, outgoing: !message.flags.contains(.incoming))
    }
}
