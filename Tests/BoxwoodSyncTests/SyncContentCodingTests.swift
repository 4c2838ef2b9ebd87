@testable import Boxwood
@testable import BoxwoodSync
import BoxwoodStore
import Foundation
import Testing

/// The sync layer's attributes and media are written with `PostboxCoding` directly (they were written through the
/// Codable bridge before). Random values (printed, replayable seeds: `BOXWOOD_SYNC_SEED`) round-trip; values in the
/// old form — written here by `Legacy*`, the former declarations kept verbatim, which the bridge encodes exactly as
/// older builds did — read back equal; the types whose fields did not change write the old bytes exactly; and a
/// message stored in the old form reads back through a Postbox.
@Suite struct SyncContentCodingTests {
    // MARK: The former declarations (PostboxCodable: the Codable bridge's layout), same type names

    struct LegacyTextEntities: MessageAttribute, PostboxCodable, Equatable {
        static let postboxTypeName = "SyncTextEntitiesAttribute"
        let entities: [ApiMessageEntity]
    }

    struct LegacyReactions: MessageAttribute, PostboxCodable, Equatable {
        static let postboxTypeName = "SyncReactionsAttribute"
        let reactions: [ApiReaction]
    }

    struct LegacyCounters: MessageAttribute, PostboxCodable, Equatable {
        static let postboxTypeName = "SyncCountersAttribute"
        let views: Int32?
        let forwards: Int32?
    }

    struct LegacyImage: Media, PostboxCodable, Equatable {
        static let postboxTypeName = "SyncMediaImage"
        let photoId: Int64
        let sizes: [SyncMediaImage.Size]
        var id: MediaId? { MediaId(namespace: SyncMediaNamespaces.photo, id: photoId) }
    }

    struct LegacyFile: Media, PostboxCodable, Equatable {
        static let postboxTypeName = "SyncMediaFile"
        let fileId: Int64
        let mimeType: String
        let size: Int64
        let fileName: String?
        let duration: Int32?
        let resource: SyncMediaResourceId
        var id: MediaId? { MediaId(namespace: SyncMediaNamespaces.file, id: fileId) }
    }

    struct LegacyWebPage: Media, PostboxCodable, Equatable {
        static let postboxTypeName = "SyncMediaWebPage"
        let webPageId: Int64
        let url: String
        let title: String?
        let summary: String?
        var id: MediaId? { MediaId(namespace: SyncMediaNamespaces.webPage, id: webPageId) }
    }

    struct LegacyUnsupported: Media, PostboxCodable, Equatable {
        static let postboxTypeName = "SyncMediaUnsupported"
        let kind: String
        var id: MediaId? { nil }
    }

    // MARK: Random values

    struct Values {
        var random: TestRandom

        mutating func int32() -> Int32 { Int32(truncatingIfNeeded: random.next()) }
        mutating func int64() -> Int64 { Int64(bitPattern: random.next()) }

        mutating func string() -> String {
            let alphabet: [String] = ["a", "Z", "0", " ", "é", "ß", "日本", "🙂", "👍🏽", "\u{0}", "\"", "x"]
            return (0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
        }

        mutating func optional<T>(_ make: (inout Values) -> T) -> T? {
            Bool.random(using: &random) ? make(&self) : nil
        }

        mutating func entities() -> [ApiMessageEntity] {
            (0..<Int.random(in: 0...7, using: &random)).map { _ in
                let kinds: [ApiMessageEntity.Kind] = [.bold, .italic, .code, .pre, .url, .mention, .hashtag,
                                                     .textUrl(string()), .mentionName(PeerId(int64()))]
                return ApiMessageEntity(kind: kinds.randomElement(using: &random)!, offset: int32(), length: int32())
            }
        }

        mutating func reactions() -> [ApiReaction] {
            (0..<Int.random(in: 0...5, using: &random)).map { _ in ApiReaction(emoji: string(), count: int32(), chosen: Bool.random(using: &random)) }
        }

        mutating func image() -> SyncMediaImage {
            SyncMediaImage(ApiPhoto(id: int64(), sizes: (0..<Int.random(in: 0...4, using: &random)).map { _ in
                ApiPhotoSize(type: string(), width: int32(), height: int32(), byteCount: int32())
            }))
        }

        mutating func file() -> SyncMediaFile {
            SyncMediaFile(ApiDocument(id: int64(), mimeType: string(), size: int64(), fileName: optional { $0.string() },
                                      duration: optional { $0.int32() }))
        }

        mutating func webPage() -> SyncMediaWebPage {
            SyncMediaWebPage(ApiWebPage(id: int64(), url: string(), title: optional { $0.string() }, summary: optional { $0.string() }))
        }
    }

