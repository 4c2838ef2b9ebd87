#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real file through POSIX calls.
public final class PosixFile: StorageFile {
    public let path: String
    let fd: Int32

    init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit { close() }

    private var isOpen = true

    public func read(into buffer: UnsafeMutableRawPointer, count: Int, offset: UInt64) throws(BoxwoodError) -> Int {
        var done = 0
        while done < count {
            let n = pread(fd, buffer + done, count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "pread", path: path, errno: errno)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    public func write(_ buffer: UnsafeRawPointer, count: Int, offset: UInt64) throws(BoxwoodError) {
        var done = 0
        while done < count {
            let n = pwrite(fd, buffer + done, count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "pwrite", path: path, errno: errno)
            }
            done += n
        }
    }

    public func sync() throws(BoxwoodError) {
        if fsync(fd) != 0 { throw .io(operation: "fsync", path: path, errno: errno) }
    }

    public func dataSync() throws(BoxwoodError) {
        #if canImport(Glibc)
        if fdatasync(fd) != 0 { throw .io(operation: "fdatasync", path: path, errno: errno) }
        #else
        if fsync(fd) != 0 { throw .io(operation: "fsync", path: path, errno: errno) }
        #endif
    }

    public func size() throws(BoxwoodError) -> UInt64 {
        var st = stat()
        if fstat(fd, &st) != 0 { throw .io(operation: "fstat", path: path, errno: errno) }
        return UInt64(st.st_size)
    }

    public func truncate(to size: UInt64) throws(BoxwoodError) {
        while ftruncate(fd, off_t(size)) != 0 {
            if errno == EINTR { continue }
            throw .io(operation: "ftruncate", path: path, errno: errno)
        }
    }

    public func map(length: Int) throws(BoxwoodError) -> UnsafeRawPointer {
        guard let address = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), address != MAP_FAILED else {
            throw .io(operation: "mmap", path: path, errno: errno)
        }
        return UnsafeRawPointer(address)
    }

    public func unmap(_ address: UnsafeRawPointer, length: Int) {
        munmap(UnsafeMutableRawPointer(mutating: address), length)
    }

    public func close() {
        if isOpen {
            isOpen = false
            _ = Glibc.close(fd)
        }
    }
}

/// The real file system.
public final class PosixFileSystem: StorageFileSystem, Sendable {
    /// The shared instance.
    public static let shared = PosixFileSystem()

    public init() {}

    public func open(_ path: String, create: Bool, readOnly: Bool) throws(BoxwoodError) -> StorageFile {
        var flags = readOnly ? O_RDONLY : O_RDWR
        if create { flags |= O_CREAT }
        flags |= O_CLOEXEC
        let fd = Glibc.open(path, flags, 0o644)
        if fd < 0 { throw .io(operation: "open", path: path, errno: errno) }
        return PosixFile(path: path, fd: fd)
    }

    public func kind(of path: String) -> FileKind? {
        var st = stat()
        if stat(path, &st) != 0 { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return .regular
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    public func createDirectory(_ path: String) throws(BoxwoodError) {
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw .io(operation: "mkdir", path: path, errno: errno)
        }
    }

    public func syncDirectory(_ path: String) throws(BoxwoodError) {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { throw .io(operation: "open(dir)", path: path, errno: errno) }
        defer { _ = Glibc.close(fd) }
        if fsync(fd) != 0 { throw .io(operation: "fsync(dir)", path: path, errno: errno) }
    }

    public func removeFile(_ path: String) throws(BoxwoodError) {
        if unlink(path) != 0 && errno != ENOENT {
            throw .io(operation: "unlink", path: path, errno: errno)
        }
    }

    public func rename(_ from: String, to: String) throws(BoxwoodError) {
        if Glibc.rename(from, to) != 0 { throw .io(operation: "rename", path: from, errno: errno) }
    }

    public func openCoordinationFile(_ path: String) throws(BoxwoodError) -> CoordinationFile {
        try PosixCoordinationFile(path: path)
    }
}
