import Foundation
import Testing
@testable import BoxwoodStore

/// Keys longer than the limit can only come from forged or damaged files: every WAL record and every page is
/// checked against ``ValueBox/maxKeySize`` before a key is copied anywhere (issue 22: a WAL record with valid
/// checksums and a 65,535-byte key overflowed the heap on every open; a 2,000-byte key was replayed, checkpointed
/// into `data`, and every later dump aborted).
@Suite("hostile keys")
struct HostileKeyTests {
    static let table = ValueBoxTable(id: 1, keyType: .binary)

    @Test("a WAL record with valid checksums and an oversize key is a typed corruption error at open", arguments: [1_281, 2_000, 65_535])
    func oversizeKeyInTheLog(length: Int) throws {
        let path = temporaryDatabasePath("wal-key")
        let crashed = temporaryDatabasePath("wal-key-crashed")
        defer { removeItem(path); removeItem(crashed) }
        let box = try ValueBox(path: path)
        try box.begin()
        try box.set(Self.table, key: bkey([1]), value: mbuf([1]))
        // Forge the record: the logging a write does, with a key no write would accept.
        let key = [UInt8](repeating: 0x41, count: length)
        let value: [UInt8] = [2]
        key.withUnsafeBytes { k in
            value.withUnsafeBytes { v in
                box.record.append(.set(table: 1, keyType: .binary, key: k, value: v))
            }
        }
        try box.commit()
        // The process dies before any checkpoint: the record is only in the log.
        try copyDatabaseFiles(from: path, to: crashed)
        try box.close()
        #expect {
            _ = try ValueBox(path: crashed)
        } throws: { error in
            guard case let .corrupted(_, _, reason)? = error as? BoxwoodError else { return false }
            return reason.contains("key of \(length) bytes")
        }
    }

    @Test("a page holding an oversize key is reported by check and refused by reads, never copied")
    func oversizeKeyInAPage() throws {
        let path = temporaryDatabasePath("page-key")
        defer { removeItem(path) }
        let box = try ValueBox(path: path)
        try box.begin()
        try box.set(Self.table, key: bkey([1]), value: mbuf([1]))
        // Forge the page: the internal insert below the API's key check (it logs nothing).
        let key = [UInt8](repeating: 0x42, count: 2_000)
        let value: [UInt8] = [3]
        let keyBytes = UnsafeMutableRawBufferPointer.allocate(byteCount: key.count, alignment: 8)
        defer { keyBytes.deallocate() }
        keyBytes.copyBytes(from: key)
        let valueBytes = UnsafeMutableRawBufferPointer.allocate(byteCount: value.count, alignment: 8)
        defer { valueBytes.deallocate() }
        valueBytes.copyBytes(from: value)
        try box.put(1, .binary, keyBytes.baseAddress!, keyBytes.count, valueBytes.baseAddress!, valueBytes.count)
        try box.commit()
        try box.checkpoint()
        try box.close()

        let reopened = try ValueBox(path: path)
        let report = try reopened.check()
        #expect(!report.isOK)
        #expect(report.problems.contains { $0.contains("key of 2000 bytes") }, "\(report.problems)")
        #expect {
            try reopened.range(Self.table, start: ValueBoxKey(length: 0), end: ValueBoxKey([0xff]), keys: { _ in true }, limit: 0)
        } throws: { error in
            guard case .corrupted? = error as? BoxwoodError else { return false }
            return true
        }
        try reopened.close()
    }
}