    // MARK: Helpers

    static func bytes(_ value: any PostboxCoding) throws -> [UInt8] {
        let encoder = PostboxEncoder()
        encoder.encodeRootObject(value)
        return try encoder.makeArray()
    }

    static func decode<T: PostboxCoding>(_ bytes: [UInt8], as type: T.Type) throws -> T {
        try PostboxDecoder(bytes: bytes).decodeRootObject(as: type)
    }

    /// `value` written now reads back equal; `legacy` (its old form) reads back equal too; with `sameBytes`, both
    /// forms are the same bytes.
    static func check<T: PostboxCoding & Equatable>(_ value: T, legacy: any PostboxCoding, sameBytes: Bool, seed: UInt64) throws {
        let current = try bytes(value)
        let old = try bytes(legacy)
        #expect(try decode(current, as: T.self) == value, "seed \(seed): \(value) does not round-trip")
        #expect(try decode(old, as: T.self) == value, "seed \(seed): the old form of \(value) reads differently")
        if sameBytes { #expect(current == old, "seed \(seed): \(T.self) no longer writes the old bytes") }
    }

    // MARK: Tests

    @Test("attributes and media round-trip and read their old form (BOXWOOD_SYNC_SEED)")
    func roundTripsAndReadsTheOldForm() throws {
        let seeds = syncSeeds(default: 300, base: 0xC0D1_4600)
        print("SyncContentCodingTests: \(seeds.count) seeds from \(seeds.first ?? 0) (replay one with BOXWOOD_SYNC_SEED)")
        for seed in seeds {
            var values = Values(random: TestRandom(seed: seed))
            let entities = values.entities()
            try Self.check(SyncTextEntitiesAttribute(entities: entities), legacy: LegacyTextEntities(entities: entities), sameBytes: false, seed: seed)
            let reactions = values.reactions()
            try Self.check(SyncReactionsAttribute(reactions: reactions), legacy: LegacyReactions(reactions: reactions), sameBytes: false, seed: seed)
            let counters = SyncCountersAttribute(views: values.optional { $0.int32() }, forwards: values.optional { $0.int32() })
            try Self.check(counters, legacy: LegacyCounters(views: counters.views, forwards: counters.forwards), sameBytes: true, seed: seed)
            let image = values.image()
            try Self.check(image, legacy: LegacyImage(photoId: image.photoId, sizes: image.sizes), sameBytes: false, seed: seed)
            let file = values.file()
            try Self.check(file, legacy: LegacyFile(fileId: file.fileId, mimeType: file.mimeType, size: file.size, fileName: file.fileName,
                                                    duration: file.duration, resource: file.resource), sameBytes: false, seed: seed)
            let page = values.webPage()
            try Self.check(page, legacy: LegacyWebPage(webPageId: page.webPageId, url: page.url, title: page.title, summary: page.summary),
                           sameBytes: true, seed: seed)
            let kind = values.string()
            try Self.check(SyncMediaUnsupported(kind: kind), legacy: LegacyUnsupported(kind: kind), sameBytes: true, seed: seed)
        }
    }

    @Test func inconsistentArraysAreRefused() throws {
        let encoder = PostboxEncoder()
        encoder.encodeInt32Array([0, 7], forKey: "ek")
        encoder.encodeInt32Array([1, 2], forKey: "eo")
        encoder.encodeInt32Array([1, 2], forKey: "el")
        // A textUrl entity without its URL.
        #expect(throws: PostboxDecodingError.self) { try SyncTextEntitiesAttribute(decoder: PostboxDecoder(bytes: try encoder.makeArray())) }
        encoder.reset()
        encoder.encodeStringArray(["👍", "🔥"], forKey: "re")
        encoder.encodeInt32Array([3], forKey: "rc")
        encoder.encodeInt32Array([0, 1], forKey: "rs")
        #expect(throws: PostboxDecodingError.self) { try SyncReactionsAttribute(decoder: PostboxDecoder(bytes: try encoder.makeArray())) }
        encoder.reset()
        encoder.encodeInt32Array([9], forKey: "ek")
        encoder.encodeInt32Array([0], forKey: "eo")
        encoder.encodeInt32Array([1], forKey: "el")
        #expect(throws: PostboxDecodingError.self) { try SyncTextEntitiesAttribute(decoder: PostboxDecoder(bytes: try encoder.makeArray())) }
    }

    /// A message stored by an older build (attributes and media in the bridge's layout, the photo shared through
    /// table 6) reads back with its content, and an edit rewrites it in the new form.
    @Test func aMessageStoredInTheOldFormReads() async throws {
        try SyncClient.registerTypes()
        let path = NSTemporaryDirectory() + "bw-content-coding-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await SyncClient.openPostbox(path: path)
        let chat = PeerId(namespace: SyncNamespaces.user, id: 1_001)
        let entities = [ApiMessageEntity(kind: .textUrl("https://example.org"), offset: 0, length: 5),
                        ApiMessageEntity(kind: .mentionName(chat), offset: 6, length: 5), ApiMessageEntity(kind: .bold, offset: 0, length: 11)]
        let reactions = [ApiReaction(emoji: "👍", count: 3, chosen: true), ApiReaction(emoji: "🔥", count: 1, chosen: false)]
        let image = SyncMediaImage(ApiPhoto(id: 77, sizes: [ApiPhotoSize(type: "s", width: 90, height: 60, byteCount: 900)]))
        let ids = (1...2).map { MessageId(peerId: chat, namespace: SyncNamespaces.cloudMessages, id: $0) }
        try await postbox.transaction { tx in
            let attributes: [any MessageAttribute] = [SyncMessageAttribute(editVersion: 0, revision: 1), LegacyTextEntities(entities: entities),
                                                      LegacyReactions(reactions: reactions), LegacyCounters(views: 10, forwards: nil)]
            // Two carriers: the photo is shared through table 6 in its old form.
            let messages = ids.map { id in
                StoreMessage(id: .id(id), timestamp: 100 + id.id, authorId: chat, text: "hello world", attributes: attributes,
                             media: [LegacyImage(photoId: image.photoId, sizes: image.sizes)])
            }
            try tx.addMessages(messages, location: .random)
        }
        try await postbox.transaction { tx in
            for id in ids {
                let message = try #require(try tx.getMessage(id))
                let content = SyncMessageContent.content(of: message)
                #expect(content.entities == entities && content.reactions == reactions)
                #expect(content.views == 10 && content.forwards == nil)
                #expect(message.media.first as? SyncMediaImage == image)
            }
            // Rewritten by this build (the new form) next to a carrier still in the old one.
            let first = try #require(try tx.getMessage(ids[0]))
            try tx.updateMessage(ids[0], SyncStorage.restored(first, reactions: [ApiReaction(emoji: "🎉", count: 2, chosen: false)]))
        }
        try await postbox.transaction { tx in
            let first = try #require(try tx.getMessage(ids[0]))
            let second = try #require(try tx.getMessage(ids[1]))
            #expect(SyncMessageContent.content(of: first).reactions == [ApiReaction(emoji: "🎉", count: 2, chosen: false)])
            #expect(SyncMessageContent.content(of: first).entities == entities && SyncMessageContent.content(of: second).reactions == reactions)
            #expect(first.media.first as? SyncMediaImage == image && second.media.first as? SyncMediaImage == image)
        }
        try await postbox.close()
    }
}
