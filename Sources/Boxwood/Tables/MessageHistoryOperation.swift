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
