/// Whether and how a peer appears in the chat list (Postbox's `PeerChatListInclusion`).
public enum PeerChatListInclusion: Hashable, Sendable {
    /// Never listed.
    case notIncluded
    /// Listed in `groupId` when the peer has a top message, is pinned, or has a `minTimestamp` (then listed even
    /// without messages, at that timestamp at least).
    case ifHasMessagesOrOneOf(groupId: PeerGroupId, pinningIndex: UInt16?, minTimestamp: Int32?)

    var groupId: PeerGroupId? {
        if case let .ifHasMessagesOrOneOf(groupId, _, _) = self { return groupId }
        return nil
    }

    var pinningIndex: UInt16? {
        if case let .ifHasMessagesOrOneOf(_, pinningIndex, _) = self { return pinningIndex }
        return nil
    }

    func withPinningIndex(_ pinningIndex: UInt16?) -> PeerChatListInclusion {
        switch self {
        case .notIncluded: return self
        case let .ifHasMessagesOrOneOf(groupId, _, minTimestamp):
            return .ifHasMessagesOrOneOf(groupId: groupId, pinningIndex: pinningIndex, minTimestamp: minTimestamp)
        }
    }
}
