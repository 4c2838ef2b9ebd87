import Boxwood

extension ApiMessageContent {
    /// The content of a forwarded copy of a message whose content this is, as Telegram builds it (the server and
    /// the client's local copy use this one rule): the media, entities and grouping-free text stay; the forward
    /// header names the origin — kept from the original when it was itself a forward, else the channel (with the post
    /// id) or the author — and the copy starts without reply, reactions, counters or album.
    ///
    /// - Parameters:
    ///   - peerId: The chat the original is in.
    ///   - id: The original's id.
    ///   - authorId: The original's author.
    ///   - date: The original's date.
    public func forwardedCopy(from peerId: PeerId, id: Int32, authorId: PeerId, date: Int32) -> ApiMessageContent {
        let isChannel = peerId.namespace == SyncNamespaces.channel
        var copy = ApiMessageContent(media: media, entities: entities)
        copy.forward = forward ?? ApiForwardHeader(fromId: isChannel ? peerId : authorId, fromName: nil, date: date,
                                                   channelPost: isChannel ? id : nil)
        return copy
    }
}
