import Boxwood
import BoxwoodStore
import Foundation

/// A sync operation that did not finish, as `LocalizedError`.
extension SyncError: LocalizedError {
    /// What did not finish and why, as a sentence.
    public var errorDescription: String? {
        switch self {
        case let .storage(failure): return failure.errorDescription
        case .stopped: return "The sync manager stopped before the operation finished."
        case let .rejected(operation, reason): return "The server refused \(operation) (\(reason))."
        case let .masterElsewhere(processId): return "Another process (\(processId)) syncs this database."
        }
    }

    /// Why the database refused, when it says.
    public var failureReason: String? {
        if case let .storage(failure) = self { return failure.failureReason }
        return nil
    }

    /// What the user or the app can do.
    public var recoverySuggestion: String? {
        switch self {
        case let .storage(failure): return failure.recoverySuggestion
        case .stopped: return "Start the sync client again."
        case .rejected: return "Nothing was applied; asking again gives the same answer. Change what was asked (another message, another chat)."
        case .masterElsewhere: return "Read what it stores (views update with its commits), or start with .takeOver to sync here instead."
        }
    }
}

/// A transaction of the sync layer that the database refused, as `LocalizedError`: what the sync layer was doing,
/// then the database's own explanation.
extension SyncStorageError: LocalizedError {
    /// "Sync could not store a batch of updates. <The cause, as a sentence>"
    public var errorDescription: String? {
        "Sync could not \(operation.summary). " + (cause.localized.errorDescription ?? cause.description)
    }

    /// The cause's reason, when it gives one.
    public var failureReason: String? { cause.localized.failureReason }

    /// The cause's recovery suggestion; without one, that nothing moved and the sync layer tries again.
    public var recoverySuggestion: String? {
        cause.localized.recoverySuggestion ?? "Nothing of it was stored; the sync client tries again on its next poll."
    }
}

extension SyncStorageError.Operation {
    /// What the operation does, in words: "store a batch of updates".
    var summary: String {
        switch self {
        case .readCursors: return "read its stored cursors"
        case .replayBatch: return "store a batch of updates"
        case .fillHole: return "store a page of history that fills a gap"
        case .readClientIdentity: return "read this installation's client id"
        case .storeOutboundAnswer: return "store the server's answer to a sent message or read mark"
        case .readNotificationContent: return "read the messages it stored, for notifications"
        case .claimMastership: return "claim the database for syncing"
        case .resignMastership: return "give up its claim on the database"
        }
    }
}

extension SyncStorageError.Cause {
    /// The database's error as `LocalizedError` (a description of any other error as its description).
    var localized: any LocalizedError {
        switch self {
        case let .engine(error): return error
        case let .postbox(error): return error
        case let .decoding(error): return error
        case let .encoding(error): return error
        case let .mastershipLost(holder): return OtherCause(errorDescription: "Another client took over syncing this database (\(holder)).")
        case let .other(description): return OtherCause(errorDescription: description)
        }
    }

    /// An error the sync layer knows only by its description.
    private struct OtherCause: LocalizedError {
        let errorDescription: String?
    }
}

/// A failed request, as `LocalizedError`; the sync layer retries each of them but a refusal.
extension SyncTransportError: LocalizedError {
    /// What happened to the request, as a sentence.
    public var errorDescription: String? {
        switch self {
        case .disconnected: return "The connection to the server dropped before the answer arrived."
        case .timeout: return "The server did not answer in time."
        case let .floodWait(seconds): return "The server asks to wait \(seconds) s before the next request."
        case let .rejected(reason): return "The server refused the request (\(reason))."
        }
    }

    /// What the sync layer does about it.
    public var recoverySuggestion: String? {
        if case .rejected = self { return "The operation is given up and reported; a message that was to be sent is marked failed and can be sent again." }
        return "The sync client retries the request with backoff; nothing needs to be done."
    }
}

/// An update with a counter no server can send, as `LocalizedError`.
extension ImplausibleCounter: LocalizedError {
    /// Which counter, as a sentence.
    public var errorDescription: String? {
        switch self {
        case let .pts(pts, count): return "The server sent an update with pts \(pts) and count \(count), which no server can send."
        case let .qts(qts): return "The server sent a secret-chat update with qts \(qts), which no server can send."
        case let .channelPts(channelId, pts, count):
            return "The server sent an update of channel \(channelId) with pts \(pts) and count \(count), which no server can send."
        case let .seq(start, end): return "The server sent a batch with seq \(start)...\(end), which no server can send."
        }
    }

    /// What the sync layer does about it.
    public var recoverySuggestion: String? {
        "The update is not applied; the sync client fetches what the server really has."
    }
}

/// An outbound failure, as `LocalizedError`.
extension OutboundError: LocalizedError {
    /// What failed, as a sentence.
    public var errorDescription: String? {
        switch self {
        case .localMessageNotStored: return "The message could not be stored on this device."
        case let .messageNotFound(id): return "Message \(id) is not stored here, or the action does not apply to it."
        case .mixedChats: return "One deletion or forward can only hold messages of one chat."
        case let .fileUnreadable(path, reason): return "The file \(path) cannot be read (\(reason))."
        case let .fileSizeUnsupported(path, size): return "The file \(path) has \(size) bytes, which cannot be sent (empty, or beyond the server's limit)."
        }
    }

    /// What the user can do.
    public var recoverySuggestion: String? {
        switch self {
        case .localMessageNotStored: return "Send it again."
        case .messageNotFound: return "Reload the chat; the message may have been deleted."
        case .mixedChats: return "Delete or forward the messages of each chat separately."
        case .fileUnreadable: return "Keep the file in place (in the app's container) until the message is sent, then send it again."
        case .fileSizeUnsupported: return "Send a non-empty file within the server's size limit."
        }
    }
}
