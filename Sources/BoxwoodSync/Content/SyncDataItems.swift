import Boxwood

/// Typed data items of the sync layer's content (``PostboxDataItem``, read with `postbox.get(_:)` or followed with
/// `postbox.subscribe(_:)`): what a message shows beyond its text, with no casts in the caller's code.
///
/// ```swift
/// for try await reactions in postbox.subscribe(.reactions(id)) { render(reactions) }   // [ApiReaction]
/// ```
extension PostboxDataItem where Value == ApiMessageContent? {
    /// A message's content as stored (media, entities, reply, forward, reactions, album, counters), nil when the
    /// message is not stored.
    public static func messageContent(_ id: MessageId) -> Self {
        PostboxDataItem<Message?>.message(id).map(same: ==) { $0.map(SyncMessageContent.content(of:)) }
    }
}

extension PostboxDataItem where Value == [ApiReaction] {
    /// A message's reactions with their counts and the account's choice (empty when none, or not stored).
    public static func reactions(_ id: MessageId) -> Self {
        PostboxDataItem<Message?>.message(id).map(same: ==) { $0.map { SyncMessageContent.content(of: $0).reactions } ?? [] }
    }
}

extension PostboxDataItem where Value == SyncOutgoingState? {
    /// Where a message the account sent stands: sending, failed (with the server's reason), or sent; nil for an
    /// incoming message or one not stored.
    public static func outgoingState(_ id: MessageId) -> Self {
        PostboxDataItem<Message?>.message(id).map(same: ==) { $0.flatMap(SyncOutgoingState.init) }
    }
}

/// Where a message the account sent stands (``PostboxDataItem/outgoingState(_:)``).
public enum SyncOutgoingState: Hashable, Sendable {
    /// Queued or in flight (an unsent local copy).
    case sending
    /// Refused for good or not sendable (a file that cannot be read), with the reason;
    /// ``OutboundQueue/resendMessage(_:)`` queues it again.
    case failed(reason: String)
    /// On the server.
    case sent

    init?(_ message: Message) {
        guard !message.flags.contains(.incoming) else { return nil }
        if message.flags.contains(.failed) {
            let reason = message.attributes.lazy.compactMap { ($0 as? SyncSendFailureAttribute)?.reason }.first ?? ""
            self = .failed(reason: reason)
        } else if message.flags.contains(.unsent) {
            self = .sending
        } else {
            self = .sent
        }
    }
}
