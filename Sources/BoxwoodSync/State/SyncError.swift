import Boxwood
import BoxwoodStore

/// Why a sync operation did not finish. Thrown by ``AccountStateManager/synchronize()`` and by the work the
/// manager runs; a storage failure is also emitted on ``AccountStateManager/events``.
public enum SyncError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The database refused a read or a write. Nothing of that transaction was stored and the cursors are where
    /// they were: the next poll starts again from them.
    case storage(SyncStorageError)
    /// The manager stopped before the operation finished (requests stop retrying then).
    case stopped
    /// The server refused a request for good (``SyncTransportError/rejected(reason:)``); it is not retried.
    case rejected(operation: String, reason: String)
    /// Another process's client is the master of this database and its process runs
    /// (``SyncMastership/ifVacant``): this client does not sync. The app reads what the master stores.
    case masterElsewhere(processId: Int32)

    public var description: String {
        switch self {
        case let .storage(failure): return "sync storage failed: \(failure)"
        case .stopped: return "the sync manager stopped"
        case let .rejected(operation, reason): return "the server refused \(operation): \(reason)"
        case let .masterElsewhere(processId): return "process \(processId) syncs this database (it is the master client)"
        }
    }
}

/// A transaction of the sync layer that the database refused, and what the sync layer was doing.
///
/// Equal failures hash alike: the hash covers the operation and the cause's description (the engine's
/// ``BoxwoodError`` is `Equatable` but not `Hashable`).
public struct SyncStorageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The sync layer's transactions.
    public enum Operation: String, Hashable, Sendable {
        /// Reading the stored cursors (account state, channel pts, the stored-answer count) a batch is built on.
        case readCursors
        /// Replaying a batch — its data, then its cursors — in one transaction.
        case replayBatch
        /// Storing a page of history that fills a hole.
        case fillHole
        /// Reading the installation's client id for an outbound request.
        case readClientIdentity
        /// Storing the server's answer to an outbound operation and removing the operation from its queue.
        case storeOutboundAnswer
        /// Reading the messages a batch stored, for ``AccountStateManager/notifications(bufferSize:)``.
        case readNotificationContent
        /// Claiming the database for this client's sync (``SyncClient/start(mastership:)``).
        case claimMastership
        /// Giving the claim up (``SyncClient/stopSyncing()``).
        case resignMastership
    }

    /// What the database threw.
    public enum Cause: Equatable, Sendable, CustomStringConvertible {
        /// The storage engine's error (I/O, a full disk, a damaged file, a lock timeout...).
        case engine(BoxwoodError)
        /// The Postbox's own error (closed, suspended...).
        case postbox(PostboxError)
        /// A stored value could not be decoded.
        case decoding(PostboxDecodingError)
        /// A value could not be encoded.
        case encoding(PostboxEncodingError)
        /// Another client became the master of the database (``SyncClient/start(mastership:)``): this client's
        /// engine transactions are refused, and the client stops syncing (``SyncEvent/mastershipLost(_:)``).
        case mastershipLost(MasterClientState)
        /// Any other error a transaction threw, by its description.
        case other(String)

        init(_ error: any Error) {
            switch error {
            case let error as BoxwoodError: self = .engine(error)
            case let error as PostboxError: self = .postbox(error)
            case let error as PostboxDecodingError: self = .decoding(error)
            case let error as PostboxEncodingError: self = .encoding(error)
            case let error as SyncMastershipLost: self = .mastershipLost(error.holder)
            default: self = .other(String(describing: error))
            }
        }

        public var description: String {
            switch self {
            case let .engine(error): return String(describing: error)
            case let .postbox(error): return String(describing: error)
            case let .decoding(error): return String(describing: error)
            case let .encoding(error): return String(describing: error)
            case let .mastershipLost(holder): return "another client is the master (\(holder))"
            case let .other(description): return description
            }
        }
    }

    /// What the sync layer was doing.
    public let operation: Operation
    /// What the database threw.
    public let cause: Cause

    /// A failure of `operation` because of `cause`.
    public init(_ operation: Operation, cause: Cause) {
        self.operation = operation
        self.cause = cause
    }

    /// `error` as a transaction of `operation` threw it.
    init(_ operation: Operation, error: any Error) {
        self.init(operation, cause: Cause(error))
    }

    public var description: String { "\(operation.rawValue): \(cause)" }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(operation)
        hasher.combine(cause.description)
    }
}
