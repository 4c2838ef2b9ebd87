import BoxwoodPlatform

/// One claimed reader slot of a database's shared header, as ``ValueBox/readers(ofDatabaseAt:fileSystem:)`` reports
/// it (what LMDB's `mdb_stat -r` shows).
public struct ReaderInfo: Sendable, Equatable {
    /// The slot's index in the shared header.
    public var slot: Int
    /// The process holding the slot.
    public var processId: Int32
    /// The checkpoint generation its open snapshot reads, or nil while it reads nothing.
    public var pinnedGeneration: UInt64?
    /// When the slot was claimed (the value box opened), in seconds since 1970 UTC; nil when unknown.
    public var claimedAt: UInt64?
    /// Whether the holding process is still running (judged conservatively: a process that cannot be proven dead
    /// counts as alive).
    public var isAlive: Bool
}

/// The reader table of a database, read from outside: which processes have it open and which checkpoint
/// generation each pins, and freeing the slots of processes that died. Reads only the shared header `header`; a
/// database without one has no readers. Never takes the writer lock.
extension ValueBox {
    /// Every claimed reader slot of the database at `path`.
    public static func readers(ofDatabaseAt path: String, fileSystem: StorageFileSystem = PosixFileSystem.shared) throws(BoxwoodError) -> [ReaderInfo] {
        guard let header = try openExistingHeader(path, fileSystem: fileSystem) else { return [] }
        defer { header.file.close() }
        return header.claimedSlots().map { slot in
            ReaderInfo(slot: slot.slot, processId: ProcessIdentity(packed: slot.holder).pid,
                       pinnedGeneration: slot.pin == 0 ? nil : slot.pin - 1,
                       claimedAt: slot.claimedAt == 0 ? nil : slot.claimedAt,
                       isAlive: header.file.isHolderAlive(slot.holder))
        }
    }

    /// Frees every reader slot whose process is dead; returns how many. (Value boxes also free them lazily, when
    /// they claim a slot or a checkpoint meets a stale pin; this does it now, for a full table.)
    @discardableResult
    public static func clearStaleReaders(ofDatabaseAt path: String, fileSystem: StorageFileSystem = PosixFileSystem.shared) throws(BoxwoodError) -> Int {
        guard let header = try openExistingHeader(path, fileSystem: fileSystem) else { return 0 }
        defer { header.file.close() }
        return header.claimedSlots().filter { header.freeSlotOfDeadHolder($0.slot, holder: $0.holder) }.count
    }

    /// The shared header of the database at `path` when it has one of this build's format; nil when there is none
    /// (or a foreign one, whose slots mean nothing here). Throws when `path` is not a database.
    private static func openExistingHeader(_ path: String, fileSystem: StorageFileSystem) throws(BoxwoodError) -> SharedHeader? {
        switch fileSystem.kind(of: path) {
        case .directory?: break
        case nil: throw .notABoxwoodDatabase(path: path, reason: "no such directory")
        default: throw .notABoxwoodDatabase(path: path, reason: "not a directory")
        }
        guard fileSystem.kind(of: path + "/" + dataFileName) == .regular else { throw .notABoxwoodDatabase(path: path, reason: "no data file") }
        guard fileSystem.kind(of: path + "/" + headerFileName) == .regular else { return nil }
        let file = try fileSystem.openCoordinationFile(path + "/" + headerFileName)
        let header = SharedHeader(file: file)
        guard header.hasValidIdentity else {
            file.close()
            return nil
        }
        return header
    }
}
