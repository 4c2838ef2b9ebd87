import BoxwoodStore

/// Who holds the MasterClientId (Postbox's `becomeMasterClient`), as ``Transaction/masterClientState()`` reads it.
/// The master is the one Postbox — in any process sharing the database — that is meant to sync it; the others read
/// what it stores.
public enum MasterClientState: Hashable, Sendable {
    /// No Postbox claimed it (never, or the master resigned).
    case none
    /// This Postbox is the master.
    case this
    /// Another Postbox is the master and the process that claimed it is running (it may be this process, when it
    /// opened the database twice).
    case running(processId: Int32)
    /// Another Postbox is the master, but the process that claimed it has ended (killed, crashed, exited without
    /// resigning): the claim is stale.
    case ended(processId: Int32)
    /// Another Postbox is the master, and no process was recorded with its claim (it was made by the value box
    /// directly, or by a build before the record existed): whether it runs cannot be told.
    case unrecorded
}

/// The process recorded with a master-client claim (metadata keys 7 and 8).
struct MasterClientProcess: Hashable, Sendable {
    /// The MasterClientId the process claimed.
    let clientId: Int64
    /// `ProcessIdentity.packed` of the process: its pid and a digest of its start time.
    let packedIdentity: UInt64
}
