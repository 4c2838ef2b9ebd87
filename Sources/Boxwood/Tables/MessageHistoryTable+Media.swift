/// Media shared between messages (Postbox's `MessageMediaTable` semantics), kept in step with the messages by the
/// history table:
///
/// - The first message stored with a media item that has an id keeps it embedded in its own value; the media table
///   records which message that is (`.messageReference`).
/// - When a second message arrives with the same id, the media moves into the media table (`.direct`, counted twice):
///   both messages then hold a `SharedMediaReference` at the media's place in their list. Each further message counts
///   once more. The stored copy is kept; the newcomer's copy of the media is not stored (``updateMedia(_:to:)``
///   changes it).
/// - Deleting a message uncounts its references; the entry goes with the last one. Moving a message to another
///   timestamp moves a `.messageReference` with it.
///
/// Invariant (checked by `MessageMediaTests` against a model): for every media id carried by stored messages, either
/// exactly one message embeds it and the entry names that message, or no message embeds it, the entry is direct and
/// its count is the number of references to it in stored messages; no entry exists for an id no message carries.
extension MessageHistoryTable {
    /// `message` with its shared media replaced by references, after counting them in the media table.
    func shareMedia(of message: IntermediateMessage) throws -> IntermediateMessage {
        var message = message
        for i in message.media.indices {
            guard let id = message.media[i].id else { continue }
            switch try mediaTable.get(id) {
            case nil:
                if message.media[i] is SharedMediaReference {
                    throw HistoryTableError.invalidArgument("message \(message.id) refers to media \(id), which no message carries")
                }
                try mediaTable.set(id, .messageReference(message.index))
            case let .direct(stored, count):
                try mediaTable.set(id, .direct(stored, referenceCount: count &+ 1))
                message.media[i] = SharedMediaReference(id)
            case let .messageReference(ownerIndex):
                // The same media twice in one message: both stay embedded under the one entry.
                if ownerIndex == message.index { continue }
                var shared = message.media[i]
                var count: Int32 = 1
                if var owner = try self.message(at: ownerIndex),
                   let j = owner.media.firstIndex(where: { $0.id == id && !($0 is SharedMediaReference) }) {
                    shared = owner.media[j]
                    owner.media[j] = SharedMediaReference(id)
                    try rewriteStoredValue(owner)
                    count = 2
                }
                if shared is SharedMediaReference {
                    throw HistoryTableError.corrupt(table: MessageMediaTable.tableId, reason: "media \(id) is referenced but stored nowhere")
                }
                try mediaTable.set(id, .direct(shared, referenceCount: count))
                message.media[i] = SharedMediaReference(id)
            }
        }
        return message
    }

    /// Drops `message`'s claims on shared media (it is being removed); `freed` gets its embedded media and each shared
    /// item whose last reference it held.
    func releaseMedia(of message: IntermediateMessage, freed: ((any Media) -> Void)?) throws {
        for media in message.media {
            if let reference = media as? SharedMediaReference {
                guard case let .direct(stored, count)? = try mediaTable.get(reference.mediaId) else { continue }
                if count <= 1 {
                    try mediaTable.remove(reference.mediaId)
                    freed?(stored)
                } else {
                    try mediaTable.set(reference.mediaId, .direct(stored, referenceCount: count - 1))
                }
                continue
            }
            if let id = media.id, case let .messageReference(owner)? = try mediaTable.get(id), owner == message.index {
                try mediaTable.remove(id)
            }
            freed?(media)
        }
    }

    /// After `message` moved from `oldIndex` to its current index, the media it embeds follow it.
    func moveMediaReferences(of message: IntermediateMessage, from oldIndex: MessageIndex) throws {
        for media in message.media where !(media is SharedMediaReference) {
            guard let id = media.id, case let .messageReference(owner)? = try mediaTable.get(id), owner == oldIndex else { continue }
            try mediaTable.set(id, .messageReference(message.index))
        }
    }

    /// `media` (a stored message's list) with each reference replaced by the shared media item; a reference whose
    /// entry is missing is `corrupt`.
    func resolveMedia(_ media: [any Media]) throws -> [any Media] {
        guard media.contains(where: { $0 is SharedMediaReference }) else { return media }
        return try media.map { item throws -> any Media in
            guard let reference = item as? SharedMediaReference else { return item }
            guard case let .direct(stored, _)? = try mediaTable.get(reference.mediaId) else {
                throw HistoryTableError.corrupt(table: MessageMediaTable.tableId, reason: "media \(reference.mediaId) is referenced but not stored")
            }
            return stored
        }
    }

    /// The media item `id` as stored (shared, or embedded in the one message that carries it); nil when no stored
    /// message carries it.
    func media(_ id: MediaId) throws -> (any Media)? {
        switch try mediaTable.get(id) {
        case nil:
            return nil
        case let .direct(stored, _):
            return stored
        case let .messageReference(index):
            return try message(at: index)?.media.first { $0.id == id && !($0 is SharedMediaReference) }
        }
    }

    /// Replaces the stored media item `id` with `media` (whose id must be `id`) for every message that carries it,
    /// recorded in ``updatedMedia``. Returns the index of the message whose value changed (the one embedding it),
    /// none when it is shared or not stored.
    func updateMedia(_ id: MediaId, to media: any Media) throws -> Set<MessageIndex> {
        guard media.id == id, !(media is SharedMediaReference) else {
            throw HistoryTableError.invalidArgument("updateMedia(\(id)) with a media item whose id is \(media.id.map { "\($0)" } ?? "nil")")
        }
        switch try mediaTable.get(id) {
        case nil:
            return []
        case let .direct(_, count):
            try mediaTable.set(id, .direct(media, referenceCount: count))
            updatedMedia[id] = media
            return []
        case let .messageReference(index):
            guard var owner = try message(at: index) else {
                throw HistoryTableError.corrupt(table: MessageMediaTable.tableId, reason: "media \(id) names message \(index), which is not stored")
            }
            for j in owner.media.indices where owner.media[j].id == id && !(owner.media[j] is SharedMediaReference) {
                owner.media[j] = media
            }
            try rewriteStoredValue(owner)
            updatedMedia[id] = media
            return [index]
        }
    }
}
