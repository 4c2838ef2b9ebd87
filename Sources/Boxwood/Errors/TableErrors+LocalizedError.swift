import Foundation

/// The history tables' errors as `LocalizedError`.
extension HistoryTableError: LocalizedError {
    /// What is wrong, as a sentence.
    public var errorDescription: String? {
        switch self {
        case let .corrupt(table, reason): return "Stored message history is damaged (table \(table)): \(reason)."
        case let .idSpaceExhausted(peerId, namespace): return "No message id is left in chat \(peerId), namespace \(namespace)."
        case let .messageNotFound(id): return "Message \(id) is not stored."
        case let .invalidArgument(reason): return "Invalid argument: \(reason)."
        }
    }

    /// What the app can do.
    public var recoverySuggestion: String? {
        switch self {
        case .corrupt: return "Restore the database from a backup, or delete and sync the chat again."
        case .idSpaceExhausted, .messageNotFound, .invalidArgument: return nil
        }
    }
}

/// The operation log's errors as `LocalizedError`.
extension PeerOperationLogError: LocalizedError {
    /// What is wrong, as a sentence.
    public var errorDescription: String? {
        let text = description
        return text.prefix(1).uppercased() + text.dropFirst() + "."
    }
}
