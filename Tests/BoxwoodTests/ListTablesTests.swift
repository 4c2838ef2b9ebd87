import Testing
@testable import Boxwood
import BoxwoodStore

@Suite struct PreferencesTableTests {
    func key(_ value: Int32) -> ValueBoxKey {
        var key = ValueBoxKey(length: 4)
        key.setInt32(0, value: value)
        return key
    }

    @Test func writeBackOperationsAndEnumeration() throws {
        try withHarness("prefs") { h in
            let codable = try CodableEntry(TestChannelState(pts: 3, invalidatedPts: 4))
            try h.transaction { () throws in
                try h.preferences.set(key(2), entry: TestPreferences(autoDownload: false, limits: [1, 2]))
                try h.preferences.set(key(1), entry: codable)
                try h.preferences.set(key(3), entry: TestPreferences(autoDownload: true, limits: []))
                try h.preferences.set(key(3), entry: nil)
                #expect(try h.preferences.get(key(2)) as? TestPreferences == TestPreferences(autoDownload: false, limits: [1, 2]))
                #expect(try h.preferences.get(key(3)) == nil)
                #expect(try h.valueBox.count(PreferencesTable.descriptor) == 0)
                var seen: [ValueBoxKey] = []
                try h.preferences.enumerate { key, _ in seen.append(key); return true }
                #expect(seen == [key(1), key(2)])
                let ops = h.preferences.operations
                #expect(ops.map(\.key) == [key(2), key(1), key(3), key(3)])
                if case .remove = ops[3] {} else { Issue.record("expected a remove, got \(ops[3])") }
                #expect(h.preferences.updatedKeys == [key(1), key(2), key(3)])
            }
            h.resetChanges()
            #expect(h.preferences.operations.isEmpty)
            #expect(try h.raw(PreferencesTable.descriptor, key(2)) == encodeRoot(TestPreferences(autoDownload: false, limits: [1, 2])).makeArray())
            try h.abortedTransaction { () throws in
                try h.preferences.set(key(1), entry: nil)
                try h.preferences.set(key(9), entry: TestPreferences(autoDownload: true, limits: [9]))
            }
            try h.reopen()
            try h.transaction { () throws in
                #expect(try (h.preferences.get(key(1)) as? CodableEntry)?.get(TestChannelState.self) == TestChannelState(pts: 3, invalidatedPts: 4))
                #expect(try h.preferences.get(key(9)) == nil)
                try h.preferences.set(key(2), entry: nil)
                try h.preferences.set(ValueBoxKey("z"), entry: TestPreferences(autoDownload: true, limits: [7]))
                var seen: [ValueBoxKey] = []
                try h.preferences.enumerate { key, _ in seen.append(key); return true }
                #expect(seen == [key(1), ValueBoxKey("z")])
                #expect(throws: BoxwoodError.self) {
                    try h.preferences.set(ValueBoxKey(length: ValueBox.maxKeySize + 1), entry: TestPreferences(autoDownload: true, limits: []))
                }
            }
            // Another value box writes; the cache is refreshed by clearMemoryCache.
            h.clearsCachesOnExternalCommits = false
            let other = try TableHarness(path: h.path)
            defer { other.close() }
            try other.transaction { try other.preferences.set(key(1), entry: TestPreferences(autoDownload: false, limits: [])) }
            try h.transaction { () throws in
                #expect(try h.preferences.get(key(1)) is CodableEntry)
                h.preferences.clearMemoryCache()
                #expect(try h.preferences.get(key(1)) as? TestPreferences == TestPreferences(autoDownload: false, limits: []))
            }
        }
    }
}

@Suite struct OrderedItemListTableTests {
    func item(_ id: UInt8, _ fileId: Int64) -> OrderedItemListEntry {
        OrderedItemListEntry(id: MemoryBuffer([id, id &+ 1]), contents: TestStickerItem(fileId: fileId, emoji: ["e\(fileId)"]))
    }

    func contents(_ list: [OrderedItemListEntry]) -> [[UInt8]: Int64] {
        Dictionary(uniqueKeysWithValues: list.map { ($0.id.makeArray(), ($0.contents as! TestStickerItem).fileId) })
    }

