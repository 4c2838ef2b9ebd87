import Foundation
import Testing
import BoxwoodStoreTesting
@testable import BoxwoodFullText
@_spi(EngineTables) @testable import BoxwoodStore

/// What is in the database directory besides the database (issue 22: hostile input never crashes, hangs or
/// silently loses data): a directory named `data.compact`, files behind symbolic links, modes an owner chose,
/// a full disk at close, table ids the engine keeps for itself.
@Suite struct DatabaseFileGuardTests {
    let table = ValueBoxTable(id: 7, keyType: .binary)

    private func makeDatabase(_ tag: String, entries: Int = 50) throws -> String {
        let db = temporaryDatabasePath(tag)
        let box = try ValueBox(path: db)
        try box.begin()
        for i in 0..<entries { try box.set(table, key: bkey(Array("key-\(i)".utf8)), value: mbuf("value-\(i)")) }
        try box.commit()
        try box.close()
        return db
    }

    private func permissions(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    // MARK: data.compact

    /// A directory where compaction writes its new file: a writer's open tried to delete it as a stray
    /// `data.compact` and failed (unlink: EISDIR), so no writer could open the database. Now opens ignore it and
    /// `compact` refuses with a typed error until it is gone.
    @Test func aDirectoryNamedDataCompactDoesNotBlockWriters() throws {
        let db = try makeDatabase("compact-dir")
        defer { removeItem(db) }
        let blocker = db + "/" + ValueBox.compactionFileName
        try FileManager.default.createDirectory(atPath: blocker + "/inside", withIntermediateDirectories: true)

        let box = try ValueBox(path: db)
        try box.begin()
        try box.set(table, key: bkey([1]), value: mbuf("after"))
        try box.commit()
        let error = expectError("compactionFileBlocked") { try box.compact() }
        #expect(error == .compactionFileBlocked(path: blocker))
        #expect(FileManager.default.fileExists(atPath: blocker + "/inside"), "compaction removed what it did not create")
        #expect(try box.bytes(table, bkey([1])) == Array("after".utf8))
        try box.close()

        removeItem(blocker)
        let again = try ValueBox(path: db)
        try again.compact()
        #expect(try again.count(table) == 51)
        #expect(try again.check().problems == [])
        try again.close()
    }

    /// A stray regular `data.compact` (a compaction killed before its rename) is still removed by the next
    /// writer's open, and a link there is unlinked, not followed.
    @Test func aStrayCompactionFileOrLinkIsRemovedAtOpen() throws {
        let db = try makeDatabase("compact-stray")
        let outside = temporaryDatabasePath("compact-stray-target")
        defer { removeItem(db); removeItem(outside) }
        let stray = db + "/" + ValueBox.compactionFileName
        try writeFile(stray, [1, 2, 3])
        try ValueBox(path: db).close()
        #expect(!FileManager.default.fileExists(atPath: stray))

        try writeFile(outside, [4, 5, 6])
        try FileManager.default.createSymbolicLink(atPath: stray, withDestinationPath: outside)
        let box = try ValueBox(path: db)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: stray)) == nil)
        #expect(try readFile(outside) == [4, 5, 6])
        try box.compact()
        #expect(try readFile(outside) == [4, 5, 6])
        try box.close()
    }

    // MARK: Symbolic links

    /// `data` behind a symbolic link: compaction replaced the link with a new file and left the old target —
    /// with a value that had been removed securely — in place. Now every open refuses a linked `data`, `wal` or
    /// `header`, and nothing is written through the link.
    @Test func linkedDatabaseFilesAreRefused() throws {
        for name in [ValueBox.dataFileName, ValueBox.walFileName, ValueBox.headerFileName] {
            let db = try makeDatabase("link-\(name)")
            let elsewhere = temporaryDatabasePath("link-\(name)-target")
            defer { removeItem(db); removeItem(elsewhere) }
            try FileManager.default.moveItem(atPath: db + "/" + name, toPath: elsewhere)
            try FileManager.default.createSymbolicLink(atPath: db + "/" + name, withDestinationPath: elsewhere)
            let before = try readFile(elsewhere)
            for readOnly in [false, true] {
                let error = expectError("symbolicLink") { _ = try ValueBox(path: db, options: ValueBoxOptions(readOnly: readOnly)) }
                #expect(error == .symbolicLink(path: db + "/" + name), "\(name), readOnly \(readOnly)")
            }
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: db + "/" + name) == elsewhere)
            #expect(try readFile(elsewhere) == before, "\(name) was written through the link")
        }
    }

    // MARK: Modes

    /// The compacted file replaced `data` with a file of Boxwood's own mode, whatever the old file's was (an
    /// owner who had shared it read-only with a group lost that). Now the new file keeps the old one's
    /// permission bits, and a new database's stays 0600.
    @Test func compactionKeepsThePermissionsOfData() throws {
        for mode in [0o600, 0o640, 0o400 | 0o200 | 0o004] {
            let db = try makeDatabase("mode-\(mode)")
            defer { removeItem(db) }
            let data = db + "/" + ValueBox.dataFileName
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: data)
            let box = try ValueBox(path: db)
            try box.begin()
            try box.remove(table, key: bkey(Array("key-3".utf8)), secure: true)
            try box.commit()
            try box.compact()
            let after = try permissions(data)
            #expect(after == mode, "mode \(String(mode, radix: 8)) became \(String(after, radix: 8))")
            try box.close()
            #expect(try permissions(data) == mode)
        }
        // A new database's files stay private.
        let fresh = try makeDatabase("mode-fresh")
        defer { removeItem(fresh) }
        let box = try ValueBox(path: fresh)
        try box.compact()
        try box.close()
        #expect(try permissions(fresh + "/" + ValueBox.dataFileName) == 0o600)
    }

    // MARK: A full disk at close

    /// ENOSPC while the close checkpoint writes pages is reported as that `.io(…, ENOSPC)` — no other error
    /// stands in for it — and every commit is still there when the database is opened again.
    @Test func aFullDiskAtTheCloseCheckpointIsReportedAsENOSPC() throws {
        for failingOperation in 1...6 {
            let disk = SimulatedDisk(seed: UInt64(failingOperation))
            let box = try ValueBox(path: "/db", options: ValueBoxOptions(durability: .normal), fileSystem: disk)
            try box.begin()
            for i in 0..<300 { try box.set(table, key: bkey(Array("key-\(i)".utf8)), value: mbuf(Array(repeating: UInt8(i & 0xFF), count: 200))) }
            try box.commit()
            disk.scheduleFailure(afterOperations: failingOperation, errno: ENOSPC)
            do {
                try box.close()
                Issue.record("operation \(failingOperation): close did not fail")
            } catch {
                guard case let .io(_, _, code) = error else {
                    Issue.record("operation \(failingOperation): close failed with \(error), expected ENOSPC")
                    continue
                }
                #expect(code == ENOSPC, "operation \(failingOperation): \(error)")
            }
            let reopened = try ValueBox(path: "/db", options: ValueBoxOptions(durability: .normal), fileSystem: disk)
            #expect(try reopened.count(table) == 300, "operation \(failingOperation)")
            #expect(try reopened.check().problems == [])
            try reopened.close()
        }
    }

    // MARK: Table ids

    /// A negative id belongs to the engine: a caller's descriptor with one may not be written; the engine's own
    /// descriptors (and `boxwood load --engine-tables`) may. Equality ignores how a descriptor was made.
    @Test func negativeTableIdsAreTheEngines() throws {
        for id in [Int32.min, -9, -1] {
            #expect(throws: BoxwoodError.reservedTableId(id: id)) { try ValueBoxTable(id: id, keyType: .binary).requireWritableId() }
            try ValueBoxTable(engineTableId: id, keyType: .binary).requireWritableId()
            #expect(ValueBoxTable(engineTableId: id, keyType: .binary) == ValueBoxTable(id: id, keyType: .binary))
            #expect(Set([ValueBoxTable(engineTableId: id, keyType: .int64), ValueBoxTable(id: id, keyType: .int64)]).count == 1)
        }
        for id in [0, 1, Int32.max] { try ValueBoxTable(id: id, keyType: .int64).requireWritableId() }
        #expect(BoxwoodError.reservedTableId(id: -3).description.contains("reserved"))
    }

    /// The engine's public mutations with a caller's negative table id. Needs the call to
    /// `ValueBoxTable.requireWritableId()` in the public mutations of `ValueBox+Writes.swift` and the full-text
    /// index's descriptors made with `init(engineTableId:keyType:)` (files outside this change; see the report).
    @Test
    func theEngineRefusesWritesToNegativeTables() throws {
        try withTemporaryBox("reserved-table") { box, _ in
            let reserved = ValueBoxTable(id: -1, keyType: .binary)
            try box.begin()
            expectError("reservedTableId") { try box.set(reserved, key: bkey([1]), value: mbuf([1])) }
            expectError("reservedTableId") { try box.remove(reserved, key: bkey([1])) }
            expectError("reservedTableId") { try box.removeAllFromTable(reserved) }
            expectError("reservedTableId") { try box.renameTable(table, to: reserved) }
            // The full-text index still writes its own tables, and a dump can still read them.
            try box.fullTextSet(ValueBoxFullTextTable(id: 0), collectionId: "c", itemId: "i", contents: "hello world", tags: "")
            try box.commit()
            #expect(try box.count(reserved) > 0)
        }
    }
}
