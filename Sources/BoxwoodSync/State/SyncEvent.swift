import Boxwood

/// What a committed batch did that the app reacts to; emitted after the commit, once per change (a message is
/// reported new only by the transaction that stored it, so applying an update twice reports nothing twice) —
/// and the storage failures that kept the sync layer from storing something.
public enum SyncEvent: Hashable, Sendable {
    /// Incoming messages stored for the first time (notifications are for `.realtime` only).
    case newMessages([MessageId], SyncSource)
    /// Messages deleted.
    case deletedMessages([MessageId], SyncSource)
    /// Chats whose read state changed.
    case readStatesChanged(Set<PeerId>, SyncSource)
    /// Stored messages whose text or media changed (a newer edit version stored).
    case editedMessages([MessageId])
    /// Stored messages whose reactions changed.
    case reactionsChanged([MessageId])
    /// The database refused a read or write of the sync layer: the operation it belonged to ended without storing
    /// anything (the cursors did not move), and is tried again by the next poll or fill.
    case storageFailed(SyncStorageError)
    /// The server refused an outbound operation for good: a message to send is now flagged failed (with
    /// ``SyncSendFailureAttribute``), a refused edit or reaction was undone locally.
    case outboundFailed(OutboundFailure)
    /// Another client became the master of the database (``SyncMastership/takeOver`` in another process, or in
    /// this one): this client stopped syncing; the last event of its stream. The app reads what the new master
    /// stores, and may start a new ``SyncClient`` to take the database back.
    case mastershipLost(MasterClientState)
}
