/// The current stored message for each of a set of ids (those that exist), kept up to date from a change
/// record's history operations without reading the tables. Shared by the messages view and the peer view.
struct TrackedMessages {
    let ids: Set<MessageId>
    /// The chats the ids belong to: only their operations are looked at.
    private let peerIds: Set<PeerId>
    private(set) var messages: [MessageId: StoredMessage] = [:]

    init(ids: Set<MessageId>, tables: PostboxTables) throws {
        self.ids = ids
        peerIds = Set(ids.map(\.peerId))
        for id in ids {
            if let message = try tables.history.history.getMessage(id) { messages[id] = message }
        }
    }

    /// Applies the operations of the chats the ids belong to; true when a tracked message was added, changed,
    /// moved or removed (not when, say, one was added and removed again).
    mutating func replay(_ operationsByPeerId: [PeerId: [MessageHistoryOperation]]) -> Bool {
        guard !operationsByPeerId.isEmpty, !ids.isEmpty else { return false }
        let before = messages
        var touched = false
        for peerId in peerIds {
            guard let operations = operationsByPeerId[peerId] else { continue }
            for operation in operations {
                switch operation {
                case let .insertMessage(message) where ids.contains(message.id):
                    messages[message.id] = message
                    touched = true
                case let .remove(entries):
                    for (index, _) in entries where messages.removeValue(forKey: index.id) != nil { touched = true }
                case let .updateTimestamp(index, timestamp):
                    if messages[index.id] != nil {
                        messages[index.id]?.timestamp = timestamp
                        touched = true
                    }
                default:
                    break
                }
            }
        }
        return touched && !isSame(before)
    }

    /// Whether the messages held are `other`.
    func isSame(_ other: [MessageId: StoredMessage]) -> Bool {
        ViewValueComparison.same(messages, other) { ViewValueComparison.same($0, $1) }
    }
}
