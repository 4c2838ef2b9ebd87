/// The current message for each of a set of ids, for those that exist (Postbox's `MessagesView`).
public struct MessagesView: PostboxView {
    public let messages: [MessageId: Message]
}

final class MutableMessagesView: MutablePostboxView {
    private var tracked: TrackedMessages

    init(ids: Set<MessageId>, tables: PostboxTables) throws {
        tracked = try TrackedMessages(ids: ids, tables: tables)
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        try tracked.replay(tables: tables, changes: changes)
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let fresh = try TrackedMessages(ids: tracked.ids, tables: tables)
        defer { tracked = fresh }
        return !fresh.isSame(tracked.messages)
    }

    func immutableView() -> any PostboxView { MessagesView(messages: tracked.messages) }
}

/// The messages waiting to be sent: the indices of every stored message flagged ``MessageFlags/unsent`` and
/// not ``MessageFlags/failed`` (Postbox's `UnsentMessageIndicesView`), which the sending layer watches.
public struct UnsentMessagesView: PostboxView {
    public let indices: Set<MessageIndex>
}

final class MutableUnsentMessagesView: MutablePostboxView {
    private var indices: Set<MessageIndex>

    init(tables: PostboxTables) throws {
        indices = Set(try tables.history.unsent.get())
    }

    func replay(tables: PostboxTables, changes: PostboxChanges) throws -> Bool {
        guard !changes.unsentMessageOperations.isEmpty else { return false }
        let before = indices
        for operation in changes.unsentMessageOperations {
            switch operation {
            case let .insert(index): indices.insert(index)
            case let .remove(index): indices.remove(index)
            }
        }
        return indices != before
    }

    func refresh(tables: PostboxTables) throws -> Bool {
        let fresh = Set(try tables.history.unsent.get())
        defer { indices = fresh }
        return fresh != indices
    }

    func immutableView() -> any PostboxView { UnsentMessagesView(indices: indices) }
}
