@testable import Boxwood
@testable import BoxwoodSync
import Foundation
import Testing

/// A message's content (media, entities, reply, forward, reactions, album, counters) stored and read back, and the
/// bad input of the issue: recorded as what it is, never a crash, never a lost message.
@Suite struct SyncMessageContentTests {
    static let account = PeerId(namespace: SyncNamespaces.user, id: 1)
    static let alice = PeerId(namespace: SyncNamespaces.user, id: 1_001)
    static let group = PeerId(namespace: SyncNamespaces.group, id: 2_001)
    static let channel = PeerId(namespace: SyncNamespaces.channel, id: 3_001)
    static let photo = ApiPhoto(id: 77, sizes: [ApiPhotoSize(type: "s", width: 90, height: 60, byteCount: 900),
                                               ApiPhotoSize(type: "x", width: 1280, height: 853, byteCount: 200_000)])

    func withPostbox(_ body: (Postbox) async throws -> Void) async throws {
        try SyncClient.registerTypes()
        let path = NSTemporaryDirectory() + "bw-content-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await SyncClient.openPostbox(path: path)
        try await body(postbox)
        try await postbox.close()
    }

    func store(_ postbox: Postbox, _ messages: [ApiMessage]) async throws {
        try await postbox.transaction { tx in
            _ = try SyncStorage.addMessages(messages, location: .random, accountPeerId: Self.account, in: tx)
        }
    }

    func stored(_ postbox: Postbox, _ peerId: PeerId, _ id: Int32) async throws -> (LocalMessage?, Message?) {
        try await postbox.transaction { tx in
            let message = try tx.getMessage(MessageId(peerId: peerId, namespace: SyncNamespaces.cloudMessages, id: id))
            return (message.map(SyncInspector.localMessage), message)
        }
    }

    @Test func everyPartRoundTrips() async throws {
        try await withPostbox { postbox in
            let content = ApiMessageContent(
                media: .photo(Self.photo),
                entities: [ApiMessageEntity(kind: .bold, offset: 0, length: 5), ApiMessageEntity(kind: .textUrl("https://a.example"), offset: 6, length: 5),
                           ApiMessageEntity(kind: .mentionName(Self.alice), offset: 0, length: 2)],
                replyTo: ApiReplyHeader(messageId: 1),
                forward: ApiForwardHeader(fromId: Self.channel, fromName: nil, date: 50, channelPost: 9),
                reactions: [ApiReaction(emoji: "👍", count: 3, chosen: true), ApiReaction(emoji: "🔥", count: 1, chosen: false)],
                groupedId: 4_242, views: nil, forwards: nil, revision: 2)
            try await store(postbox, [
                ApiMessage(id: 1, peerId: Self.group, fromId: Self.alice, date: 100, text: "first", outgoing: false),
                ApiMessage(id: 2, peerId: Self.group, fromId: Self.alice, date: 101, text: "hello world", outgoing: false, editVersion: 1,
                           content: content),
                ApiMessage(id: 3, peerId: Self.channel, fromId: Self.channel, date: 102, text: "post", outgoing: false,
                           content: ApiMessageContent(media: .document(ApiDocument(id: 5, mimeType: "audio/ogg", size: 4_000, fileName: nil, duration: 12)),
                                                      views: 1_500, forwards: 7)),
            ])
            let (local, message) = try await stored(postbox, Self.group, 2)
            #expect(local?.content == content)
            #expect(local?.editVersion == 1)
            // Read as an app reads it: the photo with cache keys, the reply resolved, the mention's peer referenced.
            let image = try #require(message?.media.first as? SyncMediaImage)
            #expect(image.size(fitting: 320)?.resource == SyncMediaResourceId("photo:77:x"))
            #expect(message?.associatedMessages[MessageId(peerId: Self.group, namespace: SyncNamespaces.cloudMessages, id: 1)]?.text == "first")
            #expect(message?.forwardInfo?.sourceMessageId?.id == 9 && message?.groupingKey == 4_242)
            let channelPost = try await stored(postbox, Self.channel, 3).0
            #expect(channelPost?.content.views == 1_500 && channelPost?.content.forwards == 7)
            #expect(channelPost?.content.media == .document(ApiDocument(id: 5, mimeType: "audio/ogg", size: 4_000, fileName: nil, duration: 12)))
        }
    }

