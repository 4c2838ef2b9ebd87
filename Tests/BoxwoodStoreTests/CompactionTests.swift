import Foundation
import Testing
@testable import BoxwoodStore
import BoxwoodStoreTesting

/// A database's contents as a model: table → key → value.
typealias ContentModel = [ValueBoxTable: [[UInt8]: [UInt8]]]

/// Sets and removes random entries of three tables (inline, LZ4-compressible and overflow values), with
/// checkpoints in between, so that the data file ends up with scattered free pages.
func churn(_ box: ValueBox, _ model: inout ContentModel, tables: [ValueBoxTable], operations: Int, seed: UInt64, largestValue: Int = 75_000) throws {
    var rng = SplitMix64(seed: seed)
    let words = ["chat", "message", "hello", "boxwood", "peer", "history", "tag", "привет", "🎉"]
    var done = 0
    while done < operations {
        try box.begin()
        for _ in 0..<200 {
            let table = tables[rng.below(tables.count)]
            let id = Int64(rng.below(4000))
            let key = table.keyType == .int64 ? ikey(id) : bkey(Array("key-\(id)".utf8))
            if rng.chance(0.3) {
                try box.remove(table, key: key)
                model[table, default: [:]][key.byteArray] = nil
            } else {
                let value: [UInt8]
                switch rng.below(20) {
                case 0: value = randomBytes(5000 + rng.below(max(1, largestValue - 5000)), &rng)                      // overflow chain
                case 1, 2: value = Array((0..<(50 + rng.below(400))).map { _ in words[rng.below(words.count)] }.joined(separator: " ").utf8) // LZ4
                default: value = randomBytes(rng.below(300), &rng)
                }
                try box.set(table, key: key, value: mbuf(value))
                model[table, default: [:]][key.byteArray] = value
            }
            done += 1
        }
        try box.commit()
        if rng.chance(0.2) { try box.checkpoint() }
    }
}

/// Expects `box` to hold exactly `model`.
func expectContents(_ box: ValueBox, _ model: ContentModel, _ context: String = "", sourceLocation: SourceLocation = #_sourceLocation) throws {
    for (table, entries) in model {
        let stored = try box.allEntries(table)
        #expect(stored.count == entries.count, "\(context) table \(table.id)", sourceLocation: sourceLocation)
        for (key, value) in stored where entries[key] != value {
            Issue.record("\(context) table \(table.id): key \(key) differs", sourceLocation: sourceLocation)
            return
        }
    }
}

@Suite struct CompactionTests {
    let tables = [ValueBoxTable(id: 1, keyType: .binary), ValueBoxTable(id: 2, keyType: .int64), ValueBoxTable(id: 5, keyType: .binary)]

    func fileSize(_ path: String) throws -> UInt64 {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.uint64Value ?? 0
    }

    @Test func compactionKeepsEveryEntryAndReturnsTheSpace() throws {
        let seed = crashTestSeed()
        print("CompactionTests seed: \(seed) (replay with BOXWOOD_SEED=\(seed))")
        let db = temporaryDatabasePath("compact")
        defer { removeItem(db) }
        let box = try ValueBox(path: db)
        var model: ContentModel = [:]
        try churn(box, &model, tables: tables, operations: 10_000, seed: seed)
        let empty = ValueBoxTable(id: 99, keyType: .int64)
        try box.begin()
        try box.set(empty, key: ikey(1), value: mbuf("x"))
        try box.remove(empty, key: ikey(1))
        try box.commit()
        model[empty] = [:]
        try box.checkpoint()
        let version = box.transactionStateVersion
        let before = try fileSize(db + "/data")
        var reports: [CompactionProgress] = []
        let result = try box.compact { reports.append($0) }
        let after = try fileSize(db + "/data")
        let live = try box.statistics()
        let liveBytes = try box.tableStatistics().reduce(0) { $0 + $1.bytes }
        print("compaction (seed \(seed)): \(before) -> \(after) bytes; \(result.entries) entries, \(liveBytes) bytes of keys+values")
        #expect(result.bytesBefore == before && result.bytesAfter == after)
        #expect(after < before)
        #expect(live.pagesFree == 0)
        #expect(reports.last?.entriesCopied == result.entries && reports.last?.entriesTotal == result.entries)
        #expect(result.entries == model.values.reduce(0) { $0 + $1.count })
        #expect(box.transactionStateVersion == version)
        #expect(try box.allTables().contains(empty))
        #expect(try box.check().problems == [])
        try expectContents(box, model, "after compaction")
        #expect(!FileManager.default.fileExists(atPath: db + "/" + ValueBox.compactionFileName))

        // The compacted database keeps working: writes, checkpoints, reopen.
        try churn(box, &model, tables: tables, operations: 2_000, seed: seed &+ 1)
        try box.checkpoint()
        try expectContents(box, model, "after writes on the compacted file")
        try box.close()
        let reopened = try ValueBox(path: db)
        try expectContents(reopened, model, "reopened")
        #expect(try reopened.check().problems == [])
        try reopened.close()
    }

