import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why ``FileSystemCalls/openFile(_:create:readOnly:)`` failed.
public enum OpenFileError: Error, Equatable, Sendable {
    /// The system refused the open (or the examination after it).
    case system(Errno)
    /// The path names something other than a regular file.
    case notARegularFile
}

/// What a path names.
public enum PathKind: Sendable {
    case regular
    case directory
    case other
}

/// A directory entry as `lstat` sees it.
public struct EntryStatus: Equatable, Sendable {
    /// The entry is a symbolic link (``FileSystemCalls/entryStatus(of:)`` does not follow it).
    public var isSymbolicLink: Bool
    /// The permission bits (including set-id and sticky bits) of the entry itself.
    public var permissions: FilePermissions

    public init(isSymbolicLink: Bool, permissions: FilePermissions) {
        self.isSymbolicLink = isSymbolicLink
        self.permissions = permissions
    }
}

/// The file-system calls the engine makes, with one policy: **what Boxwood creates is private** — files 0600,
/// directories 0700 (whatever the umask allows of that; a umask never widens it). An existing file or directory
/// keeps its mode. Every descriptor is opened close-on-exec.
public enum FileSystemCalls {
    /// Permissions of a file Boxwood creates.
    public static let privateFile: FilePermissions = [.ownerReadWrite]
    /// Permissions of a directory Boxwood creates.
    public static let privateDirectory: FilePermissions = [.ownerReadWriteExecute]

    /// Opens the regular file `path` for reading and, unless `readOnly`, writing; creates it (0600) when `create`
    /// and missing. Anything but a regular file — a FIFO, a device, a socket, a directory — is refused with
    /// ``OpenFileError/notARegularFile``: it is opened non-blocking (a FIFO would otherwise block the open until a
    /// writer came) and examined before any byte is read.
    public static func openFile(_ path: FilePath, create: Bool, readOnly: Bool) throws(OpenFileError) -> OwnedDescriptor {
        var options: FileDescriptor.OpenOptions = [.closeOnExec, .nonBlocking]
        if create { options.insert(.create) }
        let owner: OwnedDescriptor
        do {
            let descriptor = try FileDescriptor.open(path, readOnly ? .readOnly : .readWrite, options: options,
                                                     permissions: create ? privateFile : nil, retryOnInterrupt: true)
            owner = OwnedDescriptor(taking: descriptor)
        } catch {
            throw .system(error as? Errno ?? .ioError)
        }
        var info = stat()
        guard fstat(owner.descriptor.rawValue, &info) == 0 else { throw .system(Errno(rawValue: errno)) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile }
        let flags = fcntl(owner.descriptor.rawValue, F_GETFL)
        guard flags >= 0, fcntl(owner.descriptor.rawValue, F_SETFL, flags & ~O_NONBLOCK) == 0 else { throw .system(Errno(rawValue: errno)) }
        return owner
    }

    /// The kind of object at `path`, or nil when nothing is there (or it cannot be examined).
    public static func kind(of path: FilePath) -> PathKind? {
        var info = stat()
        guard stat(path.string, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regular
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// Creates the directory `path` (0700); not an error when it exists.
    public static func createDirectory(_ path: FilePath) throws(Errno) {
        if mkdir(path.string, privateDirectory.rawValue) != 0 && errno != EEXIST { throw Errno(rawValue: errno) }
    }

    /// Makes the entries of directory `path` durable (after a file in it was created, renamed or removed).
    public static func syncDirectory(_ path: FilePath) throws(Errno) {
        let directory: FileDescriptor
        do {
            directory = try FileDescriptor.open(path, .readOnly, options: [.directory, .closeOnExec], retryOnInterrupt: true)
        } catch {
            throw error as? Errno ?? .ioError
        }
        let owned = OwnedDescriptor(taking: directory)
        try owned.descriptor.synchronize(.all)
        try owned.close()
    }

    /// What is at `path` itself (a symbolic link is not followed: `lstat`), or nil when nothing is there.
    public static func entryStatus(of path: FilePath) throws(Errno) -> EntryStatus? {
        var info = stat()
        guard lstat(path.string, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw Errno(rawValue: errno)
        }
        return EntryStatus(isSymbolicLink: info.st_mode & S_IFMT == S_IFLNK,
                           permissions: FilePermissions(rawValue: CModeT(info.st_mode & 0o7777)))
    }

    /// Sets the permission bits of the file `path` (following a symbolic link, as `chmod` does).
    public static func setPermissions(_ path: FilePath, _ permissions: FilePermissions) throws(Errno) {
        if chmod(path.string, permissions.rawValue) != 0 { throw Errno(rawValue: errno) }
    }

    /// Removes the file `path`; not an error when it is missing.
    public static func removeFile(_ path: FilePath) throws(Errno) {
        if unlink(path.string) != 0 && errno != ENOENT { throw Errno(rawValue: errno) }
    }

    /// Removes the empty directory `path`; not an error when it is missing.
    public static func removeDirectory(_ path: FilePath) throws(Errno) {
        if rmdir(path.string) != 0 && errno != ENOENT { throw Errno(rawValue: errno) }
    }

    /// Atomically renames `source` to `destination` (replacing it).
    public static func rename(_ source: FilePath, to destination: FilePath) throws(Errno) {
        if systemRename(source.string, destination.string) != 0 { throw Errno(rawValue: errno) }
    }
}

/// `rename(2)` (the name is taken inside ``FileSystemCalls``).
private func systemRename(_ source: String, _ destination: String) -> CInt {
    rename(source, destination)
}
