/// What ``Transaction/addMessages(_:location:)`` did with the messages it was given.
///
/// A message whose id is already stored is left as it is — Postbox never overwrites a message on add (use
/// ``Transaction/updateMessage(_:_:)`` to change one) — and its id is listed in ``existing`` instead of
/// ``added``, so that a caller who expected it to be new can tell.
public struct AddMessagesResult: Equatable, Sendable {
    /// The ids of the messages stored, in the order given (a partial id as it was assigned).
    public var added: [MessageId]
    /// The ids that were already stored, in the order given: those messages were left unchanged. An id given
    /// twice in one call is stored the first time and listed here the second.
    public var existing: [MessageId]
    /// The id of each stored message that has a `globallyUniqueId`, by that id (Postbox's return value of
    /// `addMessages`).
    public var idsByGloballyUniqueId: [Int64: MessageId]

    public init(added: [MessageId] = [], existing: [MessageId] = [], idsByGloballyUniqueId: [Int64: MessageId] = [:]) {
        self.added = added
        self.existing = existing
        self.idsByGloballyUniqueId = idsByGloballyUniqueId
    }
}
