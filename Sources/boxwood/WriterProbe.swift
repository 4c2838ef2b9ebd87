import BoxwoodPlatform
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the shared header (`DB/header`) says about the database's writer, read from outside the engine: the
/// file is opened read-only, no reader slot is claimed and no lock is taken, so a writer is never delayed.
///
/// The header layout is the engine's (see `SharedHeader`): magic `BXWDHDR\0` at 0, version 2 at 8, `writerState`
/// at 72 (1 while a writer changes the files, left at 1 by a writer that died doing so), `writerHolder` at 96 (the
/// identity — pid and start time — of the writer lock's holder while it is held; a dead holder's is ignored).
enum WriterProbe {
    enum State: Equatable {
        /// No writer, and the last one finished cleanly.
        case idle
        /// A live process holds the writer lock.
        case lockHeld
        /// Nobody holds the lock, but the last writer stopped while changing the files: it crashed or was
        /// killed — or a write failed (a full disk: ENOSPC during the close checkpoint leaves the flag set
        /// too, and the header cannot tell the two apart). Nothing committed is lost: the next writer recovers
        /// from the WAL.
        case stoppedMidWrite
    }

    static let magic: [UInt8] = Array("BXWDHDR\0".utf8)
    static let writerStateOffset = 72
    static let writerHolderOffset = 96
    static let headerBytes = 104

    /// The writer's state, or nil when there is no readable header (no database, never opened by a writer, or a
    /// header of another version).
    static func state(of db: String) -> State? {
        guard let owner = try? FileSystemCalls.openFile(FilePath(db + "/header"), create: false, readOnly: true) else { return nil }
        // Holder, flag, holder, flag: a writer that takes the lock between two looks is seen as live, never as crashed.
        guard let first = words(owner.descriptor) else { return nil }
        if isLiveHolder(first.holder) { return .lockHeld }
        guard let second = words(owner.descriptor) else { return nil }
        if isLiveHolder(second.holder) { return .lockHeld }
        return first.writerState != 0 && second.writerState != 0 ? .stoppedMidWrite : .idle
    }

    private static func isLiveHolder(_ holder: UInt64) -> Bool {
        holder != 0 && ProcessIdentity(packed: holder).isAlive
    }

    /// The writerState and writerHolder words, or nil when the file is not a version-2 shared header.
    private static func words(_ descriptor: FileDescriptor) -> (writerState: UInt64, holder: UInt64)? {
        var bytes = [UInt8](repeating: 0, count: headerBytes)
        guard let n = try? bytes.withUnsafeMutableBytes({ try descriptor.readFully(into: $0.baseAddress!, count: $0.count, offset: 0) }),
              n == bytes.count, Array(bytes[0..<magic.count]) == magic, bytes[8] == 2 else { return nil }
        func word(_ offset: Int) -> UInt64 {
            var value: UInt64 = 0
            for i in 0..<8 { value |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
            return value
        }
        return (word(writerStateOffset), word(writerHolderOffset))
    }
}

/// Prints a note on stderr when the last writer of `db` stopped in the middle of a write, so that the user
/// knows it is safe to go on. `recoversNow`: this command is a writer (it recovers the database itself).
///
/// The header only says that the files were being changed when the last writer let go: a crash, a kill and a
/// failed write (ENOSPC while the close checkpoint wrote its pages) look the same. So the note names all three,
/// and says which one is likely when the disk holding the database is full right now.
func noteIfLastWriterCrashed(_ db: String, recoversNow: Bool = false) {
    guard WriterProbe.state(of: db) == .stoppedMidWrite else { return }
    let cause: String
    if let free = availableBytes(db), free < lowSpace {
        cause = "a write failed: the disk holding it is full (\(free) bytes free; free some space before writing)"
    } else {
        cause = "it crashed or was killed, or a write failed, such as on a full disk"
    }
    if recoversNow {
        printNote("note: \(db): the last writer stopped in the middle of a write (\(cause)); "
            + "recovering from the WAL now, nothing committed is lost")
    } else {
        printNote("note: \(db): the last writer stopped in the middle of a write (\(cause)). "
            + "It is safe to continue: every committed transaction is in the WAL, and the next writer recovers from it")
    }
}

/// Below this many free bytes the disk counts as full for the note above (a checkpoint writes whole pages).
private let lowSpace: UInt64 = 1 << 20

/// The bytes an unprivileged process may still write on the file system holding `path`, or nil when unknown.
private func availableBytes(_ path: String) -> UInt64? {
    var info = statvfs()
    guard statvfs(path, &info) == 0 else { return nil }
    let (bytes, overflow) = UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize))
    return overflow ? .max : bytes
}

/// Tells a user at a terminal that a writer command is about to wait for another process's write lock.
func noteIfWriterLockHeld(_ db: String, timeout: Double) {
    guard isatty(2) != 0, WriterProbe.state(of: db) == .lockHeld else { return }
    printNote("note: \(db): another process is writing; waiting up to \(timeout) s for the write lock")
}
