import Testing
@testable import Boxwood
import BoxwoodStore

/// A merged operation in comparable form: (peer, tag, local index, merged index, payload) for appends and
/// contents updates, (tag, merged indices) for removes.
enum MergedOp: Equatable, CustomStringConvertible {
    case append(PeerId, UInt8, Int32, Int32?, Int64)
    case remove(UInt8, Set<Int32>)
    case update(PeerId, UInt8, Int32, Int32?, Int64)

    init(_ operation: PeerMergedOperationLogOperation) {
        switch operation {
        case let .append(e): self = .append(e.peerId, e.tag.rawValue, e.tagLocalIndex, e.mergedIndex, (e.contents as! TestOperation).payload)
        case let .remove(tag, indices): self = .remove(tag.rawValue, indices)
        case let .updateContents(e): self = .update(e.peerId, e.tag.rawValue, e.tagLocalIndex, e.mergedIndex, (e.contents as! TestOperation).payload)
        }
    }

    var description: String {
        switch self {
        case let .append(p, t, i, m, x): return "append(\(p) t\(t) #\(i) m\(m.map(String.init) ?? "-") \(x))"
        case let .remove(t, m): return "remove(t\(t) \(m.sorted()))"
        case let .update(p, t, i, m, x): return "update(\(p) t\(t) #\(i) m\(m.map(String.init) ?? "-") \(x))"
        }
    }
}

/// An entry in comparable form.
struct EntryRecord: Equatable, CustomStringConvertible {
    let peerId: PeerId
    let tag: UInt8
    let index: Int32
    let mergedIndex: Int32?
    let payload: Int64

    init(peerId: PeerId, tag: UInt8, index: Int32, mergedIndex: Int32?, payload: Int64) {
        self.peerId = peerId
        self.tag = tag
        self.index = index
        self.mergedIndex = mergedIndex
        self.payload = payload
    }

    init(_ e: PeerOperationLogEntry) {
        self.init(peerId: e.peerId, tag: e.tag.rawValue, index: e.tagLocalIndex, mergedIndex: e.mergedIndex,
                  payload: (e.contents as! TestOperation).payload)
    }

    var description: String { "\(peerId) t\(tag) #\(index) m\(mergedIndex.map(String.init) ?? "-") \(payload)" }
}

@Suite struct PeerOperationLogTests {
    let p1 = peer(0, 1)
    let p2 = peer(2, 1 << 40)
    let t1 = PeerOperationLogTag(1)
    let t2 = PeerOperationLogTag(200)

    func op(_ payload: Int64) -> TestOperation { TestOperation(payload: payload, note: "n\(payload)") }

