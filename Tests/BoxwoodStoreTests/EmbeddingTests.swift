import Foundation
import Testing
@testable import BoxwoodStore
#if canImport(Glibc)
import Glibc
#endif

/// The inode numbers of a database's files.
func databaseInodes(_ path: String) -> Set<UInt64> {
    var inodes: Set<UInt64> = []
    for name in ["data", "wal", "header"] {
        var info = stat()
        if stat(path + "/" + name, &info) == 0 { inodes.insert(UInt64(info.st_ino)) }
    }
    return inodes
}

/// The lines of /proc/locks (every file lock on the machine: flock, POSIX and OFD) on one of `inodes`.
func kernelLocks(on inodes: Set<UInt64>) throws -> [String] {
    let text = try String(contentsOfFile: "/proc/locks", encoding: .utf8)
    return text.split(separator: "\n").filter { line in
        // "1: FLOCK  ADVISORY  WRITE 1234 08:01:123456 0 EOF": the device:inode field is the 6th.
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 5, let inode = fields[5].split(separator: ":").last.flatMap({ UInt64($0) }) else { return false }
        return inodes.contains(inode)
    }.map(String.init)
}

func fileMode(_ path: String) -> mode_t {
    var info = stat()
    guard stat(path, &info) == 0 else { return 0 }
    return info.st_mode & 0o7777
}

@Suite("embedding: private files, no lock while idle, one lock meaning")
struct EmbeddingTests {
    @Test("files are created 0600 and the directory 0700 under umask 022; an existing file keeps its mode")
    func privateFiles() throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        let path = temporaryDatabasePath("modes")
        defer { removeItem(path) }
        let box = try ValueBox(path: path)
        try box.begin()
        try box.set(ValueBoxTable(id: 1, keyType: .binary), key: bkey([1]), value: mbuf([2]))
        try box.commit()
        #expect(fileMode(path) == 0o700)
        for name in ["data", "wal", "header"] { #expect(fileMode(path + "/" + name) == 0o600, "\(name)") }
        // Compaction writes a new data file and renames it over the old one: private too.
        try box.compact()
        #expect(fileMode(path + "/data") == 0o600)
        try box.close()
        // A mode the owner chose is kept.
        #expect(chmod(path + "/wal", 0o640) == 0)
        let reopened = try ValueBox(path: path)
        try reopened.close()
        #expect(fileMode(path + "/wal") == 0o640)
    }

    @Test("an open value box holds no file lock while idle, and holds the writer lock only inside a write",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/locks")))
    func noLockWhileIdle() throws {
        let path = temporaryDatabasePath("idle")
        defer { removeItem(path) }
        let box = try ValueBox(path: path)
        let reader = try ValueBox(path: path)
        try box.begin()
        try box.set(ValueBoxTable(id: 1, keyType: .binary), key: bkey([1]), value: mbuf([2]))
        let inodes = databaseInodes(path)
        // Inside the write transaction the writer lock is visible (so this test can see a lock at all)…
        #expect(try kernelLocks(on: inodes).count == 1)
        try box.commit()
        // …and after it, with both boxes open, having read and holding a read snapshot open and closed, none.
        _ = try reader.get(ValueBoxTable(id: 1, keyType: .binary), key: bkey([1]))
        try reader.beginRead()
        let duringRead = try kernelLocks(on: inodes)
        #expect(duringRead.isEmpty, "\(duringRead)")
        reader.endRead()
        let idle = try kernelLocks(on: inodes)
        #expect(idle.isEmpty, "\(idle)")
        try reader.close()
        try box.close()
    }

    @Test("two opens in one process exclude each other, and closing a third open of the file does not drop the lock")
    func inProcessExclusion() throws {
        let path = temporaryDatabasePath("exclusion")
        defer { removeItem(path) }
        var options = ValueBoxOptions()
        options.lockTimeout = 0.2
        let writer = try ValueBox(path: path, options: options)
        let other = try ValueBox(path: path, options: options)
        try writer.begin()
        // A third value box opens and closes the same files: with process-wide fcntl locks that close would drop
        // the writer's lock.
        let third = try ValueBox(path: path, options: options)
        try third.close()
        #expect(throws: BoxwoodError.lockTimeout(path: path + "/header", seconds: 0.2)) { try other.begin() }
        try writer.commit()
        try other.begin()
        try other.commit()
        try other.close()
        try writer.close()
    }

    @Test("a waiter gets the writer lock as soon as it is released (a kernel wait, woken by the release)")
    func lockWaiterIsWoken() throws {
        let path = temporaryDatabasePath("wake")
        defer { removeItem(path) }
        var options = ValueBoxOptions()
        options.lockTimeout = 30
        let writer = try ValueBox(path: path, options: options)
        let waiter = try ValueBox(path: path, options: options)
        try writer.begin()
        // The waiter blocks in the kernel: on a thread of its own, not on Swift's cooperative pool.
        let result = WaitResult()
        let handedOver = Unchecked(waiter)   // used by the waiting thread alone until `done` is signalled
        let started = ContinuousClock.now
        let thread = Thread {
            do {
                try handedOver.value.begin()
                result.waited = ContinuousClock.now - started
                handedOver.value.abort()
            } catch {
                result.error = error
            }
            result.done.signal()
        }
        thread.start()
        Thread.sleep(forTimeInterval: 0.3)
        try writer.commit()
        result.done.wait()
        #expect(result.error == nil)
        // The waiter slept through the 300 ms; it was not left to time out (30 s).
        let waited = try #require(result.waited)
        #expect(waited >= .milliseconds(300) && waited < .seconds(10), "\(waited)")
        try waiter.close()
        try writer.close()
    }

    @Test("a NaN or negative lock timeout is a timeout of zero: a typed .lockTimeout, no trap", arguments: [Double.nan, -1, 0])
    func oddLockTimeouts(timeout: Double) throws {
        let path = temporaryDatabasePath("timeout")
        defer { removeItem(path) }
        let writer = try ValueBox(path: path)
        var options = ValueBoxOptions()
        options.lockTimeout = timeout
        let other = try ValueBox(path: path, options: options)
        try writer.begin()
        #expect {
            try other.begin()
        } throws: { error in
            guard case .lockTimeout? = error as? BoxwoodError else { return false }
            return true
        }
        try writer.commit()
        try other.close()
        try writer.close()
    }

