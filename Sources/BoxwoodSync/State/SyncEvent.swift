import Boxwood

/// What a committed batch did that the app reacts to; emitted after the commit, once per change (a message is
/// reported new only by the transaction that stored it, so applying an update twice reports nothing twice).
public enum SyncEvent: Hashable, Sendable {
    /// Incoming messages stored for the first time (notifications are for `.realtime` only).
    case newMessages([MessageId], SyncSource)
    /// Messages deleted.
    case deletedMessages([MessageId], SyncSource)
    /// Chats whose read state changed.
    case readStatesChanged(Set<PeerId>, SyncSource)
}
