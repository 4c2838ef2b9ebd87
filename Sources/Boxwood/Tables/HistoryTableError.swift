/// Why a history table operation failed. Bad stored bytes are reported, never trapped on.
public enum HistoryTableError: Error, Equatable, CustomStringConvertible {
    /// A stored key or value does not have the expected layout.
    case corrupt(table: Int32, reason: String)
    /// Every id of a (peer, namespace) has been used: a partial id cannot be assigned.
    case idSpaceExhausted(peerId: PeerId, namespace: MessageId.Namespace)
    /// The message to update or change does not exist.
    case messageNotFound(MessageId)
    /// An argument no table accepts (for example a partial id where a full one is needed).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case let .corrupt(table, reason): return "table \(table) is corrupt: \(reason)"
        case let .idSpaceExhausted(peerId, namespace): return "no message id left in \(peerId) namespace \(namespace)"
        case let .messageNotFound(id): return "message \(id) not found"
        case let .invalidArgument(reason): return "invalid argument: \(reason)"
        }
    }
}
