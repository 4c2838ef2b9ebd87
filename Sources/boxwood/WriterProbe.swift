#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the shared header (`DB/header`) says about the database's writer, read from outside the engine: the
/// file is opened read-only, no reader slot is claimed and no lock is taken, so a writer is never delayed.
///
/// The header layout is the engine's (see `SharedHeader`): magic `BXWDHDR\0` at 0, `writerState` at 72 (1 while
/// a writer changes the files, left at 1 by a writer that died doing so), the writer lock byte at 1 MiB (an
/// open-file-description lock the kernel releases when its holder dies).
enum WriterProbe {
    enum State: Equatable {
        /// No writer, and the last one finished cleanly.
        case idle
        /// A live process holds the writer lock.
        case lockHeld
        /// Nobody holds the lock, but the last writer stopped while changing the files (it crashed or was
        /// killed). Nothing committed is lost: the next writer recovers from the WAL.
        case crashedMidWrite
    }

    static let magic: [UInt8] = Array("BXWDHDR\0".utf8)
    static let writerStateOffset = 72
    static let writerLockOffset: Int64 = 1 << 20

    /// The writer's state, or nil when there is no readable header (no database, or never opened by a writer).
    static func state(of db: String) -> State? {
        let fd = open(db + "/header", O_RDONLY | O_CLOEXEC)
        if fd < 0 { return nil }
        defer { close(fd) }
        // Lock, flag, lock, flag: a writer that takes the lock between two looks is seen as live, never as crashed.
        guard let held = lockHeld(fd) else { return nil }
        if held { return .lockHeld }
        guard let flag1 = writerStateWord(fd), let heldAgain = lockHeld(fd), let flag2 = writerStateWord(fd) else { return nil }
        if heldAgain { return .lockHeld }
        return flag1 != 0 && flag2 != 0 ? .crashedMidWrite : .idle
    }

    /// The writerState word, or nil when the file is not a shared header.
    private static func writerStateWord(_ fd: Int32) -> UInt64? {
        var bytes = [UInt8](repeating: 0, count: writerStateOffset + 8)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n == bytes.count, Array(bytes[0..<magic.count]) == magic else { return nil }
        var word: UInt64 = 0
        for i in 0..<8 { word |= UInt64(bytes[writerStateOffset + i]) << (8 * UInt64(i)) }
        return word
    }

    /// Whether another open of the file holds (or shares) the writer lock byte; nil when the query fails.
    private static func lockHeld(_ fd: Int32) -> Bool? {
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(writerLockOffset)
        lock.l_len = 1
        lock.l_pid = 0
        #if canImport(Glibc)
        let getLock: Int32 = 36  // F_OFD_GETLK: the engine takes open-file-description locks
        #else
        let getLock = F_GETLK
        #endif
        guard fcntl(fd, getLock, &lock) == 0 else { return nil }
        return lock.l_type != Int16(F_UNLCK)
    }
}

/// Prints a note on stderr when the last writer of `db` stopped in the middle of a write, so that the user
/// knows it is safe to go on. `recoversNow`: this command is a writer (it recovers the database itself).
func noteIfLastWriterCrashed(_ db: String, recoversNow: Bool = false) {
    guard WriterProbe.state(of: db) == .crashedMidWrite else { return }
    if recoversNow {
        printError("note: \(db): the last writer stopped in the middle of a write (it crashed or was killed); "
            + "recovering from the WAL now, nothing committed is lost")
    } else {
        printError("note: \(db): the last writer stopped in the middle of a write (it crashed or was killed). "
            + "It is safe to continue: every committed transaction is in the WAL, and the next writer recovers from it")
    }
}

/// Tells a user at a terminal that a writer command is about to wait for another process's write lock.
func noteIfWriterLockHeld(_ db: String, timeout: Double) {
    guard isatty(2) != 0, WriterProbe.state(of: db) == .lockHeld else { return }
    printError("note: \(db): another process is writing; waiting up to \(timeout) s for the write lock")
}
