import Foundation
import Testing
@testable import BoxwoodStore

/// A damaged newest meta page must never silently roll the database back to the previous checkpoint.
@Suite struct MetaDamageTests {
    private func makeDatabase() throws -> String {
        let dir = NSTemporaryDirectory() + "bw-meta-\(UUID().uuidString)"
        let box = try ValueBox(path: dir)
        let table = ValueBoxTable(id: 3, keyType: .int64)
        for round in 0..<3 {
            try box.begin()
            for i in 0..<100 { try box.set(table, key: ValueBoxKey(int64: Int64(round * 100 + i)), value: MemoryBuffer([UInt8(i)])) }
            try box.commit()
            try box.checkpoint()
        }
        try box.close()
        return dir
    }

    /// The slots of the newest and the older meta page (the one with the higher generation, offset 48).
    private func metaSlots(_ dir: String) throws -> (newest: UInt64, older: UInt64) {
        let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/data"))
        let gen0 = data[48..<56].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        let gen1 = data[4096 + 48..<4096 + 56].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        return gen1 > gen0 ? (1, 0) : (0, 1)
    }

    private func flipByte(_ path: String, at offset: UInt64) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        let byte = try handle.read(upToCount: 1)![0]
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data([byte ^ 0x5A]))
    }

    @Test func damagedNewestMetaIsAnErrorNotARollback() throws {
        let dir = try makeDatabase()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let newest = try metaSlots(dir).newest
        try flipByte(dir + "/data", at: newest * 4096 + 100)
        #expect(throws: BoxwoodError.checksumMismatch(file: dir + "/data", page: newest, offset: newest * 4096)) {
            _ = try ValueBox(path: dir)
        }
    }

    @Test func tornOlderMetaFallsBackCleanly() throws {
        let dir = try makeDatabase()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let older = try metaSlots(dir).older
        try flipByte(dir + "/data", at: older * 4096 + 100)
        let box = try ValueBox(path: dir)
        #expect(try box.count(ValueBoxTable(id: 3, keyType: .int64)) == 300)
        #expect(box.transactionStateVersion == 3)
        #expect(try box.check().problems == [])
        try box.close()
    }
}

/// An empty data file next to a WAL with commits is a lost data file, not a new database.
@Suite struct EmptyDataFileTests {
    @Test func emptyDataWithCommitsInTheWALIsAnError() throws {
        let dir = NSTemporaryDirectory() + "bw-emptydata-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let box = try ValueBox(path: dir)
        try box.begin()
        try box.set(ValueBoxTable(id: 1, keyType: .binary), key: ValueBoxKey([1]), value: MemoryBuffer([2]))
        try box.commit()
        // Copy the files while the box is open (a crash), then lose the data file's contents.
        let copy = dir + "-copy"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: dir + "/wal", toPath: copy + "/wal")
        _ = FileManager.default.createFile(atPath: copy + "/data", contents: Data())
        do {
            _ = try ValueBox(path: copy)
            Issue.record("opened a database whose data file was lost")
        } catch {
            guard case .corrupted = error else { Issue.record("unexpected error \(error)"); return }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy + "/data")).isEmpty, "nothing was written")
        try box.close()
    }
}
