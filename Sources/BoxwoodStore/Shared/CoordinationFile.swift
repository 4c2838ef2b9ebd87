import BoxwoodPlatform
import SystemPackage

/// The file that processes sharing a database coordinate through (`header` beside `data`): a small region
/// that every process maps read-write, the writer lock, and a way to tell whether the holder of a reader slot is
/// still alive. Its contents are volatile (see `SharedHeader`); nothing in it is needed to recover the database.
///
/// No lock is held outside a write transaction: reader slots are claimed with a compare-and-swap of the holder's
/// identity in shared memory, not with a lock (iOS suspends an app that holds a file lock in a shared container
/// with exception 0xdead10cc, the classic field failure of SQLite-based apps).
public protocol CoordinationFile: AnyObject {
    /// The path (for error messages and change notification).
    var path: String { get }
    /// The shared mapping, `SharedHeader.size` (8 KiB), readable and writable, zero-filled when new.
    var memory: UnsafeMutableRawPointer { get }
    /// Takes the writer lock if no other holder (another open, in this process or another) has it.
    func tryLockWriter() throws(BoxwoodError) -> Bool
    /// Releases the writer lock.
    func unlockWriter()
    /// A non-zero word naming this holder, stored in the reader slot it claims.
    var holderIdentity: UInt64 { get }
    /// Whether the holder that stored `identity` is still alive (decided without any lock).
    func isHolderAlive(_ identity: UInt64) -> Bool
    /// True when a process of the older lock scheme (shared-header version 1, which held a byte-range lock on its
    /// reader slot while open) still has the database open.
    func hasVersion1Holders() throws(BoxwoodError) -> Bool
    /// Unmaps and closes the file, releasing the writer lock if this holder has it.
    func close()
}

extension CoordinationFile {
    /// The size of the shared mapping every coordination file provides: the shared header (8 KiB).
    public static var mappingSize: Int { SharedHeader.size }
}

/// A coordination file on the real file system: an `mmap(MAP_SHARED)` of the file, the writer lock as a `flock`
/// on this open of it (the same meaning on Linux and Darwin: see `FileDescriptor.tryLockExclusively()`), and
/// process identities (pid plus start time) for reader-slot liveness.
public final class PosixCoordinationFile: CoordinationFile {
    public let path: String
    public let memory: UnsafeMutableRawPointer
    /// This process's identity, read once at open (it is stored at every writer-lock acquisition).
    public let holderIdentity = ProcessIdentity.current.packed
    private var owner: OwnedDescriptor?
    private let descriptor: FileDescriptor
    private var holdsWriterLock = false

    /// Opens (creating when missing, 0600) and maps the file at `path`. Throws `.io` when the file cannot be
    /// opened for writing (a read-only directory or file) or mapped.
    public init(path: String) throws(BoxwoodError) {
        self.path = path
        let owner: OwnedDescriptor
        do {
            owner = try FileSystemCalls.openFile(FilePath(path), create: true, readOnly: false)
        } catch {
            throw BoxwoodError(opening: path, error)
        }
        let descriptor = owner.descriptor
        do {
            // Growing with ftruncate is atomic and zero-fills; a racing opener doing the same is harmless.
            if try descriptor.fileSize() < UInt64(SharedHeader.size) { try descriptor.setFileSize(UInt64(SharedHeader.size)) }
        } catch {
            throw .io(operation: "ftruncate", path: path, errno: error.rawValue)
        }
        do {
            memory = try descriptor.mapShared(length: SharedHeader.size, writable: true)
        } catch {
            throw .io(operation: "mmap", path: path, errno: error.rawValue)
        }
        self.descriptor = descriptor
        self.owner = consume owner
    }

    deinit { close() }

    public func tryLockWriter() throws(BoxwoodError) -> Bool {
        do {
            guard try descriptor.tryLockExclusively() else { return false }
        } catch {
            throw .io(operation: "flock", path: path, errno: error.rawValue)
        }
        holdsWriterLock = true
        return true
    }

    public func unlockWriter() {
        guard holdsWriterLock else { return }
        descriptor.unlockExclusively()
        holdsWriterLock = false
    }

    public func isHolderAlive(_ identity: UInt64) -> Bool {
        ProcessIdentity(packed: identity).isAlive
    }

    public func hasVersion1Holders() throws(BoxwoodError) -> Bool {
        do {
            return try descriptor.hasByteRangeLocks(start: SharedHeader.version1LockBase, length: SharedHeader.version1LockSpan)
        } catch {
            throw .io(operation: "fcntl(getlk)", path: path, errno: error.rawValue)
        }
    }

    public func close() {
        guard let owner = owner.take() else { return }
        // Unlock explicitly: a flock lives as long as any descriptor of this open, and a child being spawned by
        // another thread holds copies of every descriptor until its exec closes them.
        unlockWriter()
        unmapShared(memory, length: SharedHeader.size)
        _ = try? owner.close()
    }
}