    @Test("a header of lock scheme 1 is refused while a version-1 process has the database open, rebuilt otherwise")
    func version1LockScheme() throws {
        let path = temporaryDatabasePath("v1")
        defer { removeItem(path) }
        let box = try ValueBox(path: path)
        try box.begin()
        try box.set(ValueBoxTable(id: 1, keyType: .binary), key: bkey([1]), value: mbuf([7]))
        try box.commit()
        try box.close()
        // Turn the header into version 1's identity.
        let header = path + "/header"
        var bytes = try readFile(header)
        bytes[8] = 1
        try writeFile(header, bytes)
        // An "old process": an open-file-description lock on reader slot 5's byte, as version 1 held while open.
        let old = open(header, O_RDWR | O_CLOEXEC)
        #expect(old >= 0)
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(SharedHeader.version1LockBase + 64 + 5)
        lock.l_len = 1
        #expect(fcntl(old, 37 /* F_OFD_SETLK */, &lock) == 0)
        #expect(throws: BoxwoodError.incompatibleLockScheme(path: path)) { _ = try ValueBox(path: path) }
        // The old process goes: the header is rebuilt as version 2 and the data is all there.
        close(old)
        let reopened = try ValueBox(path: path)
        #expect(try reopened.get(ValueBoxTable(id: 1, keyType: .binary), key: bkey([1]))?.makeArray() == [7])
        try reopened.close()
        #expect(try readFile(header)[8] == 2)
    }
}

@Suite("suspend and resume")
struct SuspendTests {
    static let table = ValueBoxTable(id: 1, keyType: .binary)

    @Test("suspended: calls throw .suspended, the log is checkpointed, commit streams end; resumed: other commits are seen")
    func suspendAndResume() async throws {
        let path = temporaryDatabasePath("suspend")
        defer { removeItem(path) }
        let box = try ValueBox(path: path)
        let other = try ValueBox(path: path)
        try box.begin()
        try box.set(Self.table, key: bkey([1]), value: mbuf([1]))
        try box.commit()
        let changes = box.externalChanges()
        let watching = Task { var seen = 0; for try await _ in changes { seen += 1 }; return seen }
        try box.beginRead()
        try box.suspend()
        #expect(box.isSuspended && !box.isInReadSnapshot)
        // A small log was folded into the data file.
        #expect(try FileManager.default.attributesOfItem(atPath: path + "/wal")[.size] as? Int == WriteAheadLog.headerSize)
        // The commit stream ended (its thread exited).
        #expect(try await watching.value == 0)
        // Watching cannot start while suspended: the stream says why instead of ending silently.
        await #expect(throws: BoxwoodError.suspended(path: path)) { for try await _ in box.externalChanges() {} }
        #expect(throws: BoxwoodError.suspended(path: path)) { try box.begin() }
        #expect(throws: BoxwoodError.suspended(path: path)) { _ = try box.get(Self.table, key: bkey([1])) }
        #expect(throws: BoxwoodError.transactionAlreadyActive) {
            try other.begin()
            defer { other.abort() }
            try other.suspend()
        }
        // Another value box (another process) writes while this one sleeps.
        try other.begin()
        try other.set(Self.table, key: bkey([2]), value: mbuf([2]))
        try other.commit()
        try box.resume()
        #expect(try box.get(Self.table, key: bkey([2]))?.makeArray() == [2])
        try box.begin()
        try box.set(Self.table, key: bkey([3]), value: mbuf([3]))
        try box.commit()
        try other.close()
        try box.close()
    }

    @Test("suspend refuses an open write transaction and leaves it usable")
    func suspendInsideATransaction() throws {
        let path = temporaryDatabasePath("suspend-tx")
        defer { removeItem(path) }
        let box = try ValueBox(path: path)
        try box.begin()
        try box.set(Self.table, key: bkey([1]), value: mbuf([1]))
        #expect(throws: BoxwoodError.transactionAlreadyActive) { try box.suspend() }
        try box.commit()
        #expect(try box.get(Self.table, key: bkey([1]))?.makeArray() == [1])
        try box.close()
    }
}

/// Hands a non-Sendable value to one other task that alone uses it afterwards.
final class Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// What the waiting thread of `lockWaiterIsWoken` reports.
final class WaitResult: @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    var waited: Duration?
    var error: (any Error)?
}
