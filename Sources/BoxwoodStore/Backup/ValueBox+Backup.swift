/// How far a ``ValueBox/backup(to:progress:)`` has got.
public struct BackupProgress: Sendable, Equatable {
    /// Entries copied so far.
    public var entriesCopied: Int
    /// Entries in the snapshot being copied.
    public var entriesTotal: Int
}

/// What a ``ValueBox/backup(to:progress:)`` wrote.
public struct BackupResult: Sendable, Equatable {
    /// The source's transaction state version at the snapshot the copy holds: the copy has every commit up to
    /// it and none after. (The copy counts its own commits from 1, so its own version differs.)
    public var version: UInt64
    /// Tables copied (empty ones and the engine's own, such as a full-text index's, included).
    public var tables: Int
    /// Entries copied.
    public var entries: Int
    /// Size of the copy's data file, in bytes.
    public var bytes: UInt64
}

/// Hot backup: a consistent copy of the database, taken while other value boxes (in this process or others) keep
/// committing.
///
/// 1. Refuse a destination that exists (``BoxwoodError/destinationExists(path:)``): nothing is ever written over it.
/// 2. Create `DEST.partial-<random>` beside it and open a new database there.
/// 3. Inside one read snapshot (``ValueBox/withSnapshot(_:)``: a reader slot pins the checkpoint generation, so no
///    checkpoint reuses a page the copy still reads, and no writer lock is taken — writers in other processes go on
///    committing), copy every table entry by entry in key order, engine tables included, plus the MasterClientId,
///    in transactions of a few MiB; then checkpoint and close the copy.
/// 4. Remove the copy's `header` (the shared header is volatile and recreated by the next open), fsync `data`,
///    `wal` and the partial directory, then `rename` it to DEST and fsync the parent directory. The rename is the
///    commit point: a process killed before it leaves no DEST (only a `.partial-` directory, which is never
///    opened as the backup), after it a complete one. When the directory sync after the rename fails, the rename is
///    taken back: an error from `backup` always means there is no DEST.
///
/// The copy is always compact (packed pages, no free list), like `compact` would leave it: it is written from
/// the snapshot's entries, not page by page, because commits not yet checkpointed live in the source's memory
/// and WAL, not in its pages.
///
/// A destination that appears between the check and the rename: `rename(2)` replaces only an empty directory
/// and fails on any other; the backup then fails and removes its partial directory.
extension ValueBox {
    /// Bytes of keys and values per transaction of the copy.
    static let backupTransactionBytes = 4 << 20

    /// Writes a consistent copy of the database, as of one snapshot, to the new directory `destination`, without
    /// blocking writers. Not allowed inside a transaction or a read snapshot (the copy must be of committed state
    /// the call chooses). `progress` is called every few thousand entries and at the end. The copy is encrypted
    /// under the same key when this database is (with a file id of its own), plain otherwise.
    @discardableResult
    public func backup(to destination: String, progress: ((BackupProgress) -> Void)? = nil) throws(BoxwoodError) -> BackupResult {
        try backup(to: destination, encryption: encryption, progress: progress)
    }

    /// Writes a copy encrypted under `encryptionParameters` (Postbox's `exportEncrypted(to:encryptionParameters:)`),
    /// or a plain copy when it is nil, whatever this database's own encryption; otherwise as ``backup(to:progress:)``.
    @discardableResult
    public func exportEncrypted(to destination: String, encryptionParameters: ValueBoxEncryptionParameters?,
                                progress: ((BackupProgress) -> Void)? = nil) throws(BoxwoodError) -> BackupResult {
        try backup(to: destination, encryption: encryptionParameters, progress: progress)
    }

    private func backup(to destination: String, encryption: ValueBoxEncryptionParameters?,
                        progress: ((BackupProgress) -> Void)?) throws(BoxwoodError) -> BackupResult {
        if isClosed { throw .closed }
        if transaction != nil { throw .transactionAlreadyActive }
        if isPinned { throw .transactionAlreadyActive }
        let destination = ValueBox.trimmingTrailingSlashes(destination)
        guard fileSystem.kind(of: destination) == nil else { throw .destinationExists(path: destination) }
        var random = SplitMix64(seed: UInt64.random(in: 1...UInt64.max))
        let partial = destination + ".partial-" + String(random.next(), radix: 16)
        try fileSystem.createDirectory(partial)
        do throws(BoxwoodError) {
            let result = try withSnapshot { () throws(BoxwoodError) in try writeBackup(into: partial, encryption: encryption, progress: progress) }
            try fileSystem.removeFile(partial + "/" + ValueBox.headerFileName)
            for name in [ValueBox.dataFileName, ValueBox.walFileName] {
                let file = try fileSystem.open(partial + "/" + name, create: false, readOnly: true)
                defer { file.close() }
                try file.sync()
            }
            try fileSystem.syncDirectory(partial)
            guard fileSystem.kind(of: destination) == nil else { throw .destinationExists(path: destination) }
            try fileSystem.rename(partial, to: destination)
            do {
                try fileSystem.syncDirectory(ValueBox.parentDirectory(of: destination))
            } catch {
                // The rename may not be durable: take it back, so that a failed backup never leaves a destination.
                try? fileSystem.rename(destination, to: partial)
                throw error
            }
            return result
        } catch {
            removePartialBackup(partial)
            throw error
        }
    }

