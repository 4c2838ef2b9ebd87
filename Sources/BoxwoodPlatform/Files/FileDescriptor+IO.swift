import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How much of a file a sync makes durable.
public enum SyncLevel: Sendable {
    /// The data written, and the size when it is needed to read the data back (`fdatasync` on Linux; `fsync` on
    /// Darwin, which has no `fdatasync`).
    case data
    /// Data and metadata (`fsync`).
    case all
    /// Data and metadata through the drive's own cache: `F_FULLFSYNC` on Darwin (falling back to `fsync` when the
    /// file system refuses it, as SQLite and LMDB do); `fsync` on Linux, where `fsync` already flushes the drive
    /// cache.
    case full
    /// The data written (and the size when it is needed to read the data back) through the drive's own cache:
    /// `F_FULLFSYNC` on Darwin, which has no data-only variant (falling back to `fsync` as `full` does);
    /// `fdatasync` on Linux, which flushes the drive cache as `fsync` does but skips metadata such as the
    /// modification time, so that an overwrite in place commits nothing to the file system's journal.
    case fullData
}

/// Positioned I/O, sizes, syncs and mappings on a descriptor that an ``OwnedDescriptor`` keeps open. Every call
/// retries EINTR and reports other failures as `Errno`.
extension FileDescriptor {
    /// Reads up to `count` bytes at `offset` into `buffer`; returns the number read (short only at end of file).
    public func readFully(into buffer: UnsafeMutableRawPointer, count: Int, offset: UInt64) throws(Errno) -> Int {
        let start = try fileOffset(offset, count: count)
        var done = 0
        while done < count {
            let n = systemPRead(rawValue, buffer + done, count - done, start + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw Errno(rawValue: errno)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Writes all `count` bytes of `buffer` at `offset`, extending the file when needed (swift-system's
    /// `writeAll(toAbsoluteOffset:)`, which retries short writes and EINTR).
    public func writeFully(_ buffer: UnsafeRawPointer, count: Int, offset: UInt64) throws(Errno) {
        let start = try fileOffset(offset, count: count)
        do {
            _ = try writeAll(toAbsoluteOffset: Int64(start), UnsafeRawBufferPointer(start: buffer, count: count))
        } catch {
            throw error as? Errno ?? .ioError
        }
    }

    /// `offset` as a file offset, when `offset + count` fits one; offsets come from files and headers that may be
    /// damaged or forged, so an impossible one is `EINVAL`, not a trap.
    private func fileOffset(_ offset: UInt64, count: Int) throws(Errno) -> off_t {
        guard count >= 0, offset <= UInt64(off_t.max) - UInt64(count) else { throw Errno.invalidArgument }
        return off_t(offset)
    }

    /// Makes what was written durable to `level`.
    public func synchronize(_ level: SyncLevel) throws(Errno) {
        switch level {
        case .data:
            #if os(Linux)
            try retryingInterrupts { fdatasync(rawValue) }
            #else
            try retryingInterrupts { fsync(rawValue) }
            #endif
        case .all:
            try retryingInterrupts { fsync(rawValue) }
        case .full:
            #if canImport(Darwin)
            // F_FULLFSYNC asks the drive to flush its cache; some file systems (network, FAT) refuse it.
            if fcntl(rawValue, F_FULLFSYNC) == 0 { return }
            #endif
            try retryingInterrupts { fsync(rawValue) }
        case .fullData:
            #if os(Linux)
            try retryingInterrupts { fdatasync(rawValue) }
            #else
            if fcntl(rawValue, F_FULLFSYNC) == 0 { return }
            try retryingInterrupts { fsync(rawValue) }
            #endif
        }
    }

    /// The file's size in bytes.
    public func fileSize() throws(Errno) -> UInt64 {
        let size = systemFileSize(rawValue)
        guard size >= 0 else { throw Errno(rawValue: errno) }
        return UInt64(size)
    }

    /// Sets the file's size (zero-filling when it grows).
    public func setFileSize(_ size: UInt64) throws(Errno) {
        guard size <= UInt64(off_t.max) else { throw Errno.fileTooLarge }
        try retryingInterrupts { ftruncate(rawValue, off_t(size)) }
    }

    /// Maps `length` bytes from the start of the file, shared with every other mapping of it; writable only when
    /// asked. Bytes past the end of the file must not be touched.
    public func mapShared(length: Int, writable: Bool) throws(Errno) -> UnsafeMutableRawPointer {
        let protection = writable ? PROT_READ | PROT_WRITE : PROT_READ
        guard let address = mmap(nil, length, protection, MAP_SHARED, rawValue, 0), address != MAP_FAILED else {
            throw Errno(rawValue: errno)
        }
        return address
    }
}

/// Removes a mapping made by ``SystemPackage/FileDescriptor/mapShared(length:writable:)``.
public func unmapShared(_ address: UnsafeRawPointer, length: Int) {
    munmap(UnsafeMutableRawPointer(mutating: address), length)
}

/// Runs `call` until it does not fail with EINTR; a -1 result otherwise throws `errno`.
@inline(__always)
func retryingInterrupts(_ call: () -> CInt) throws(Errno) {
    while call() != 0 {
        if errno == EINTR { continue }
        throw Errno(rawValue: errno)
    }
}

// The system calls whose names methods of `FileDescriptor` shadow inside its extensions.

private func systemPRead(_ descriptor: CInt, _ buffer: UnsafeMutableRawPointer, _ count: Int, _ offset: off_t) -> Int {
    pread(descriptor, buffer, count, offset)
}

/// `fstat`'s size, or -1 with `errno` set.
private func systemFileSize(_ descriptor: CInt) -> Int64 {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { return -1 }
    return Int64(info.st_size)
}
