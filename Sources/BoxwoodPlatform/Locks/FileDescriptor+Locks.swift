import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-file locks with one meaning on every platform: `flock(2)`.
///
/// A `flock` lock belongs to the *open file description* — on Linux and on Darwin alike. So two opens of one file,
/// in one process or in two, exclude each other; closing some other descriptor of the file (which drops every
/// classic `fcntl` lock the process holds on it) leaves it alone; and the kernel releases it when the last
/// descriptor of that open goes, including when the process dies. Descriptors are close-on-exec and children are
/// spawned with everything above stderr closed, so no child inherits a lock.
extension FileDescriptor {
    /// Takes the exclusive lock if no other open of the file holds it; false when one does.
    public func tryLockExclusively() throws(Errno) -> Bool {
        while flock(rawValue, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK || code == EAGAIN { return false }
            throw Errno(rawValue: code)
        }
        return true
    }

    /// Releases this open's lock.
    public func unlockExclusively() {
        _ = flock(rawValue, LOCK_UN)
    }

    /// True when some process holds a classic or open-file-description `fcntl` byte-range lock on
    /// `start ..< start + length` (the lock scheme of Boxwood's shared-header version 1, which kept a lock on a
    /// reader-slot byte for as long as a database was open).
    public func hasByteRangeLocks(start: UInt64, length: UInt64) throws(Errno) -> Bool {
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(start)
        lock.l_len = off_t(length)
        #if os(Linux)
        // F_OFD_GETLK (36): version 1 took open-file-description locks on Linux; it also reports classic locks.
        let command: CInt = 36
        #else
        let command = F_GETLK
        #endif
        while fcntl(rawValue, command, &lock) != 0 {
            if errno == EINTR { continue }
            throw Errno(rawValue: errno)
        }
        return lock.l_type != Int16(F_UNLCK)
    }
}
