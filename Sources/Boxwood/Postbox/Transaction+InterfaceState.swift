/// Per-chat interface state kept by the app (table 67): drafts and scroll positions.
extension Transaction {
    /// The interface state of `peerId`, nil when none is stored.
    public func getPeerChatInterfaceState(_ peerId: PeerId) throws -> StoredPeerChatInterfaceState? {
        try history.interfaceStates.get(peerId)
    }

    /// Stores the interface state of `peerId` (nil removes it). Recorded in
    /// ``PostboxChanges/updatedPeerChatInterfaceStates`` unless the chat already had this state; chat-list rows show
    /// its ``StoredPeerChatInterfaceState/chatListEmbeddedState``, and its
    /// ``StoredPeerChatInterfaceState/overrideChatTimestamp`` places the chat in the chat list.
    public func setPeerChatInterfaceState(_ peerId: PeerId, state: StoredPeerChatInterfaceState?) throws {
        try history.interfaceStates.set(peerId, state)
    }
}
