/// The seam every byte of engine I/O passes through. `PosixStorage` is the real implementation; a
/// fault-injecting implementation (``SimulatedDisk``: power cuts, torn writes, I/O errors) plugs in here
/// without the engine knowing.
public protocol StorageFile: AnyObject {
    /// The path the file was opened at (for error messages).
    var path: String { get }
    /// Whether ``sync()`` and ``dataSync()`` also flush the drive's own cache (`F_FULLFSYNC` on Darwin; Linux's
    /// `fsync` does so already). The engine sets it for `full` durability.
    var flushesDriveCache: Bool { get set }
    /// Reads up to `count` bytes at `offset`; returns the number read (short at end of file).
    func read(into buffer: UnsafeMutableRawPointer, count: Int, offset: UInt64) throws(BoxwoodError) -> Int
    /// Writes all `count` bytes at `offset`, extending the file when needed.
    func write(_ buffer: UnsafeRawPointer, count: Int, offset: UInt64) throws(BoxwoodError)
    /// Makes all written data and the file size durable (`fsync`).
    func sync() throws(BoxwoodError)
    /// Makes written data durable (`fdatasync`; on Linux this includes a size change needed to read it back).
    func dataSync() throws(BoxwoodError)
    /// The current size in bytes.
    func size() throws(BoxwoodError) -> UInt64
    /// Sets the size in bytes.
    func truncate(to size: UInt64) throws(BoxwoodError)
    /// Maps `length` bytes read-only and shared; bytes past the end of the file must not be touched.
    func map(length: Int) throws(BoxwoodError) -> UnsafeRawPointer
    /// Removes a mapping made by `map`.
    func unmap(_ address: UnsafeRawPointer, length: Int)
    /// Closes the file.
    func close()
}

/// Directory-level operations that the engine needs for crash safety (creating files durably).
public protocol StorageFileSystem: AnyObject {
    /// Opens (and optionally creates) a file for reading and, unless `readOnly`, writing.
    func open(_ path: String, create: Bool, readOnly: Bool) throws(BoxwoodError) -> StorageFile
    /// The kind of object at `path`, or nil when nothing is there.
    func kind(of path: String) -> FileKind?
    /// Creates a directory (not an error if it exists).
    func createDirectory(_ path: String) throws(BoxwoodError)
    /// fsyncs a directory so that entries created or renamed in it are durable.
    func syncDirectory(_ path: String) throws(BoxwoodError)
    /// Removes a file (not an error if it is missing).
    func removeFile(_ path: String) throws(BoxwoodError)
    /// Atomically renames a file or a directory.
    func rename(_ from: String, to: String) throws(BoxwoodError)
    /// Removes an empty directory (not an error if it is missing).
    func removeDirectory(_ path: String) throws(BoxwoodError)
    /// Opens (creating when missing) the coordination file that processes sharing a database map and lock
    /// (see ``CoordinationFile``).
    func openCoordinationFile(_ path: String) throws(BoxwoodError) -> CoordinationFile
    /// True when two threads may use its files at once (one writing and syncing the data file while another appends
    /// to the WAL and reads the mapping): background checkpoints need it. False by default.
    var allowsConcurrentFileAccess: Bool { get }
}

extension StorageFileSystem {
    public var allowsConcurrentFileAccess: Bool { false }
}

/// What a path names.
public enum FileKind: Sendable {
    case regular
    case directory
    case other
}
