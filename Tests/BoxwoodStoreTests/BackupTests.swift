import BoxwoodStore
import BoxwoodStoreTesting
import Foundation
import Testing

/// `ValueBox.backup(to:)`: the copy holds exactly the snapshot (checked against a model of random commits, some
/// only in the WAL), keeps empty tables and the MasterClientId, never writes over an existing path, and a failure
/// at any file operation leaves no destination, no partial directory and a usable source.
@Suite("hot backup")
struct BackupTests {
    typealias Model = [Int32: [[UInt8]: [UInt8]]]

    static let tables = [ValueBoxTable(id: 1, keyType: .binary), ValueBoxTable(id: 2, keyType: .int64), ValueBoxTable(id: 3, keyType: .binary)]

    /// Random commits on the three tables (inline, compressible and overflow values; overwrites, removes and range
    /// removes), a checkpoint after some of them so the state is partly in pages and partly only in the WAL.
    static func populate(_ box: ValueBox, _ model: inout Model, commits: Int, _ rng: inout SplitMix64) throws {
        for commit in 0..<commits {
            try box.begin()
            for _ in 0..<Int(rng.next() % 40 + 1) {
                let table = tables[Int(rng.next() % UInt64(tables.count))]
                let key: ValueBoxKey = table.keyType == .int64
                    ? ValueBoxKey(int64: Int64(rng.next() % 500) - 250)
                    : ValueBoxKey(Array("k\(rng.next() % 400)".utf8))
                let keyBytes = key.withUnsafeBytes { Array($0) }
                switch rng.next() % 10 {
                case 0:
                    try box.remove(table, key: key)
                    model[table.id]?[keyBytes] = nil
                default:
                    let length = [0, 7, 300, 3_000, 20_000][Int(rng.next() % 5)]
                    let compressible = rng.next() % 2 == 0
                    let value = (0..<length).map { i in compressible ? UInt8(i % 7) : UInt8(truncatingIfNeeded: rng.next()) }
                    try box.set(table, key: key, value: MemoryBuffer(value))
                    model[table.id, default: [:]][keyBytes] = value
                }
            }
            try box.commit()
            if commit % 7 == 6 { try box.checkpoint() }
        }
    }

