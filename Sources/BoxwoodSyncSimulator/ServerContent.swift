import BoxwoodSync
import Boxwood

/// What the simulated server puts in messages besides text — media (some of it shared between messages, as a
/// forwarded photo is), entities, replies, forwards, reactions, counters — and the bad input a real server sends
/// now and then: media of a kind the client does not know, an entity that does not lie inside the text, a reply to
/// a message that does not exist, a reaction update for a message that was deleted. All of it from its own random
/// stream (`contentRandom`), so that the traffic's events are those of the same seed without content.
extension ServerState {
    /// The share of messages with each piece of bad input.
    static let badContentRate = 0.03
    static let reactionEmoji = ["👍", "❤️", "😂", "🔥", "😮", "🎉"]

    /// Content for a new message of `peerId` with `text`.
    mutating func newContent(peerId: PeerId, text: String, date: Int32) -> ApiMessageContent {
        var content = ApiMessageContent()
        let roll = contentRandom.unit()
        if roll < 0.22 {
            content.media = .photo(newOrSharedPhoto())
        } else if roll < 0.30 {
            nextMediaId += 1
            let voice = contentRandom.chance(0.4)
            content.media = .document(ApiDocument(id: nextMediaId, mimeType: voice ? "audio/ogg" : "application/pdf",
                                                  size: Int64(contentRandom.int(in: 1_000...5_000_000)),
                                                  fileName: voice ? nil : "\(Vocabulary.words[contentRandom.int(in: 0...Vocabulary.words.count - 1)]).pdf",
                                                  duration: voice ? contentRandom.int32(in: 1...300) : nil))
        } else if roll < 0.36 {
            // Every message with the same link shares one preview.
            let site = contentRandom.int(in: 1...5)
            content.media = .webPage(ApiWebPage(id: Int64(900_000 + site), url: "https://example.org/\(site)", title: "Page \(site)",
                                                summary: "About \(Vocabulary.words[site])"))
        } else if roll < 0.36 + Self.badContentRate {
            content.media = .unsupported(kind: contentRandom.chance(0.5) ? "poll" : "dice")
        }
        let length = Int32(text.utf16.count)
        if contentRandom.chance(0.25), length > 1 {
            let offset = contentRandom.int32(in: 0...(length - 1))
            let kinds: [ApiMessageEntity.Kind] = [.bold, .italic, .code, .url, .hashtag, .textUrl("https://example.org")]
            content.entities.append(ApiMessageEntity(kind: contentRandom.element(of: kinds)!, offset: offset,
                                                     length: contentRandom.int32(in: 1...(length - offset))))
        }
        if peerId.namespace == SyncNamespaces.group || peerId.namespace == SyncNamespaces.channel, contentRandom.chance(Self.mentionRate),
           length > 1 {
            // A mention of the account (the message is `mentioned`: see ServerMentions.swift).
            content.entities.append(ApiMessageEntity(kind: .mentionName(accountPeerId), offset: 0, length: min(length, 5)))
        }
        if contentRandom.chance(Self.badContentRate) {
            // Bad input: past the end of the text.
            content.entities.append(ApiMessageEntity(kind: .bold, offset: length, length: 3))
        }
        if contentRandom.chance(0.18), let replied = contentRandom.element(of: chats[peerId]?.sortedIds() ?? []) {
            content.replyTo = ApiReplyHeader(messageId: replied)
        } else if contentRandom.chance(Self.badContentRate) {
            // Bad input: a message that never existed.
            content.replyTo = ApiReplyHeader(messageId: Int32.max - Int32(contentRandom.int(in: 1...1_000)))
        }
        if contentRandom.chance(0.1) {
            if let channel = contentRandom.element(of: channels), contentRandom.chance(0.5) {
                content.forward = ApiForwardHeader(fromId: channel, fromName: nil, date: date - 100,
                                                   channelPost: contentRandom.int32(in: 1...50))
            } else if contentRandom.chance(0.5), let user = contentRandom.element(of: otherUsers) {
                content.forward = ApiForwardHeader(fromId: user, fromName: nil, date: date - 50, channelPost: nil)
            } else {
                content.forward = ApiForwardHeader(fromId: nil, fromName: "Hidden \(contentRandom.int(in: 1...9))", date: date - 10,
                                                   channelPost: nil)
            }
        }
        if contentRandom.chance(0.12) {
            content.reactions = [ApiReaction(emoji: contentRandom.element(of: Self.reactionEmoji)!,
                                             count: contentRandom.int32(in: 1...9), chosen: false)]
        }
        if peerId.namespace == SyncNamespaces.channel {
            content.views = contentRandom.int32(in: 1...10_000)
            content.forwards = contentRandom.int32(in: 0...50)
        }
        return content
    }

