import Foundation
import Testing
@testable import Boxwood
@_spi(EngineTables) import BoxwoodStore
@testable import BoxwoodFullText

/// A Postbox whose message text index was written in an older layout of the engine's full-text index (before
/// posting blocks: no layout entry) rebuilds it when it opens, so search keeps working after the upgrade instead of
/// failing every message write with `fullTextLayoutMismatch`.
@Suite struct TextIndexRebuildTests {
    /// Layout 1: documents and no layout entry; layout 2: posting blocks, every record in token form.
    @Test(arguments: [UInt32(1), 2]) func anOlderTextIndexIsRebuiltAtOpen(layout: UInt32) async throws {
        let path = NSTemporaryDirectory() + "bw-text-rebuild-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let alice = PeerId(namespace: 0, id: PeerId.Id(10))
        @Sendable func message(_ id: Int32, _ text: String) -> StoreMessage {
            StoreMessage(id: .id(MessageId(peerId: alice, namespace: 0, id: id)), timestamp: id, flags: [.incoming], authorId: alice, text: text)
        }
        var postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        try await postbox.transaction { tx in
            _ = try tx.addMessages((1...1_500).map { message($0, $0 % 100 == 0 ? "zebra crossing \($0)" : "plain words \($0)") },
                                   location: .upperHistoryBlock)
        }
        try await postbox.close()

        // What an index of an earlier layout looks like to this version: its layout entry (none for layout 1).
        let box = try ValueBox(path: path)
        let tables = try FullTextTables(ValueBoxFullTextTable(id: MessageHistoryTextIndexTable.tableId))
        try box.begin()
        let ft = ValueBoxFullTextTable(id: MessageHistoryTextIndexTable.tableId)
        #expect(try box.fullTextNeedsRebuild(ft) == false)
        if layout == 1 {
            try box.remove(tables.meta, key: FullTextLayout.key)
        } else {
            let value = withUnsafeBytes(of: layout.bigEndian) { MemoryBuffer(copying: $0) }
            try box.set(tables.meta, key: FullTextLayout.key, value: value)
        }
        #expect(try box.fullTextNeedsRebuild(ft))
        try box.commit()
        try box.close()

        postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        let found = try await postbox.transaction { tx in try tx.searchMessages("zebra").map(\.id.id) }
        #expect(found == (1...15).reversed().map { Int32($0 * 100) }, "newest indexed first")
        // And the index takes writes again.
        try await postbox.transaction { tx in _ = try tx.addMessages([message(2_000, "zebra again")], location: .upperHistoryBlock) }
        #expect(try await postbox.transaction { tx in try tx.searchMessages("zebra").count } == 16)
        try await postbox.close()
    }
}