    /// A new empty directory under the temporary directory.
    static func makeDirectory() throws -> String {
        let path = temporaryDatabasePath("backup")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    static func contents(_ box: ValueBox) throws -> Model {
        var result: Model = [:]
        for table in try box.allTables() {
            var entries: [[UInt8]: [UInt8]] = [:]
            try box.scan(table) { key, value in
                entries[key.withUnsafeBytes { Array($0) }] = Array(UnsafeRawBufferPointer(start: value.memory, count: value.length))
                return true
            }
            result[table.id] = entries
        }
        return result
    }

    @Test("the copy equals the snapshot: a model of random commits, some only in the WAL, an empty table, the MasterClientId")
    func copyEqualsSnapshot() throws {
        let seed = ProcessInfo.processInfo.environment["BOXWOOD_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(Int32.max))
        print("BackupTests seed \(seed) (replay with BOXWOOD_SEED=\(seed))")
        var rng = SplitMix64(seed: seed)
        let directory = try Self.makeDirectory()
        defer { removeItem(directory) }
        let box = try ValueBox(path: directory + "/db")
        var model: Model = [:]
        try Self.populate(box, &model, commits: 60, &rng)
        // An empty table, and a MasterClientId.
        let empty = ValueBoxTable(id: 9, keyType: .int64)
        try box.begin()
        try box.set(empty, key: ValueBoxKey(int64: 1), value: MemoryBuffer([1]))
        try box.remove(empty, key: ValueBoxKey(int64: 1))
        try box.commit()
        model[9] = [:]
        try box.becomeMasterClient()
        let version = box.transactionStateVersion

        let result = try box.backup(to: directory + "/copy")
        #expect(result.version == version)
        #expect(result.entries == model.values.reduce(0) { $0 + $1.count })
        #expect(result.tables == 4)
        // The source goes on after the backup, and the copy does not follow it.
        try box.begin()
        try box.set(Self.tables[0], key: ValueBoxKey(Array("after".utf8)), value: MemoryBuffer([1]))
        try box.commit()

        let copy = try ValueBox(path: directory + "/copy", options: ValueBoxOptions(readOnly: true))
        defer { try? copy.close() }
        #expect(try copy.check().problems == [])
        let copied = try Self.contents(copy)
        #expect(copied.keys.sorted() == model.filter { !$0.value.isEmpty || $0.key == 9 }.keys.sorted())
        for (table, entries) in model {
            #expect(copied[table] ?? [:] == entries, "seed \(seed): table \(table) differs")
        }
        #expect(try copy.allTables().contains(empty))
        #expect(copy.masterClientId == box.masterClientId)
        #expect(try copy.statistics().pagesFree == 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(names == ["copy", "db"], "no partial directory is left")
        try box.close()
    }

    @Test("an existing destination is refused and left alone; inside a transaction or snapshot the call is refused")
    func refusals() throws {
        let directory = try Self.makeDirectory()
        defer { removeItem(directory) }
        let box = try ValueBox(path: directory + "/db")
        defer { try? box.close() }
        try box.begin()
        try box.set(Self.tables[0], key: ValueBoxKey(Array("a".utf8)), value: MemoryBuffer([1, 2, 3]))
        try box.commit()
        let file = directory + "/file"
        try Data("keep".utf8).write(to: URL(fileURLWithPath: file))
        let folder = directory + "/folder"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        for destination in [file, folder, folder + "/"] {
            #expect(throws: BoxwoodError.destinationExists(path: destination.hasSuffix("/") ? String(destination.dropLast()) : destination)) {
                try box.backup(to: destination)
            }
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "keep")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        try box.begin()
        #expect(throws: BoxwoodError.transactionAlreadyActive) { try box.backup(to: directory + "/copy") }
        box.abort()
        _ = try box.withSnapshot { () throws(BoxwoodError) in
            #expect(throws: BoxwoodError.transactionAlreadyActive) { try box.backup(to: directory + "/copy") }
        }
        #expect(FileManager.default.fileExists(atPath: directory + "/copy") == false)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(names == ["db", "file", "folder"])
    }

    @Test("a failure at any file operation of a backup leaves no destination, no partial files, and a usable source")
    func failureAtEveryOperation() throws {
        var rng = SplitMix64(seed: 77)
        var model: Model = [:]
        let base = SimulatedDisk(seed: 77)
        try base.createDirectory("/b")
        do {
            let box = try ValueBox(path: "/b/db", fileSystem: base)
            try Self.populate(box, &model, commits: 8, &rng)
            try box.close()
        }
        let expected = model.filter { !$0.value.isEmpty }
        var failuresSeen = 0
        var operation = 1
        while true {
            let disk = try base.afterProcessKill()
            let box = try ValueBox(path: "/b/db", fileSystem: disk)
            disk.scheduleFailure(afterOperations: operation, errno: ENOSPC)
            var failed = false
            do {
                try box.backup(to: "/b/copy")
            } catch {
                failed = true
                failuresSeen += 1
            }
            if failed {
                // Neither the destination nor the partial directory is left (one operation fails; the cleanup's succeed).
                #expect(disk.names(in: "/b") == ["db"], "operation \(operation)")
                // The source still reads and writes.
                #expect(try Self.contents(box) == expected, "operation \(operation)")
                try box.begin()
                try box.set(Self.tables[0], key: ValueBoxKey(Array("after-failure".utf8)), value: MemoryBuffer([9]))
                try box.commit()
            } else {
                // The backup needed fewer operations than `operation`: the failure is still pending.
                disk.cancelScheduledFailures()
                let copy = try ValueBox(path: "/b/copy", options: ValueBoxOptions(readOnly: true), fileSystem: disk)
                #expect(try copy.check().problems == [])
                #expect(try Self.contents(copy) == expected)
                try copy.close()
            }
            try box.close()
            if !failed { break }
            operation += 1
        }
        print("backup: a failure injected at each of its \(failuresSeen) file operations")
        #expect(failuresSeen > 10, "the backup performs file operations that can fail")
    }
}