    @Test func aReaderKeepsItsSnapshotAndThenFollowsTheNewFile() throws {
        let seed = crashTestSeed()
        let db = temporaryDatabasePath("compact-reader")
        defer { removeItem(db) }
        let compactor = try ValueBox(path: db)
        var model: ContentModel = [:]
        try churn(compactor, &model, tables: tables, operations: 5_000, seed: seed)
        let reader = try ValueBox(path: db)
        try reader.beginRead()
        try expectContents(reader, model, "snapshot before")
        let snapshot = model
        try compactor.compact()
        // More commits after the swap, on the new file.
        try churn(compactor, &model, tables: tables, operations: 1_000, seed: seed &+ 7)
        try expectContents(reader, snapshot, "pinned snapshot after the swap")
        reader.endRead()
        try expectContents(reader, model, "reader after the swap")
        // The reader writes to the new file; the compactor sees it.
        try reader.begin()
        try reader.set(tables[0], key: bkey(Array("from-reader".utf8)), value: mbuf("hello"))
        try reader.commit()
        model[tables[0], default: [:]][Array("from-reader".utf8)] = Array("hello".utf8)
        try reader.checkpoint()
        try expectContents(compactor, model, "compactor after the reader's commit")
        try reader.close()
        try compactor.close()
        let reopened = try ValueBox(path: db)
        try expectContents(reopened, model, "reopened")
        #expect(try reopened.check().problems == [])
        try reopened.close()
    }

    @Test func compactionIsRefusedWhereItCannotRun() throws {
        let db = temporaryDatabasePath("compact-refused")
        defer { removeItem(db) }
        let box = try ValueBox(path: db)
        try box.compact()  // an empty database compacts to its meta pages
        #expect(try fileSize(db + "/data") == 2 * UInt64(PageLayout.pageSize))
        try box.begin()
        try box.set(tables[0], key: bkey([1]), value: mbuf("v"))
        #expect(throws: BoxwoodError.transactionAlreadyActive) { try box.compact() }
        try box.commit()
        try box.close()
        let readOnly = try ValueBox(path: db, options: ValueBoxOptions(readOnly: true))
        #expect(throws: BoxwoodError.readOnly(path: db)) { try readOnly.compact() }
        try readOnly.close()
    }

    /// A power cut at every mutating operation of a compaction, each with several fates for unsynced writes
    /// and directory changes: the database reopens with exactly its contents (old or new file), checks clean,
    /// and no unfinished compaction file survives the next open.
    @Test func aPowerCutAnywhereInACompactionLeavesTheOldOrTheNewFile() throws {
        let seed = crashTestSeed()
        print("CompactionTests power cuts, seed: \(seed) (replay with BOXWOOD_SEED=\(seed))")
        let original = SimulatedDisk(seed: seed)
        var model: ContentModel = [:]
        do {
            let box = try ValueBox(path: "/db", fileSystem: original)
            try churn(box, &model, tables: tables, operations: 1_500, seed: seed, largestValue: 12_000)
            try box.close()
        }
        var point = 1
        var completed = false
        var newFileSeen = 0, oldFileSeen = 0
        while !completed {
            for fate in 0..<3 {
                let disk = try original.afterProcessKill()
                let box = try ValueBox(path: "/db", fileSystem: disk)
                let generation = box.meta.generation
                disk.schedulePowerCut(afterOperations: point)
                do {
                    try box.compact()
                    completed = true   // every cut point was tried; the power now goes off after it returned
                } catch {
                    #expect(disk.isPoweredOff, "cut point \(point): \(error)")
                }
                let context = "seed \(seed), cut point \(point), fate \(fate)\(completed ? " (after compact returned)" : "")"
                let rebooted = try disk.reboot()
                let reopened = try ValueBox(path: "/db", fileSystem: rebooted)
                let onNewFile = reopened.meta.generation > generation && reopened.pager.freeSpace.free.isEmpty
                if onNewFile { newFileSeen += 1 } else { oldFileSeen += 1 }
                if completed { #expect(onNewFile, "\(context): a completed compaction is durable") }
                try expectContents(reopened, model, context)
                #expect(try reopened.check().problems == [], "\(context)")
                #expect(rebooted.kind(of: "/db/" + ValueBox.compactionFileName) == nil, "\(context)")
                try reopened.close()
                if completed { break }
            }
            point += 1
        }
        print("compaction power cuts: \(point - 1) cut points; reopened on the old file \(oldFileSeen)×, on the new file \(newFileSeen)×")
        #expect(point > 5)
        #expect(newFileSeen > 0 && oldFileSeen > 0)
    }
}