    @Test func indicesMergedQueueAndRecordedOperations() throws {
        try withHarness("oplog") { h in
            try h.transaction { () throws in
                let a = try h.opLog.addEntry(p1, tag: t1, tagLocalIndex: .automatic, tagMergedIndex: .automatic, contents: op(1))
                let b = try h.opLog.addEntry(p1, tag: t1, tagLocalIndex: .automatic, tagMergedIndex: .none, contents: op(2))
                let c = try h.opLog.addEntry(p2, tag: t1, tagLocalIndex: .automatic, tagMergedIndex: .automatic, contents: op(3))
                let d = try h.opLog.addEntry(p1, tag: t2, tagLocalIndex: .manual(10), tagMergedIndex: .automatic, contents: op(4))
                #expect((a.tagLocalIndex, a.mergedIndex) == (1, 1))
                #expect((b.tagLocalIndex, b.mergedIndex) == (2, nil))
                #expect((c.tagLocalIndex, c.mergedIndex) == (1, 2))
                #expect((d.tagLocalIndex, d.mergedIndex) == (10, 1))
                #expect(try h.opLog.nextTagLocalIndex(p1, tag: t2) == 11)
                #expect(h.opLog.mergedOperations.map(MergedOp.init) == [
                    .append(p1, 1, 1, 1, 1), .append(p2, 1, 1, 2, 3), .append(p1, 200, 10, 1, 4),
                ])
            }
            h.resetChanges()
            #expect(h.opLog.mergedOperations.isEmpty)
            // Value layout: hasMerged, merged index LE, contents length LE, root-encoded contents.
            var key = ValueBoxKey(length: 13)
            key.setInt64(0, value: p1.toInt64())
            key.setUInt8(8, value: 1)
            key.setInt32(9, value: 1)
            let contents = try encodeRoot(op(1)).makeArray()
            #expect(try h.raw(PeerOperationLogTable.descriptor, key) == [1, 1, 0, 0, 0] + withUnsafeBytes(of: Int32(contents.count).littleEndian, Array.init) + contents)
            #expect(try h.raw(PeerMergedOperationLogIndexTable.descriptor, ValueBoxKey([1, 0, 0, 0, 2]))
                    == withUnsafeBytes(of: p2.toInt64().littleEndian, Array.init) + [1, 0, 0, 0])
            try h.reopen()
            try h.transaction { () throws in
                #expect(try h.opLog.getMergedEntries(t1, fromIndex: 0, limit: 10).map(EntryRecord.init) == [
                    EntryRecord(peerId: p1, tag: 1, index: 1, mergedIndex: 1, payload: 1),
                    EntryRecord(peerId: p2, tag: 1, index: 1, mergedIndex: 2, payload: 3),
                ])
                #expect(try h.opLog.getMergedEntries(t1, fromIndex: 2, limit: 10).map(\.peerId) == [p2])
                #expect(try h.opLog.getMergedEntries(t1, fromIndex: 0, limit: 1).map(\.peerId) == [p1])
                #expect(try h.opLog.getMergedEntries(t2, fromIndex: 0, limit: 0).map(\.tagLocalIndex) == [10])
                // Manual index below the counter replaces nothing and keeps the counter.
                try h.opLog.addEntry(p1, tag: t1, tagLocalIndex: .manual(0), tagMergedIndex: .none, contents: op(5))
                #expect(try h.opLog.nextTagLocalIndex(p1, tag: t1) == 3)
                // A manual index on an existing merged entry replaces it and takes it out of the merged queue.
                try h.opLog.addEntry(p1, tag: t1, tagLocalIndex: .manual(1), tagMergedIndex: .automatic, contents: op(6))
                #expect(try h.opLog.entries(p1, tag: t1).map(EntryRecord.init) == [
                    EntryRecord(peerId: p1, tag: 1, index: 0, mergedIndex: nil, payload: 5),
                    EntryRecord(peerId: p1, tag: 1, index: 1, mergedIndex: 3, payload: 6),
                    EntryRecord(peerId: p1, tag: 1, index: 2, mergedIndex: nil, payload: 2),
                ])
                #expect(try h.opLog.updateEntryContents(p2, tag: t1, tagLocalIndex: 1, contents: op(7)))
                #expect(try h.opLog.updateEntryContents(p1, tag: t1, tagLocalIndex: 2, contents: op(8)))
                #expect(try !h.opLog.updateEntryContents(p1, tag: t1, tagLocalIndex: 99, contents: op(9)))
                // Requeue p2's entry at the end of the merged queue, drop p1#1 from it.
                try h.opLog.updateEntry(p2, tag: t1, tagLocalIndex: 1) { _ in PeerOperationLogEntryUpdate(mergedIndex: .newAutomatic, contents: .none) }
                try h.opLog.updateEntry(p1, tag: t1, tagLocalIndex: 1) { _ in PeerOperationLogEntryUpdate(mergedIndex: .remove, contents: .none) }
                #expect(h.opLog.mergedOperations.map(MergedOp.init) == [
                    .remove(1, [1]), .append(p1, 1, 1, 3, 6), .update(p2, 1, 1, 2, 7),
                    .remove(1, [2]), .append(p2, 1, 1, 4, 7), .remove(1, [3]),
                ])
                #expect(try h.opLog.getMergedEntries(t1, fromIndex: 0, limit: 0).map(EntryRecord.init) == [
                    EntryRecord(peerId: p2, tag: 1, index: 1, mergedIndex: 4, payload: 7),
                ])
            }
            h.resetChanges()
            try h.transaction { () throws in
                #expect(try h.opLog.removeEntry(p1, tag: t2, tagLocalIndex: 10))
                #expect(try !h.opLog.removeEntry(p1, tag: t2, tagLocalIndex: 10))
                try h.opLog.addEntry(p1, tag: t1, tagLocalIndex: .automatic, tagMergedIndex: .automatic, contents: op(10))
                try h.opLog.removeAllEntries(p1, tag: t1)
                try h.opLog.removeAllEntries(p1, tag: t1)
                #expect(try h.opLog.entries(p1, tag: t1).isEmpty)
                #expect(try h.opLog.entries(p2, tag: t1).count == 1)
                #expect(h.opLog.mergedOperations.map(MergedOp.init) == [
                    .remove(200, [1]), .append(p1, 1, 3, 5, 10), .remove(1, [5]),
                ])
                // Indices are not reused after removals.
                #expect(try h.opLog.addEntry(p1, tag: t1, tagLocalIndex: .automatic, tagMergedIndex: .automatic, contents: op(11)).tagLocalIndex == 4)
            }
        }
    }

    @Test func abortedTransactionLeavesNothing() throws {
        try withHarness("oplog-abort") { h in
            try h.transaction { () throws in
                try h.opLog.addEntry(p1, tag: t1, tagLocalIndex: .automatic, tagMergedIndex: .automatic, contents: op(1))
            }
            try h.abortedTransaction { () throws in
                try h.opLog.addEntry(p1, tag: t1, tagLocalIndex: .automatic, tagMergedIndex: .automatic, contents: op(2))
                try h.opLog.removeEntry(p1, tag: t1, tagLocalIndex: 1)
            }
            #expect(h.opLog.mergedOperations.isEmpty)
            try h.transaction { () throws in
                #expect(try h.opLog.entries(p1, tag: t1).map(EntryRecord.init) == [EntryRecord(peerId: p1, tag: 1, index: 1, mergedIndex: 1, payload: 1)])
                #expect(try h.opLog.nextTagLocalIndex(p1, tag: t1) == 2)
                #expect(try h.opLog.addEntry(p2, tag: t1, tagLocalIndex: .automatic, tagMergedIndex: .automatic, contents: op(3)).mergedIndex == 2)
            }
        }
    }

    @Test func damagedValuesThrow() throws {
        try withHarness("oplog-bad") { h in
            try h.transaction { () throws in
                try h.opLog.addEntry(p1, tag: t1, tagLocalIndex: .automatic, tagMergedIndex: .automatic, contents: op(1))
                var key = ValueBoxKey(length: 13)
                key.setInt64(0, value: p1.toInt64())
                key.setUInt8(8, value: 1)
                key.setInt32(9, value: 2)
                try h.valueBox.set(PeerOperationLogTable.descriptor, key: key, value: MemoryBuffer([1, 0, 0]))
                key.setInt32(9, value: 3)
                try h.valueBox.set(PeerOperationLogTable.descriptor, key: key, value: MemoryBuffer([7, 0, 0, 0, 0]))
                key.setInt32(9, value: 4)
                try h.valueBox.set(PeerOperationLogTable.descriptor, key: key, value: MemoryBuffer([0, 100, 0, 0, 0, 1]))
                // A merged position whose entry is missing.
                try h.mergedIndex.add(t2, mergedIndex: 1, peerId: p2, tagLocalIndex: 1)
            }
            try h.transaction { () throws in
                #expect(throws: PostboxDecodingError.self) { try h.opLog.getEntry(p1, tag: t1, tagLocalIndex: 2) }
                #expect(throws: PostboxDecodingError.self) { try h.opLog.getEntry(p1, tag: t1, tagLocalIndex: 3) }
                #expect(throws: PostboxDecodingError.self) { try h.opLog.getEntry(p1, tag: t1, tagLocalIndex: 4) }
                #expect(throws: PostboxDecodingError.self) { try h.opLog.entries(p1, tag: t1) }
                #expect(throws: PeerOperationLogError.danglingMergedIndex(tag: t2, mergedIndex: 1)) {
                    try h.opLog.getMergedEntries(t2, fromIndex: 0, limit: 0)
                }
            }
        }
    }

    /// Random adds (automatic and manual indices, with and without the merged queue), removes, contents updates,
    /// merged-queue moves and removeAll over several peers and tags, against a dictionary model: per-peer order,
    /// the merged queues, the recorded merged operations and the counters, across reopens and aborted
    /// transactions.
    @Test func randomizedAgainstModel() throws {
        let seed = testSeed("PeerOperationLogTests.randomizedAgainstModel")
        var rng = SplitMix64(seed: seed)
        let peers = [peer(0, 1), peer(0, 2), peer(2, 1 << 33), peer(3, -5)]
        let tags: [UInt8] = [0, 1, 255]

        struct Key: Hashable { let peerId: PeerId; let tag: UInt8 }
        struct ModelEntry { var mergedIndex: Int32?; var payload: Int64 }
        var entries: [Key: [Int32: ModelEntry]] = [:]
        var nextLocal: [Key: Int32] = [:]
        var nextMerged: [UInt8: Int32] = [:]
        var payloadCounter: Int64 = 0

        try withHarness("oplog-model") { h in
            for round in 0..<300 {
                let abort = rng.chance(0.1)
                let savedModel = (entries, nextLocal, nextMerged)
                var expectedOps: [MergedOp] = []
                let body = {
                    for _ in 0..<(1 + rng.below(6)) {
                        let key = Key(peerId: peers[rng.below(peers.count)], tag: tags[rng.below(tags.count)])
                        let tag = PeerOperationLogTag(key.tag)
                        var list = entries[key] ?? [:]
                        let existing = Array(list.keys)
                        switch rng.below(20) {
                        case 0..<9:
                            payloadCounter += 1
                            let payload = payloadCounter
                            let merged = rng.chance(0.6)
                            let local: PeerOperationLogIndex
                            let index: Int32
                            let next = nextLocal[key] ?? 1
                            if rng.chance(0.3) {
                                switch rng.below(4) {
                                case 0: index = Int32(rng.below(8)) - 4
                                case 1 where !existing.isEmpty: index = existing[rng.below(existing.count)]
                                default: index = next + Int32(rng.below(4))
                                }
                                local = .manual(index)
                                if index >= next { nextLocal[key] = index + 1 }
                            } else {
                                index = next
                                local = .automatic
                                nextLocal[key] = next + 1
                            }
                            if let old = list[index]?.mergedIndex { expectedOps.append(.remove(key.tag, [old])) }
                            var mergedIndex: Int32?
                            if merged {
                                mergedIndex = nextMerged[key.tag] ?? 1
                                nextMerged[key.tag] = mergedIndex! + 1
                                expectedOps.append(.append(key.peerId, key.tag, index, mergedIndex, payload))
                            }
                            list[index] = ModelEntry(mergedIndex: mergedIndex, payload: payload)
                            let entry = try h.opLog.addEntry(key.peerId, tag: tag, tagLocalIndex: local,
                                                             tagMergedIndex: merged ? .automatic : .none, contents: TestOperation(payload: payload))
                            #expect(entry.tagLocalIndex == index && entry.mergedIndex == mergedIndex)
                        case 9..<13:
                            let index = existing.isEmpty || rng.chance(0.2) ? Int32(rng.below(10)) : existing[rng.below(existing.count)]
                            let removed = try h.opLog.removeEntry(key.peerId, tag: tag, tagLocalIndex: index)
                            #expect(removed == (list[index] != nil))
                            if let old = list.removeValue(forKey: index), let m = old.mergedIndex { expectedOps.append(.remove(key.tag, [m])) }
                        case 13..<16:
                            let index = existing.isEmpty || rng.chance(0.2) ? Int32(rng.below(10)) : existing[rng.below(existing.count)]
                            payloadCounter += 1
                            let payload = payloadCounter
                            let updated = try h.opLog.updateEntryContents(key.peerId, tag: tag, tagLocalIndex: index, contents: TestOperation(payload: payload))
                            #expect(updated == (list[index] != nil))
                            if var entry = list[index] {
                                entry.payload = payload
                                list[index] = entry
                                if entry.mergedIndex != nil { expectedOps.append(.update(key.peerId, key.tag, index, entry.mergedIndex, payload)) }
                            }
                        case 16..<18:
                            guard !existing.isEmpty else { break }
                            let index = existing[rng.below(existing.count)]
                            let requeue = rng.chance(0.5)
                            try h.opLog.updateEntry(key.peerId, tag: tag, tagLocalIndex: index) { current in
                                #expect(current.map(EntryRecord.init)?.payload == list[index]?.payload)
                                return PeerOperationLogEntryUpdate(mergedIndex: requeue ? .newAutomatic : .remove, contents: .none)
                            }
                            var entry = list[index]!
                            if let old = entry.mergedIndex { expectedOps.append(.remove(key.tag, [old])) }
                            if requeue {
                                let m = nextMerged[key.tag] ?? 1
                                nextMerged[key.tag] = m + 1
                                entry.mergedIndex = m
                                expectedOps.append(.append(key.peerId, key.tag, index, m, entry.payload))
                            } else {
                                entry.mergedIndex = nil
                            }
                            list[index] = entry
                        default:
                            try h.opLog.removeAllEntries(key.peerId, tag: tag)
                            let merged = Set(list.values.compactMap(\.mergedIndex))
                            if !merged.isEmpty { expectedOps.append(.remove(key.tag, merged)) }
                            list = [:]
                        }
                        entries[key] = list
                    }
                }
                if abort {
                    try h.abortedTransaction { try body() }
                    (entries, nextLocal, nextMerged) = savedModel
                } else {
                    try h.transaction { () throws in
                        try body()
                        let recorded = h.opLog.mergedOperations.map(MergedOp.init)
                        #expect(recorded == expectedOps, "seed \(seed) round \(round)")
                    }
                    h.resetChanges()
                }
                if round % 25 == 24 { try h.reopen() }
                if round % 5 == 4 || round == 299 {
                    try h.transaction { try check(h) }
                }
            }
        }

        func check(_ h: TableHarness) throws {
            var mergedByTag: [UInt8: [EntryRecord]] = [:]
            var mergedCount = 0
            for peerId in peers {
                for tag in tags {
                    let key = Key(peerId: peerId, tag: tag)
                    let list = entries[key] ?? [:]
                    // Key order: big-endian with no sign flip, so negative indices come last.
                    let expected = list.keys.sorted { UInt32(bitPattern: $0) < UInt32(bitPattern: $1) }.map {
                        EntryRecord(peerId: peerId, tag: tag, index: $0, mergedIndex: list[$0]!.mergedIndex, payload: list[$0]!.payload)
                    }
                    let actual = try h.opLog.entries(peerId, tag: PeerOperationLogTag(tag)).map(EntryRecord.init)
                    #expect(actual == expected, "seed \(seed): \(peerId) tag \(tag)")
                    var enumerated: [EntryRecord] = []
                    try h.opLog.enumerateEntries(peerId, tag: PeerOperationLogTag(tag)) { enumerated.append(EntryRecord($0)); return enumerated.count < 2 }
                    #expect(enumerated == Array(expected.prefix(2)))
                    #expect(try h.opLog.nextTagLocalIndex(peerId, tag: PeerOperationLogTag(tag)) == nextLocal[key] ?? 1)
                    for record in expected where record.mergedIndex != nil {
                        mergedByTag[tag, default: []].append(record)
                        mergedCount += 1
                    }
                }
            }
            for tag in tags {
                let expected = (mergedByTag[tag] ?? []).sorted { $0.mergedIndex! < $1.mergedIndex! }
                let all = try h.opLog.getMergedEntries(PeerOperationLogTag(tag), fromIndex: 0, limit: 0).map(EntryRecord.init)
                #expect(all == expected, "seed \(seed): merged queue of tag \(tag)")
                let from = Int32(rng.below(Int(nextMerged[tag] ?? 1) + 1))
                let limit = 1 + rng.below(4)
                let page = try h.opLog.getMergedEntries(PeerOperationLogTag(tag), fromIndex: from, limit: limit).map(EntryRecord.init)
                #expect(page == Array(expected.filter { $0.mergedIndex! >= from }.prefix(limit)), "seed \(seed): tag \(tag) from \(from) limit \(limit)")
                #expect(try h.opLogMetadata.nextMergedIndex(PeerOperationLogTag(tag)) == nextMerged[tag] ?? 1)
            }
            #expect(try h.valueBox.count(PeerMergedOperationLogIndexTable.descriptor) == mergedCount)
        }
    }
}
