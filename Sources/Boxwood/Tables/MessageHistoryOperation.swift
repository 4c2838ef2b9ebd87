/// One change to a chat's history, as a transaction's change record reports it (Postbox's
/// `MessageHistoryOperation`).
public enum MessageHistoryOperation: Sendable {
    /// A message was stored (also the second half of an update), as it reads at the end of the transaction.
    case insertMessage(Message)
    /// Messages were removed (also the first half of an update), with the tags they had.
    case remove([(MessageIndex, MessageTags)])
    /// The chat's read state changed.
    case updateReadState(PeerId, CombinedPeerReadState)
    /// A message moved to another timestamp (its old index and the new timestamp).
    case updateTimestamp(MessageIndex, Int32)
}

/// One change to a chat's history as `MessageHistoryTable` records it during a transaction: the stored form of
/// ``MessageHistoryOperation``, turned into it (messages rendered) when the change record is built.
enum HistoryTableOperation {
    case insertMessage(IntermediateMessage)
    case remove([(MessageIndex, MessageTags)])
    case updateReadState(PeerId, CombinedPeerReadState)
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
