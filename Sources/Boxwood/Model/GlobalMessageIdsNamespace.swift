/// Which (peer namespace, message namespace) pairs use account-wide message ids (Telegram's private chats and
/// basic groups in the cloud namespace), indexed by `GlobalMessageIdsTable`.
public struct GlobalMessageIdsNamespace: Hashable, Sendable {
    public let peerIdNamespace: PeerId.Namespace
    public let messageIdNamespace: MessageId.Namespace

    public init(peerIdNamespace: PeerId.Namespace, messageIdNamespace: MessageId.Namespace) {
        self.peerIdNamespace = peerIdNamespace
        self.messageIdNamespace = messageIdNamespace
    }
}
