#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file that processes sharing a database coordinate through (`header` beside `data`): a small region
/// that every process maps read-write, plus byte-range locks that the kernel releases when the process
/// holding them dies. Its contents are volatile (see ``SharedHeader``); nothing in it is needed to recover
/// the database.
public protocol CoordinationFile: AnyObject {
    /// The path (for error messages and change notification).
    var path: String { get }
    /// The shared mapping, ``SharedHeader/size`` bytes, readable and writable, zero-filled when new.
    var memory: UnsafeMutableRawPointer { get }
    /// Tries to lock one byte (at `offset`, which may lie past the end of the file) without waiting.
    /// Returns false when another holder's lock conflicts.
    func tryLock(offset: UInt64, exclusive: Bool) throws(BoxwoodError) -> Bool
    /// Releases this holder's lock on the byte at `offset`.
    func unlock(offset: UInt64)
    /// True when a holder other than this one has any lock on the byte at `offset`.
    func isLockedByOthers(offset: UInt64) throws(BoxwoodError) -> Bool
    /// Unmaps and closes the file, releasing every lock this holder has.
    func close()
}

/// A coordination file on the real file system: an `mmap(MAP_SHARED)` of the file and Linux open-file-
/// description locks (`F_OFD_SETLK`), which belong to this open of the file, are independent between two
/// opens in the same process, and are released by the kernel when the process dies.
public final class PosixCoordinationFile: CoordinationFile {
    public let path: String
    public let memory: UnsafeMutableRawPointer
    let fd: Int32
    private var isOpen = true
    private var held: Set<UInt64> = []

    #if canImport(Glibc)
    private static let setLock: Int32 = 37   // F_OFD_SETLK
    private static let getLock: Int32 = 36   // F_OFD_GETLK
    #else
    private static let setLock = F_SETLK
    private static let getLock = F_GETLK
    #endif

    /// Opens (creating when missing) and maps the file at `path`. Throws `.io` when the file cannot be
    /// opened for writing (a read-only directory or file).
    public init(path: String) throws(BoxwoodError) {
        self.path = path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 { throw .io(operation: "open", path: path, errno: errno) }
        var st = stat()
        if fstat(fd, &st) != 0 {
            let e = errno
            _ = Glibc.close(fd)
            throw .io(operation: "fstat", path: path, errno: e)
        }
        if Int(st.st_size) < SharedHeader.size {
            // Growing with ftruncate is atomic and zero-fills; a racing opener doing the same is harmless.
            if ftruncate(fd, off_t(SharedHeader.size)) != 0 {
                let e = errno
                _ = Glibc.close(fd)
                throw .io(operation: "ftruncate", path: path, errno: e)
            }
        }
        guard let address = mmap(nil, SharedHeader.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), address != MAP_FAILED else {
            let e = errno
            _ = Glibc.close(fd)
            throw .io(operation: "mmap", path: path, errno: e)
        }
        self.fd = fd
        self.memory = address
    }

    deinit { close() }

    private func lockRecord(_ type: Int32, _ offset: UInt64) -> flock {
        var lock = flock()
        lock.l_type = Int16(type)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(offset)
        lock.l_len = 1
        return lock
    }

    public func tryLock(offset: UInt64, exclusive: Bool) throws(BoxwoodError) -> Bool {
        var lock = lockRecord(exclusive ? F_WRLCK : F_RDLCK, offset)
        while fcntl(fd, PosixCoordinationFile.setLock, &lock) != 0 {
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EACCES { return false }
            throw .io(operation: "fcntl(lock)", path: path, errno: errno)
        }
        held.insert(offset)
        return true
    }

    public func unlock(offset: UInt64) {
        var lock = lockRecord(F_UNLCK, offset)
        _ = fcntl(fd, PosixCoordinationFile.setLock, &lock)
        held.remove(offset)
    }

    public func isLockedByOthers(offset: UInt64) throws(BoxwoodError) -> Bool {
        var lock = lockRecord(F_WRLCK, offset)
        while fcntl(fd, PosixCoordinationFile.getLock, &lock) != 0 {
            if errno == EINTR { continue }
            throw .io(operation: "fcntl(getlk)", path: path, errno: errno)
        }
        return lock.l_type != Int16(F_UNLCK)
    }

    public func close() {
        guard isOpen else { return }
        isOpen = false
        // Unlock explicitly: an OFD lock lives as long as any descriptor of the open file description, and a
        // child being spawned holds copies of every descriptor until its exec.
        for offset in held { unlock(offset: offset) }
        munmap(memory, SharedHeader.size)
        _ = Glibc.close(fd)
    }
}
