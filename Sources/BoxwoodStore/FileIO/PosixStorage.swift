import BoxwoodPlatform
import SystemPackage

/// A real file, through the platform layer. Created 0600; syncs flush the drive's cache (F_FULLFSYNC on Darwin)
/// when ``flushesDriveCache`` is set, as it is for `full` durability.
public final class PosixFile: StorageFile {
    public let path: String
    public var flushesDriveCache = false
    /// The open file; nil once closed. The descriptor is lent for I/O through `descriptor`.
    private var owner: OwnedDescriptor?
    private let descriptor: FileDescriptor

    init(path: String, owner: consuming OwnedDescriptor) {
        self.path = path
        descriptor = owner.descriptor
        self.owner = consume owner
    }

    deinit { close() }

    public func read(into buffer: UnsafeMutableRawPointer, count: Int, offset: UInt64) throws(BoxwoodError) -> Int {
        do { return try descriptor.readFully(into: buffer, count: count, offset: offset) } catch { throw .io(operation: "pread", path: path, errno: error.rawValue) }
    }

    public func write(_ buffer: UnsafeRawPointer, count: Int, offset: UInt64) throws(BoxwoodError) {
        do { try descriptor.writeFully(buffer, count: count, offset: offset) } catch { throw .io(operation: "pwrite", path: path, errno: error.rawValue) }
    }

    public func sync() throws(BoxwoodError) {
        do { try descriptor.synchronize(flushesDriveCache ? .full : .all) } catch { throw .io(operation: "fsync", path: path, errno: error.rawValue) }
    }

    public func dataSync() throws(BoxwoodError) {
        do { try descriptor.synchronize(flushesDriveCache ? .fullData : .data) } catch { throw .io(operation: "fdatasync", path: path, errno: error.rawValue) }
    }

    public func size() throws(BoxwoodError) -> UInt64 {
        do { return try descriptor.fileSize() } catch { throw .io(operation: "fstat", path: path, errno: error.rawValue) }
    }

    public func truncate(to size: UInt64) throws(BoxwoodError) {
        do { try descriptor.setFileSize(size) } catch { throw .io(operation: "ftruncate", path: path, errno: error.rawValue) }
    }

    public func map(length: Int) throws(BoxwoodError) -> UnsafeRawPointer {
        do { return UnsafeRawPointer(try descriptor.mapShared(length: length, writable: false)) } catch { throw .io(operation: "mmap", path: path, errno: error.rawValue) }
    }

    public func unmap(_ address: UnsafeRawPointer, length: Int) {
        unmapShared(address, length: length)
    }

    public func close() {
        // A close failure leaves nothing to do: the descriptor is released either way, and every write that
        // matters was synced before.
        if let owner = owner.take() { _ = try? owner.close() }
    }
}

/// The real file system, through the platform layer: files Boxwood creates are 0600 and directories 0700.
public final class PosixFileSystem: StorageFileSystem, Sendable {
    /// The shared instance.
    public static let shared = PosixFileSystem()

    /// Files are descriptors and mappings: `pread`/`pwrite`/`fsync` from several threads are fine.
    public var allowsConcurrentFileAccess: Bool { true }

    public init() {}

    public func open(_ path: String, create: Bool, readOnly: Bool) throws(BoxwoodError) -> StorageFile {
        do {
            return PosixFile(path: path, owner: try FileSystemCalls.openFile(FilePath(path), create: create, readOnly: readOnly))
        } catch {
            throw BoxwoodError(opening: path, error)
        }
    }

    public func kind(of path: String) -> FileKind? {
        switch FileSystemCalls.kind(of: FilePath(path)) {
        case .regular?: return .regular
        case .directory?: return .directory
        case .other?: return .other
        case nil: return nil
        }
    }

    public func createDirectory(_ path: String) throws(BoxwoodError) {
        do { try FileSystemCalls.createDirectory(FilePath(path)) } catch { throw .io(operation: "mkdir", path: path, errno: error.rawValue) }
    }

    public func syncDirectory(_ path: String) throws(BoxwoodError) {
        do { try FileSystemCalls.syncDirectory(FilePath(path)) } catch { throw .io(operation: "fsync(dir)", path: path, errno: error.rawValue) }
    }

    public func removeFile(_ path: String) throws(BoxwoodError) {
        do { try FileSystemCalls.removeFile(FilePath(path)) } catch { throw .io(operation: "unlink", path: path, errno: error.rawValue) }
    }

    public func removeDirectory(_ path: String) throws(BoxwoodError) {
        do { try FileSystemCalls.removeDirectory(FilePath(path)) } catch { throw .io(operation: "rmdir", path: path, errno: error.rawValue) }
    }

    public func rename(_ from: String, to: String) throws(BoxwoodError) {
        do { try FileSystemCalls.rename(FilePath(from), to: FilePath(to)) } catch { throw .io(operation: "rename", path: from, errno: error.rawValue) }
    }

    public func openCoordinationFile(_ path: String) throws(BoxwoodError) -> CoordinationFile {
        try PosixCoordinationFile(path: path)
    }
}

extension BoxwoodError {
    /// The engine's error for a failed open of one of the database's files.
    init(opening path: String, _ error: OpenFileError) {
        switch error {
        case let .system(code):
            self = .io(operation: "open", path: path, errno: code.rawValue)
        case .notARegularFile:
            self = .notABoxwoodDatabase(path: path, reason: "not a regular file (a FIFO, device, socket or directory where a database file belongs)")
        }
    }
}
