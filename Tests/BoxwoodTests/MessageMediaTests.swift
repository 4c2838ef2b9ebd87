import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// Shared media (table 6, Postbox's `MessageMediaTable`): the first message with a media id embeds it, a second one
/// moves it into the table with a count, deleting the last carrier frees it (and `forEachMedia` says so),
/// `updateMedia` changes it for every carrier and wakes the views that show it.
@Suite(.timeLimit(.minutes(2))) struct MessageMediaTests {
    init() throws { try registerViewTestTypes() }

    static let chat = peer(0, 1)
    static let other = peer(0, 2)
    static func id(_ n: Int32, in chat: PeerId = chat) -> MessageId { MessageId(peerId: chat, namespace: 0, id: n) }
    static func photo(_ n: Int64, _ caption: String) -> TestImage {
        TestImage(mediaId: MediaId(namespace: 1, id: n), sizes: [90, 320], caption: caption)
    }
    static func inline(_ caption: String) -> TestImage { TestImage(mediaId: nil, sizes: [1], caption: caption) }
    static func message(_ id: MessageId, _ media: [TestImage], text: String = "") -> StoreMessage {
        StoreMessage(id: .id(id), timestamp: id.id, authorId: nil, text: text, media: media)
    }

    func withPostbox(_ tag: String, _ body: (Postbox, String) async throws -> Void) async throws {
        let path = NSTemporaryDirectory() + "bw-media-\(tag)-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        try await body(postbox, path)
        try await postbox.close()
    }

    /// The media table's entries, by id: "embedded in <message id>" or "shared ×<count>".
    static func entries(_ tx: Transaction) throws -> [MediaId: String] {
        var result: [MediaId: String] = [:]
        for (id, entry) in try tx.tables.history.media.all() {
            switch entry {
            case let .messageReference(index): result[id] = "embedded in \(index.id.id)"
            case let .direct(_, count): result[id] = "shared ×\(count)"
            }
        }
        return result
    }

    static func captions(_ message: Message?) -> [String] { message?.media.map { ($0 as! TestImage).caption } ?? [] }

    /// Found by `boxwood-bench`'s sync-catchup (a difference of 1,000 updates in one transaction): the change record
    /// rendered each inserted message as recorded at its insertion, with references to shared media that a later
    /// deletion in the same transaction had freed — "table 6 is corrupt" at commit, and the whole batch refused.
    @Test func carriersAddedSharedAndDeletedInOneTransactionCommit() async throws {
        try await withPostbox("one-transaction") { postbox, _ in
            let views = postbox.view(.messageHistory(peerId: Self.chat, namespace: 0, count: 10))
            var iterator = views.makeAsyncIterator()
            _ = try await iterator.next()
            try await postbox.transaction { tx in
                try tx.addMessages([Self.message(Self.id(1), [Self.photo(7, "first")])], location: .random)
                try tx.addMessages([Self.message(Self.id(2), [Self.photo(7, "second")])], location: .random)
                try tx.addMessages([Self.message(Self.id(3), [Self.photo(7, "third")]), Self.message(Self.id(4), [Self.photo(8, "kept")])],
                                   location: .random)
                // One carrier rewritten (its media shared again), then every carrier of 7 deleted: the entry goes.
                try tx.updateMessage(Self.id(3), Self.message(Self.id(3), [Self.photo(7, "third, edited")], text: "edited"))
                try tx.deleteMessages([Self.id(1), Self.id(2), Self.id(3)])
                #expect(try Self.entries(tx) == [MediaId(namespace: 1, id: 8): "embedded in 4"])
            }
            let view = try #require(try await iterator.next())
            #expect(view.entries.map(\.id) == [Self.id(4)])
            #expect(Self.captions(view.entries.first) == ["kept"])
        }
    }

    @Test func firstCarrierEmbedsASecondSharesTheLastFrees() async throws {
        try await withPostbox("semantics") { postbox, _ in
            let x = MediaId(namespace: 1, id: 7)
            try await postbox.transaction { tx in
                try tx.addMessages([Self.message(Self.id(1), [Self.inline("a"), Self.photo(7, "first")])], location: .random)
                #expect(try Self.entries(tx) == [x: "embedded in 1"])
                // A second carrier, in another chat, with its own copy: the stored copy is kept and counted twice.
                try tx.addMessages([Self.message(Self.id(2, in: Self.other), [Self.photo(7, "second copy")])], location: .random)
                #expect(try Self.entries(tx) == [x: "shared ×2"])
                #expect(Self.captions(try tx.getMessage(Self.id(1))) == ["a", "first"], "order kept, the media resolved")
                #expect(Self.captions(try tx.getMessage(Self.id(2, in: Self.other))) == ["first"])
                #expect((try tx.getMedia(x) as? TestImage)?.caption == "first")
            }
            // The stored form of the first message now refers to the table.
            try await postbox.transaction { tx in
                let stored = try #require(try tx.tables.history.history.getMessage(Self.id(1)))
                #expect(stored.media.count == 2 && stored.media[1] is SharedMediaReference)
            }
            let freed = try await postbox.transaction { tx -> [String] in
                var freed: [String] = []
                try tx.deleteMessages([Self.id(1)], forEachMedia: { freed.append(($0 as! TestImage).caption) })
                #expect(try Self.entries(tx) == [x: "shared ×1"])
                try tx.deleteMessages([Self.id(2, in: Self.other)], forEachMedia: { freed.append(($0 as! TestImage).caption) })
                #expect(try Self.entries(tx).isEmpty)
                #expect(try tx.getMedia(x) == nil)
                return freed
            }
            #expect(freed == ["a", "first"], "the inline item with its message, the shared one with its last carrier")
        }
    }

    @Test func updateMediaReachesEveryCarrierAndRefusesAnotherId() async throws {
        try await withPostbox("update") { postbox, _ in
            let x = MediaId(namespace: 1, id: 7)
            try await postbox.transaction { tx in
                try tx.addMessages([Self.message(Self.id(1), [Self.photo(7, "thumb")])], location: .random)
                // Embedded: the owner's value changes, and its index is returned.
                #expect(try tx.updateMedia(x, update: Self.photo(7, "downloaded")) == [MessageIndex(id: Self.id(1), timestamp: 1)])
                #expect(Self.captions(try tx.getMessage(Self.id(1))) == ["downloaded"])
                try tx.addMessages([Self.message(Self.id(2), [Self.photo(7, "ignored")])], location: .random)
                // Shared: stored once, no message value changes.
                #expect(try tx.updateMedia(x, update: Self.photo(7, "edited")).isEmpty)
                #expect(Self.captions(try tx.getMessage(Self.id(1))) == ["edited"])
                #expect(Self.captions(try tx.getMessage(Self.id(2))) == ["edited"])
                #expect(throws: HistoryTableError.self) { try tx.updateMedia(x, update: Self.photo(8, "wrong id")) }
                #expect(try tx.updateMedia(MediaId(namespace: 1, id: 99), update: Self.photo(99, "nobody")).isEmpty)
                #expect(try tx.getMedia(MediaId(namespace: 1, id: 99)) == nil)
            }
        }
    }

    @Test func viewsShowUpdatedMediaAndIgnoreOtherMedia() async throws {
        try await withPostbox("views") { postbox, _ in
            let x = MediaId(namespace: 1, id: 7)
            try await postbox.transaction { tx in
                try tx.addMessages([Self.message(Self.id(1), [Self.photo(7, "thumb")]),
                                    Self.message(Self.id(5, in: Self.other), [Self.photo(8, "elsewhere")])], location: .random)
            }
            @Sendable func caption(_ view: any PostboxView) -> String? {
                ((view as! MessageHistoryView).entries.first?.media.first as? TestImage)?.caption
            }
            try await expectSelectiveView(postbox, PostboxViewQuery.messageHistory(peerId: Self.chat, count: 10).key,
                                          initial: { caption($0) == "thumb" }, steps: [
                .irrelevant { tx in try tx.updateMedia(MediaId(namespace: 1, id: 8), update: Self.photo(8, "changed elsewhere")) },
                .relevant({ tx in try tx.updateMedia(x, update: Self.photo(7, "full")) }, expect: { caption($0) == "full" }),
            ])
            try await expectSelectiveView(postbox, .messages([Self.id(1)]), initial: { view in
                ((view as! MessagesView).messages[Self.id(1)]?.media.first as? TestImage)?.caption == "full"
            }, steps: [
                .irrelevant { tx in try tx.updateMedia(MediaId(namespace: 1, id: 8), update: Self.photo(8, "again")) },
                .relevant({ tx in try tx.updateMedia(x, update: Self.photo(7, "fuller")) }, expect: { view in
                    ((view as! MessagesView).messages[Self.id(1)]?.media.first as? TestImage)?.caption == "fuller"
                }),
            ])
        }
    }

    /// A damaged media entry is a typed error naming table 6 when a message that refers to it is read.
    @Test func aDamagedEntryIsCorruptNotACrash() async throws {
        try await withPostbox("damaged") { postbox, _ in
            try await postbox.transaction { tx in
                try tx.addMessages([Self.message(Self.id(1), [Self.photo(7, "a")]), Self.message(Self.id(2), [Self.photo(7, "b")])],
                                   location: .random)
            }
            for garbage: [UInt8] in [[9], [0, 200, 0, 0, 0], [1, 2, 3], [0, 1, 0, 0, 0, 0xFF, 0, 0, 0, 0]] {
                try await postbox.transaction { tx in
                    let media = try tx.tables.history.media
                    var key = ValueBoxKey(length: 12)
                    key.setInt32(0, value: 1)
                    key.setInt64(4, value: 7)
                    try media.valueBox.set(media.table, key: key, value: MemoryBuffer(garbage))
                    #expect(throws: HistoryTableError.self, "entry \(garbage)") { try tx.getMessage(Self.id(2)) }
                }
            }
        }
    }

    /// Random adds, deletes, edits and media updates over a few shared ids, against a model of what each message
    /// shows, what the table holds and what `forEachMedia` reports; reopening now and then.
    @Test func randomOperationsMatchAModel() async throws {
        let seed = testSeed("MessageMediaTests.randomOperationsMatchAModel")
        var rng = SplitMix64(seed: seed)
        let path = NSTemporaryDirectory() + "bw-media-model-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        var shown: [MessageId: [TestImage]] = [:]     // what each message must render
        var stored: [MediaId: TestImage] = [:]        // the one stored value of each carried id
        var nextId: Int32 = 1
        var nextCaption = 0

        func carriers(_ id: MediaId) -> [MessageId] { shown.filter { $0.value.contains { $0.mediaId == id } }.map(\.key) }
        func randomMedia(_ rng: inout SplitMix64) -> [TestImage] {
            var used = Set<Int64>()
            return (0..<rng.below(4)).compactMap { _ in
                nextCaption += 1
                if rng.chance(0.3) { return Self.inline("i\(nextCaption)") }
                let n = Int64(1 + rng.below(6))
                guard used.insert(n).inserted else { return nil }
                return Self.photo(n, "p\(n).\(nextCaption)")
            }
        }
        /// The model's side of storing `media` for `id`: a carried id shows its stored value, a new one is stored.
        func storeInModel(_ id: MessageId, _ media: [TestImage]) {
            shown[id] = media.map { item in
                guard let mediaId = item.mediaId else { return item }
                if let value = stored[mediaId] { return value }
                stored[mediaId] = item
                return item
            }
        }
        /// The model's side of removing `id`: the captions `forEachMedia` must report.
        func removeFromModel(_ id: MessageId) -> [String] {
            guard let media = shown.removeValue(forKey: id) else { return [] }
            var freed: [String] = []
            for item in media {
                guard let mediaId = item.mediaId else { freed.append(item.caption); continue }
                if carriers(mediaId).isEmpty {
                    freed.append(stored.removeValue(forKey: mediaId)!.caption)
                }
            }
            return freed
        }

        for step in 0..<400 {
            let roll = rng.below(100)
            if roll < 40 || shown.isEmpty {
                let id = Self.id(nextId, in: rng.chance(0.5) ? Self.chat : Self.other)
                nextId += 1
                let media = randomMedia(&rng)
                try await postbox.transaction { tx in try tx.addMessages([Self.message(id, media)], location: .random) }
                storeInModel(id, media)
            } else if roll < 65 {
                let victims = Array(shown.keys.sorted { $0.id < $1.id }.shuffledPrefix(1 + rng.below(3), &rng))
                let freed = try await postbox.transaction { tx -> [String] in
                    var freed: [String] = []
                    try tx.deleteMessages(victims, forEachMedia: { freed.append(($0 as! TestImage).caption) })
                    return freed
                }
                let expected = victims.flatMap(removeFromModel)
                #expect(freed.sorted() == expected.sorted(), "step \(step): deleting \(victims) freed \(freed), expected \(expected)")
            } else if roll < 85 {
                let id = shown.keys.sorted { $0.id < $1.id }[rng.below(shown.count)]
                let media = randomMedia(&rng)
                try await postbox.transaction { tx in try tx.updateMessage(id, Self.message(id, media, text: "edited")) }
                _ = removeFromModel(id)
                storeInModel(id, media)
            } else if roll < 97 {
                let mediaId = MediaId(namespace: 1, id: Int64(1 + rng.below(6)))
                nextCaption += 1
                let value = Self.photo(mediaId.id, "u\(mediaId.id).\(nextCaption)")
                try await postbox.transaction { tx in _ = try tx.updateMedia(mediaId, update: value) }
                if stored[mediaId] != nil {
                    stored[mediaId] = value
                    for (id, media) in shown { shown[id] = media.map { $0.mediaId == mediaId ? value : $0 } }
                }
            } else {
                try await postbox.close()
                postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
            }

            let (expectedShown, expectedStored) = (shown, stored)
            let expectedEntries = Dictionary(uniqueKeysWithValues: stored.keys.map { mediaId -> (MediaId, String) in
                let holders = carriers(mediaId)
                return (mediaId, holders.count == 1 ? "embedded in \(holders[0].id)" : "shared ×\(holders.count)")
            })
            let problems = try await postbox.transaction { tx -> [String] in
                var problems: [String] = []
                for (id, media) in expectedShown {
                    let rendered = try tx.getMessage(id)?.media.map { $0 as! TestImage }
                    if rendered != media { problems.append("message \(id): \(rendered.map { $0.map(\.caption) } ?? []) ≠ \(media.map(\.caption))") }
                }
                for n in Int64(1)...6 {
                    let mediaId = MediaId(namespace: 1, id: n)
                    if (try tx.getMedia(mediaId) as? TestImage) != expectedStored[mediaId] { problems.append("getMedia(\(mediaId))") }
                }
                // A message left with one carrier keeps a shared entry (counted once), as in Postbox.
                var entries = try Self.entries(tx)
                for (mediaId, text) in entries where text == "shared ×1" && expectedEntries[mediaId]?.hasPrefix("embedded") == true {
                    entries[mediaId] = expectedEntries[mediaId]
                }
                if entries != expectedEntries { problems.append("table 6: \(entries.sorted { $0.key < $1.key }) ≠ \(expectedEntries.sorted { $0.key < $1.key })") }
                return problems
            }
            #expect(problems.isEmpty, "step \(step) (seed \(seed)): \(problems.prefix(4))")
            if !problems.isEmpty { break }
        }
        try await postbox.close()
    }
}

private extension Array {
    /// `count` elements chosen by `rng` (fewer when the array is shorter).
    func shuffledPrefix(_ count: Int, _ rng: inout SplitMix64) -> ArraySlice<Element> {
        var copy = self
        for i in copy.indices.reversed() where i > 0 { copy.swapAt(i, rng.below(i + 1)) }
        return copy.prefix(count)
    }
}