    /// Copies the pinned snapshot into a new database at `directory`; returns what it copied.
    private func writeBackup(into directory: String, encryption: ValueBoxEncryptionParameters?,
                             progress: ((BackupProgress) -> Void)?) throws(BoxwoodError) -> BackupResult {
        var copyOptions = ValueBoxOptions()
        copyOptions.encryption = encryption
        copyOptions.compressionThreshold = options.compressionThreshold
        copyOptions.compressionLimit = options.compressionLimit
        copyOptions.lockTimeout = options.lockTimeout
        let copy = try ValueBox(path: directory, options: copyOptions, fileSystem: fileSystem)
        do throws(BoxwoodError) {
            let snapshot = state
            let total = snapshot.tables.values.reduce(0) { $0 &+ $1.entries }
            var copied = 0
            var pendingBytes = 0
            var failure: BoxwoodError?
            try copy.begin()
            for (id, table) in snapshot.tables.sorted(by: { $0.key < $1.key }) {
                let descriptor = ValueBoxTable(id: id, keyType: table.keyType)
                var entries = 0
                try walkEntriesLending(descriptor) { key, value in
                    do throws(BoxwoodError) {
                        try copy.perform(.set(table: id, keyType: table.keyType, key: UnsafeRawBufferPointer(start: key.0, count: key.1), value: value))
                        entries += 1
                        copied += 1
                        pendingBytes += key.1 + value.count
                        if pendingBytes >= ValueBox.backupTransactionBytes {
                            try copy.commit()
                            try copy.begin()
                            pendingBytes = 0
                        }
                        if copied % 4096 == 0 { progress?(BackupProgress(entriesCopied: copied, entriesTotal: total)) }
                        return true
                    } catch {
                        failure = error
                        return false
                    }
                }
                if let failure { throw failure }
                if entries == 0 { try copy.createEmptyTable(descriptor) }
            }
            if snapshot.masterClientId != 0 { try copy.perform(.setMasterClientId(snapshot.masterClientId)) }
            try copy.commit()
            try copy.checkpoint()
            let bytes = try copy.dataFile.size()
            try copy.close()
            progress?(BackupProgress(entriesCopied: copied, entriesTotal: total))
            return BackupResult(version: snapshot.version, tables: snapshot.tables.count, entries: copied, bytes: bytes)
        } catch {
            if copy.transaction != nil { copy.abort() }
            try? copy.close()
            throw error
        }
    }

    /// Makes `table` exist with no entries (a set and a remove of one key in the open transaction).
    private func createEmptyTable(_ table: ValueBoxTable) throws(BoxwoodError) {
        var key: UInt64 = 0
        try withUnsafeBytes(of: &key) { (raw) throws(BoxwoodError) in
            let placeholder = UnsafeRawBufferPointer(rebasing: raw[..<(table.keyType == .int64 ? 8 : 1)])
            try perform(.set(table: table.id, keyType: table.keyType, key: placeholder, value: UnsafeRawBufferPointer(start: nil, count: 0)))
            try perform(.remove(table: table.id, key: placeholder, secure: false))
        }
    }

    /// Removes what a failed backup left in its partial directory (best effort: the directory is never opened as a
    /// backup, and its name says what it is).
    private func removePartialBackup(_ directory: String) {
        for name in [ValueBox.dataFileName, ValueBox.walFileName, ValueBox.headerFileName, ValueBox.compactionFileName] {
            try? fileSystem.removeFile(directory + "/" + name)
        }
        try? fileSystem.removeDirectory(directory)
    }

    /// `path` without trailing slashes (but `/` stays).
    static func trimmingTrailingSlashes(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1 && path.hasSuffix("/") { path = path.dropLast() }
        return String(path)
    }

    /// The directory holding `path` (`.` for a bare name).
    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
