/// Turns stored messages into ``Message``s (Postbox's `renderIntermediateMessage`): resolves shared media (the media
/// table's items in place of their references), the author, the forward info's peers, the peers attributes and media refer to, the chat's associated peer, and — one level
/// deep — the messages attributes refer to, all from the tables as they are now (this transaction's changes
/// included). Peers come through the peer table's cache; a referred-to id that is not stored is left out.
struct MessageRenderer {
    let tables: PostboxTables

    /// `message` with what it refers to resolved.
    func render(_ message: IntermediateMessage) throws -> Message {
        try render(message, resolvingAssociatedMessages: true)
    }

    /// The stored message `id`, rendered (with the messages it refers to unless `resolvingAssociatedMessages` is
    /// false); nil when there is none.
    func message(_ id: MessageId, resolvingAssociatedMessages: Bool = true) throws -> Message? {
        try tables.history.history.getMessage(id).map { stored in try render(stored, resolvingAssociatedMessages: resolvingAssociatedMessages) }
    }

    /// `stored` with what it refers to resolved (the messages it refers to only with `resolvingAssociatedMessages`).
    func render(_ stored: IntermediateMessage, resolvingAssociatedMessages: Bool) throws -> Message {
        var message = stored
        message.media = try tables.history.history.resolveMedia(stored.media)
        let chat = try tables.peers.get(message.id.peerId)
        var peers: [PeerId: any Peer] = [:]
        for id in Self.referencedPeerIds(chatId: message.id.peerId, chat: chat, fields: message.fields) where peers[id] == nil {
            if let peer = id == message.id.peerId ? chat : try tables.peers.get(id) { peers[id] = peer }
        }
        let forwardInfo = message.forwardInfo.map { stored in
            MessageForwardInfo(stored, author: stored.authorId.flatMap { peers[$0] }, source: stored.sourceId.flatMap { peers[$0] })
        }
        var associatedMessages: [MessageId: Message] = [:]
        if resolvingAssociatedMessages {
            for attribute in message.attributes {
                for id in attribute.associatedMessageIds where associatedMessages[id] == nil {
                    guard let stored = try tables.history.history.getMessage(id) else { continue }
                    associatedMessages[id] = try render(stored, resolvingAssociatedMessages: false)
                }
            }
        }
        return Message(message, author: message.authorId.flatMap { peers[$0] }, forwardInfo: forwardInfo, peers: peers,
                       associatedMessages: associatedMessages)
    }

    /// The peers a message in `chatId` with `fields` refers to: the chat, its associated peer, the author, the
    /// forward info's author and source, and the peers of attributes and media (with repeats).
    static func referencedPeerIds(chatId: PeerId, chat: (any Peer)?, fields: MessageFields) -> [PeerId] {
        var ids = [chatId]
        if let id = chat?.associatedPeerId { ids.append(id) }
        if let id = fields.authorId { ids.append(id) }
        if let id = fields.forwardInfo?.authorId { ids.append(id) }
        if let id = fields.forwardInfo?.sourceId { ids.append(id) }
        for attribute in fields.attributes { ids += attribute.associatedPeerIds }
        for media in fields.media { ids += media.peerIds }
        return ids
    }
}

extension Message {
    /// The peers this message resolves, stored or not: a change to any of them changes how it renders.
    var referencedPeerIds: [PeerId] { MessageRenderer.referencedPeerIds(chatId: id.peerId, chat: peer, fields: fields) }
    /// The ids of its media (those that can be shared, and so updated in place).
    var mediaIds: [MediaId] { media.compactMap(\.id) }
}