    @Test func badInputIsRecordedAsWhatItIs() async throws {
        try await withPostbox { postbox in
            let text = "héllo 👋"   // 8 UTF-16 units
            let content = ApiMessageContent(
                media: .unsupported(kind: "poll"),
                entities: [ApiMessageEntity(kind: .bold, offset: 0, length: 8),     // exactly the text: kept
                           ApiMessageEntity(kind: .italic, offset: 6, length: 3),   // past the end: dropped
                           ApiMessageEntity(kind: .code, offset: -1, length: 2),    // before the start: dropped
                           ApiMessageEntity(kind: .url, offset: 2, length: 0)],     // empty: dropped
                replyTo: ApiReplyHeader(messageId: 999),                           // never existed
                forward: ApiForwardHeader(fromId: nil, fromName: "Hidden", date: 5, channelPost: 3))
            try await store(postbox, [ApiMessage(id: 10, peerId: Self.group, fromId: Self.alice, date: 100, text: text, outgoing: false,
                                                 content: content)])
            let (local, message) = try await stored(postbox, Self.group, 10)
            let kept = try #require(local?.content)
            #expect(kept.entities == [ApiMessageEntity(kind: .bold, offset: 0, length: 8)])
            #expect(kept.media == .unsupported(kind: "poll"))
            #expect((message?.media.first as? SyncMediaUnsupported)?.kind == "poll", "a placeholder, not a lost message")
            #expect(kept.replyTo == ApiReplyHeader(messageId: 999) && message?.associatedMessages.isEmpty == true, "a reply marked missing")
            #expect(kept.forward == ApiForwardHeader(fromId: nil, fromName: "Hidden", date: 5, channelPost: nil))
            #expect(kept == SyncMessageContent.normalized(content, text: text))

            // A reaction update for a message that is not stored (deleted here) stores nothing.
            try await postbox.transaction { tx in
                try SyncStorage.updateIfNewer(ApiMessage(id: 11, peerId: Self.group, fromId: Self.alice, date: 100, text: "gone", outgoing: false,
                                                         content: ApiMessageContent(reactions: [ApiReaction(emoji: "👻", count: 1, chosen: false)], revision: 3)),
                                              accountPeerId: Self.account, in: tx)
            }
            #expect(try await stored(postbox, Self.group, 11).0 == nil)
        }
    }

    @Test func aNewerRevisionWinsAndAnOlderOneIsIgnored() async throws {
        try await withPostbox { postbox in
            func copy(revision: Int32, count: Int32) -> ApiMessage {
                ApiMessage(id: 20, peerId: Self.group, fromId: Self.alice, date: 100, text: "x", outgoing: false,
                           content: ApiMessageContent(reactions: [ApiReaction(emoji: "❤️", count: count, chosen: false)], revision: revision))
            }
            try await store(postbox, [copy(revision: 0, count: 1)])
            try await store(postbox, [copy(revision: 2, count: 5)])          // a reaction update, as getHistory or a push brings it
            #expect(try await stored(postbox, Self.group, 20).0?.content.reactions.first?.count == 5)
            try await store(postbox, [copy(revision: 1, count: 3)])          // an older copy arriving late
            #expect(try await stored(postbox, Self.group, 20).0?.content.reactions.first?.count == 5)
        }
    }

    @Test func aPhotoCarriedTwiceIsStoredOnce() async throws {
        try await withPostbox { postbox in
            try await store(postbox, [
                ApiMessage(id: 30, peerId: Self.group, fromId: Self.alice, date: 100, text: "look", outgoing: false,
                           content: ApiMessageContent(media: .photo(Self.photo))),
                ApiMessage(id: 5, peerId: Self.channel, fromId: Self.channel, date: 101, text: "forwarded", outgoing: false,
                           content: ApiMessageContent(media: .photo(Self.photo), forward: ApiForwardHeader(fromId: Self.alice, fromName: nil, date: 100, channelPost: nil))),
            ])
            let mediaId = MediaId(namespace: SyncMediaNamespaces.photo, id: Self.photo.id)
            let (shared, first, second) = try await postbox.transaction { tx in
                let entry = try tx.tables.history.media.get(mediaId)
                guard case let .direct(_, count)? = entry else { return (0, nil as Message?, nil as Message?) }
                return (Int(count), try tx.getMessage(MessageId(peerId: Self.group, namespace: SyncNamespaces.cloudMessages, id: 30)),
                        try tx.getMessage(MessageId(peerId: Self.channel, namespace: SyncNamespaces.cloudMessages, id: 5)))
            }
            #expect(shared == 2)
            #expect((first?.media.first as? SyncMediaImage)?.photoId == 77 && (second?.media.first as? SyncMediaImage)?.photoId == 77)
        }
    }
}
