import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import BoxwoodStore
import BoxwoodStoreTesting

/// `close()` is final, also for a value box whose recovery from a failed write could not reopen the files: the
/// next call must not bring it back (retrying the recovery behind the caller's back), and nothing it held —
/// the writer lock above all — may outlive it.
@Suite struct CloseAfterFailedRecoveryTests {
    @Test func closeEndsAFailedRecovery() throws {
        let disk = SimulatedDisk(seed: 7)
        let table = ValueBoxTable(id: 1, keyType: .binary)
        let box = try ValueBox(path: "/db", options: ValueBoxOptions(durability: .full), fileSystem: disk)
        try box.begin()
        try box.set(table, key: ValueBoxKey([1]), value: MemoryBuffer([1]))
        try box.commit()
        // The checkpoint's first write fails: the box is left failed, to recover by reopening its files. Both meta
        // pages are then damaged, so that the reopen fails too.
        disk.scheduleFailure(afterOperations: 1, errno: EIO)
        #expect(throws: BoxwoodError.self) { try box.checkpoint() }
        #expect(box.failure != nil)
        for slot in 0..<2 { disk.damage("/db/data", offset: slot * PageLayout.pageSize + 40, bytes: [0xFF, 0xFF, 0xFF, 0xFF]) }
        #expect(throws: BoxwoodError.self) { try box.begin() }
        #expect(box.isClosed && box.failure != nil, "the failed recovery is retried by the next call")

        try box.close()
        #expect(box.failure == nil)
        #expect(!box.holdsWriterLock)
        #expect(box.header == nil)
        #expect {
            try box.begin()
        } throws: { error in
            (error as? BoxwoodError) == .closed
        }
    }
}