    @Test func operationsAndLayout() throws {
        try withHarness("olist") { h in
            try h.transaction { () throws in
                try h.orderedLists.replaceItems(1, items: [item(1, 10), item(2, 20), item(1, 11), item(3, 30)])
                #expect(try h.orderedLists.getItemIds(1).map { $0.makeArray() } == [[1, 2], [2, 3], [3, 4]])
                try h.orderedLists.addItemOrMoveToFirstPosition(1, item: item(3, 31), removeTailIfCountExceeds: 2)
                #expect(try h.orderedLists.getItemIds(1).map { $0.makeArray() } == [[3, 4], [1, 2]])
                #expect(try h.orderedLists.updateItem(1, itemId: MemoryBuffer([1, 2]), contents: TestStickerItem(fileId: 12, emoji: [])))
                #expect(try !h.orderedLists.updateItem(1, itemId: MemoryBuffer([2, 3]), contents: TestStickerItem(fileId: 0, emoji: [])))
                try h.orderedLists.replaceItems(-1, items: [item(9, 90)])
                let ops = h.orderedLists.operations
                #expect(ops[1]?.count == 3 && ops[-1]?.count == 1)
                if case let .replace(items) = ops[1]?[0] { #expect(items.count == 3) } else { Issue.record("expected replace") }
                if case let .addOrMoveToFirstPosition(entry, limit) = ops[1]?[1] {
                    #expect(entry.id.makeArray() == [3, 4] && limit == 2)
                } else { Issue.record("expected addOrMoveToFirstPosition") }
                if case let .update(itemId, _) = ops[1]?[2] { #expect(itemId.makeArray() == [1, 2]) } else { Issue.record("expected update") }
            }
            h.resetChanges()
            #expect(h.orderedLists.operations.isEmpty)
            // Order table: collection BE ‖ position BE → id bytes; contents table: collection BE ‖ id → contents.
            #expect(try h.raw(OrderedItemListTable.descriptor, ValueBoxKey([0, 0, 0, 1, 0, 0, 0, 0])) == [3, 4])
            #expect(try h.raw(OrderedItemListTable.descriptor, ValueBoxKey([0, 0, 0, 1, 0, 0, 0, 1])) == [1, 2])
            #expect(try h.raw(OrderedItemListTable.contentsDescriptor, ValueBoxKey([0, 0, 0, 1, 1, 2]))
                    == encodeRoot(TestStickerItem(fileId: 12, emoji: [])).makeArray())
            #expect(try h.valueBox.count(OrderedItemListTable.descriptor) == 3)
            #expect(try h.valueBox.count(OrderedItemListTable.contentsDescriptor) == 3)
            try h.abortedTransaction { try h.orderedLists.replaceItems(1, items: []) }
            try h.reopen()
            try h.transaction { () throws in
                let items = try h.orderedLists.getItems(1)
                #expect(items.map { $0.id.makeArray() } == [[3, 4], [1, 2]])
                #expect(contents(items) == [[3, 4]: 31, [1, 2]: 12])
                #expect(try (h.orderedLists.getItem(-1, itemId: MemoryBuffer([9, 10]))?.contents as? TestStickerItem)?.fileId == 90)
                #expect(try h.orderedLists.removeItem(1, itemId: MemoryBuffer([3, 4])))
                #expect(try !h.orderedLists.removeItem(1, itemId: MemoryBuffer([3, 4])))
                #expect(try h.orderedLists.getItemIds(1).map { $0.makeArray() } == [[1, 2]])
            }
        }
    }

    /// Random replace / add-or-move / remove / update over three collections against an array model.
    @Test func randomizedAgainstModel() throws {
        var rng = SplitMix64(seed: testSeed("OrderedItemListTableTests.randomizedAgainstModel"))
        try withHarness("olist-model") { h in
            var model: [Int32: [(id: [UInt8], fileId: Int64)]] = [:]
            let collections: [Int32] = [0, 7, Int32.min]
            func randomItem() -> OrderedItemListEntry {
                let length = 1 + rng.below(3)
                let id = (0..<length).map { _ in UInt8(rng.below(3)) }
                return OrderedItemListEntry(id: MemoryBuffer(id), contents: TestStickerItem(fileId: rng.int64(), emoji: []))
            }
            for round in 0..<60 {
                try h.transaction { () throws in
                    for _ in 0..<(1 + rng.below(4)) {
                        let c = collections[rng.below(collections.count)]
                        var list = model[c] ?? []
                        switch rng.below(10) {
                        case 0:
                            let items = (0..<rng.below(6)).map { _ in randomItem() }
                            try h.orderedLists.replaceItems(c, items: items)
                            list = []
                            for item in items where !list.contains(where: { $0.id == item.id.makeArray() }) {
                                list.append((item.id.makeArray(), (item.contents as! TestStickerItem).fileId))
                            }
                        case 1, 2, 3, 4:
                            let item = randomItem()
                            let limit: Int? = rng.chance(0.5) ? rng.below(6) : nil
                            try h.orderedLists.addItemOrMoveToFirstPosition(c, item: item, removeTailIfCountExceeds: limit)
                            list.removeAll { $0.id == item.id.makeArray() }
                            list.insert((item.id.makeArray(), (item.contents as! TestStickerItem).fileId), at: 0)
                            if let limit, list.count > limit { list.removeLast(list.count - limit) }
                        case 5, 6:
                            let id = randomItem().id
                            let removed = try h.orderedLists.removeItem(c, itemId: id)
                            #expect(removed == list.contains { $0.id == id.makeArray() })
                            list.removeAll { $0.id == id.makeArray() }
                        default:
                            let id = randomItem().id
                            let fileId = rng.int64()
                            let updated = try h.orderedLists.updateItem(c, itemId: id, contents: TestStickerItem(fileId: fileId, emoji: []))
                            if let index = list.firstIndex(where: { $0.id == id.makeArray() }) {
                                #expect(updated)
                                list[index].fileId = fileId
                            } else {
                                #expect(!updated)
                            }
                        }
                        model[c] = list
                    }
                }
                h.resetChanges()
                if round % 15 == 14 { try h.reopen() }
                try h.transaction { () throws in
                    var total = 0
                    for c in collections {
                        let items = try h.orderedLists.getItems(c)
                        let expected = model[c] ?? []
                        total += expected.count
                        #expect(items.map { $0.id.makeArray() } == expected.map(\.id))
                        #expect(items.map { ($0.contents as! TestStickerItem).fileId } == expected.map(\.fileId))
                    }
                    // Nothing left behind: one order row and one contents row per item.
                    #expect(try h.valueBox.count(OrderedItemListTable.descriptor) == total)
                    #expect(try h.valueBox.count(OrderedItemListTable.contentsDescriptor) == total)
                }
            }
        }
    }
}