    /// A new photo, or (one time in six) one an earlier message carries: the client then shares it.
    private mutating func newOrSharedPhoto() -> ApiPhoto {
        if contentRandom.chance(1.0 / 6), let earlier = contentRandom.element(of: photos) { return earlier }
        nextMediaId += 1
        let width = contentRandom.int32(in: 320...2_560)
        let height = contentRandom.int32(in: 320...2_560)
        let photo = ApiPhoto(id: nextMediaId, sizes: [
            ApiPhotoSize(type: "s", width: 90, height: 90 * height / width, byteCount: contentRandom.int32(in: 800...3_000)),
            ApiPhotoSize(type: "x", width: width, height: height, byteCount: contentRandom.int32(in: 50_000...900_000)),
        ])
        photos.append(photo)
        return photo
    }

    /// The ids of an album of `count` photos: the content of each (the same grouped id).
    mutating func albumContents(count: Int) -> [ApiMessageContent] {
        nextMediaId += 1
        let groupedId = 7_000_000 + nextMediaId
        return (0..<count).map { _ in ApiMessageContent(media: .photo(newOrSharedPhoto()), groupedId: groupedId) }
    }

    /// A reaction on a random message (someone adds one, or the account changes its own); the server's copy gets a
    /// new revision and the edit goes out as an update. Sometimes (bad input) the update is for a message deleted
    /// earlier, which a client must ignore. False when there is no message to react to.
    mutating func reactToMessage() -> Bool {
        let candidates = sortedChatPeers.filter { $0.namespace != SyncNamespaces.secretChat && !(chats[$0]!.messages.isEmpty) }
        guard let peer = trafficRandom.element(of: candidates) else { return false }
        let date = tick()
        var message: ApiMessage
        if contentRandom.chance(Self.badContentRate), var gone = recentlyDeleted[peer] {
            gone.content.revision += 1
            gone.content.reactions = [ApiReaction(emoji: "👻", count: 1, chosen: false)]
            recentlyDeleted[peer] = gone
            message = gone
        } else {
            guard let id = trafficRandom.element(of: chats[peer]!.sortedIds()) else { return false }
            message = chats[peer]!.messages[id]!
            let emoji = contentRandom.element(of: Self.reactionEmoji)!
            var reactions = message.content.reactions
            if contentRandom.chance(0.4) {
                // The account's own choice, made on another device.
                reactions = reactions.choosing(emoji)
            } else if let index = reactions.firstIndex(where: { $0.emoji == emoji }) {
                reactions[index].count += 1
            } else {
                reactions.append(ApiReaction(emoji: emoji, count: 1, chosen: false))
            }
            message.content.reactions = reactions
            if peer.namespace == SyncNamespaces.channel { message.content.views = (message.content.views ?? 0) + 1 }
            message.content.revision += 1
            chats[peer]!.messages[message.id] = message
        }
        let edited = message
        if peer.namespace == SyncNamespaces.channel {
            pushSingle(recordChannelEvent(channelId: peer, date: date) { .editChannelMessage(edited, pts: $0, ptsCount: 1) }, date: date)
        } else {
            pushSingle(recordPtsEvent(date: date) { .editMessage(edited, pts: $0, ptsCount: 1) }, date: date)
        }
        return true
    }
}
