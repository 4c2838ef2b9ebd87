import BoxwoodPlatform
import SystemPackage

/// How far a ``ValueBox/compact(progress:)`` has got.
public struct CompactionProgress: Sendable, Equatable {
    /// Entries copied into the new file so far.
    public var entriesCopied: Int
    /// Entries in the database.
    public var entriesTotal: Int
    /// Bytes written to the new file so far.
    public var bytesWritten: UInt64
}

/// What a compaction did.
public struct CompactionResult: Sendable, Equatable {
    /// Size of the data file when `compact` was called and after it, in bytes.
    public var bytesBefore: UInt64
    public var bytesAfter: UInt64
    /// Free pages (and pages freed since the last checkpoint) when `compact` was called; the new file has none.
    public var freePagesBefore: Int
    /// Entries copied.
    public var entries: Int
}

/// Compaction: rewrite the database into a new, minimal data file and swap it in atomically.
///
/// 1. Under the writer lock, checkpoint: every commit is in the pages and the WAL is empty.
/// 2. Write `data.compact`: each table's entries in key order into packed leaves (cells copied as they are,
///    compressed values stay compressed, overflow chains copied page by page), branch levels built bottom-up,
///    a new catalog, no freelist; both meta slots valid (generations g and g + 1, same roots, the WAL's
///    salt). fsync.
/// 3. `rename(data.compact, data)`, fsync the directory. The rename is the commit point: a crash before it
///    leaves the old file (and a stray `data.compact` that the next writer's open deletes), after it the new
///    one; the WAL is empty and carries the salt both files expect.
/// 4. Reopen `data` and publish generation g + 1. Readers in other value boxes keep reading the old file
///    through their open descriptor and mapping; when they next catch up they see the newer generation,
///    find that their file is older, and reopen `data` by path.
///
/// Writers wait for the writer lock meanwhile (up to their ``ValueBoxOptions/lockTimeout``).
///
/// Two rules keep the swap from escaping the directory (see "Files that are not the database's own" below):
/// - The files must be the directory's own: a `data`, `wal` or `header` that is a symbolic link is refused at
///   open and here (``BoxwoodError/symbolicLink(path:)``). The rename replaces the *name* `data`: through a link
///   it would swap the link for a plain file and leave the link's target — holding every value secure delete
///   scrubbed since — behind. Refusing is simpler and safer than resolving the link and swapping its target.
/// - `data.compact` is only ever a regular file compaction created: a directory (or FIFO, device…) of that name
///   is not removed — an open ignores it, so writers are never blocked, and `compact` fails with
///   ``BoxwoodError/compactionFileBlocked(path:)`` until someone removes it.
///
/// The new file gets the permission bits of the old `data` (0600 as Boxwood creates it, or whatever its owner
/// set), so compacting never widens or narrows who may read the database.
extension ValueBox {
    static let compactionFileName = "data.compact"

    /// Rewrites the database into a minimal file (no free pages, packed pages) and swaps it in atomically and
    /// crash-safely while readers keep reading. Not allowed inside a transaction or read snapshot, or on a
    /// read-only value box. `progress` is called every few thousand entries and at the end.
    @discardableResult
    public func compact(progress: ((CompactionProgress) -> Void)? = nil) throws(BoxwoodError) -> CompactionResult {
        try withFileMaintenanceLock { () throws(BoxwoodError) in
            try compactLocked(progress: progress, target: try sameKindDataFileLayout(), parameters: encryptionParameters)
        }
    }

    /// Writes the compacted copy with `target` (the current file's kind, or another key: see `rekey(to:)`) and swaps
    /// it in; from the swap on, this value box opens data files with `parameters`.
    func compactLocked(progress: ((CompactionProgress) -> Void)?, target: DataFileLayout,
                       parameters: ValueBoxEncryptionParameters?) throws(BoxwoodError) -> CompactionResult {
        let dataPath = path + "/" + ValueBox.dataFileName
        let temporaryPath = path + "/" + ValueBox.compactionFileName
        try refuseLinkedDatabaseFiles()
        if !isOurs(temporaryPath) { throw .compactionFileBlocked(path: temporaryPath) }
        let bytesBefore = try dataFile.size()
        let freeBefore = pager.freeSpace.freeOrReleasedCount
        try checkpoint()
        guard let wal, wal.endOffset == UInt64(WriteAheadLog.headerSize), wal.salt == meta.walSalt else {
            throw .corrupted(file: path, page: nil, reason: "the WAL is not empty after a checkpoint")
        }
        let modes = fileSystem as? FileSystemWithLinksAndModes
        let dataPermissions = try modes?.permissions(of: dataPath)
        try fileSystem.removeFile(temporaryPath)
        let output = try openStorageFile(temporaryPath, create: true, readOnly: false)
        var newMeta: MetaPage
        var entries = 0
        do {
            if let modes, let dataPermissions { try modes.setPermissions(temporaryPath, dataPermissions) }
            (newMeta, entries) = try writeCompactedFile(output, layout: target, progress: progress)
            try output.sync()
            output.close()
        } catch {
            output.close()
            try? fileSystem.removeFile(temporaryPath)
            throw error
        }
        // The swap. From here on the files change under other value boxes: mark the header until it publishes.
        header?.writerIsChangingFiles = true
        do {
            try fileSystem.rename(temporaryPath, to: dataPath)
            // The file under the name is the new one now, whatever fails next: recovery must open it.
            encryptionParameters = parameters
            try fileSystem.syncDirectory(path)
            try adoptDataFile(expecting: newMeta)
        } catch {
            failure = error
            throw error
        }
        newMeta = meta
        publishState()
        return CompactionResult(bytesBefore: bytesBefore, bytesAfter: pager.layout.fileSize(pageCount: newMeta.pageCount),
                                freePagesBefore: freeBefore, entries: entries)
    }

    /// Writes the compacted copy of the current (checkpointed) state into `output`, with `layout` (its encryption
    /// header first when encrypted), and returns its meta.
    private func writeCompactedFile(_ output: StorageFile, layout: DataFileLayout,
                                    progress: ((CompactionProgress) -> Void)?) throws(BoxwoodError) -> (MetaPage, Int) {
        try layout.writeHeader(to: output)
        let writer = PageRunWriter(file: output, layout: layout)
        let extents = ExtentWriter()
        let allocator = PageAllocator(firstNewPage: 2)
        // The new file's pages are written as its generation g + 1 (see the metas below).
        let generation = meta.generation + 1
        // Catalog totals come from the file (each < 2^62, see `Catalog.decode`): summed without trapping, for
        // progress reports only.
        let total = state.tables.values.reduce(0) { $0 &+ $1.entries }
        var copied = 0
        var newTables: [Int32: TableState] = [:]
        let cell = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
        defer { cell.deallocate() }
        for (id, var table) in state.tables.sorted(by: { $0.key < $1.key }) {
            let builder = TreeBuilder(output: writer, allocator: allocator, generation: generation)
            var cursor = Cursor(pager: pager, root: table.root)
            try cursor.seekFirst()
            while cursor.isValid {
                let (p, off) = cursor.cell
                let size = LeafPage.cellSize(p, off)
                cell.copyMemory(from: p + off, byteCount: size)
                if let first = LeafValue.overflowReference(p, off) {
                    let valueOffset = LeafValue.valueOffset(p, off) - off
                    let stored = Int(load64(p, LeafValue.valueOffset(p, off) + 8))
                    store64(cell, valueOffset, try copyOverflowChain(first: first, storedLength: stored, writer: writer, extents: extents, allocator: allocator,
                                                                     generation: generation))
                }
                let (key, keyLength) = cursor.key
                try builder.add(cell: cell, size: size, key: key, keyLength: keyLength)
                copied += 1
                if copied % 4096 == 0 {
                    progress?(CompactionProgress(entriesCopied: copied, entriesTotal: total, bytesWritten: writer.bytesWritten + extents.bytesWritten))
                }
                try cursor.next()
            }
            table.root = try builder.finish()
            newTables[id] = table
        }

        // The catalog, built the same way.
        let catalog = TreeBuilder(output: writer, allocator: allocator, generation: generation)
        for (id, table) in newTables.sorted(by: { $0.key < $1.key }) {
            store16(cell, 0, 4)
            cell.storeBytes(of: 0, toByteOffset: 2, as: UInt8.self)
            store32(cell, 3, UInt32(Catalog.valueSize))
            (cell + LeafPage.cellHeader).storeBytes(of: Catalog.key(id), as: UInt32.self)
            Catalog.encode(table, into: cell + LeafPage.cellHeader + 4)
            try catalog.add(cell: cell, size: LeafPage.cellHeader + 4 + Catalog.valueSize, key: cell + LeafPage.cellHeader, keyLength: 4)
        }
        let catalogRoot = try catalog.finish()
        try writer.flush()

        // Both meta slots: generation g + 1 (the new state) and g (the same state, so that the file never
        // depends on a meta slot that was not written).
        let newMeta = MetaPage(generation: generation, pageCount: allocator.nextPage, catalogRoot: catalogRoot,
                               freelistHead: 0, freeCount: 0, lastSequence: state.version, walSalt: meta.walSalt,
                               masterClientId: state.masterClientId)
        var older = newMeta
        older.generation = meta.generation
        for m in [older, newMeta] { try writeMeta(m, to: output, layout: layout, sync: false) }   // the file is synced before its rename
        progress?(CompactionProgress(entriesCopied: copied, entriesTotal: total, bytesWritten: layout.fileSize(pageCount: 2) + writer.bytesWritten))
        return (newMeta, copied)
    }

    /// Copies an overflow value (a chain or an extent) into consecutive new pages written as `generation`: an extent
    /// when the new file can hold one (`ExtentPage.holds`), else a chain; returns the first page's disk reference.
    private func copyOverflowChain(first: UInt64, storedLength: Int, writer: PageRunWriter, extents: ExtentWriter, allocator: PageAllocator,
                                   generation: UInt64) throws(BoxwoodError) -> UInt64 {
        let stored = try LeafValue.storedBytes(pager, first: first, length: storedLength)
        defer { stored.release() }
        if ExtentPage.holds(storedLength, layout: writer.layout) {
            let head = allocator.allocateConsecutive(ExtentPage.pageCount(forStored: storedLength))
            try writer.writeExtent(stored.pointer, count: storedLength, head: head, large: extents)
            return head   // a plain file's disk reference is the page number
        }
        let numbers = try OverflowPage.writeChain(stored.pointer, count: storedLength, allocate: {
            writer.layout.reference(to: allocator.allocateConsecutive(1), writtenBy: generation)
        }) { (page, reference) throws(BoxwoodError) in try writer.write(page, as: reference) }
        return numbers[0]
    }

    /// Opens the data file the path names now (after a compaction swapped it in) in place of the current one,
    /// and loads its state; the WAL stays (it is empty and carries the salt the new meta expects).
    func adoptDataFile(expecting expected: MetaPage) throws(BoxwoodError) {
        let file = try openStorageFile(path + "/" + ValueBox.dataFileName, create: false, readOnly: options.readOnly)
        let chosen: MetaPage
        let layout: DataFileLayout
        do {
            let size = try file.size()
            layout = try dataFileLayout(of: file, size: size)
            chosen = try readMeta(file, size: size, layout: layout).0
        } catch {
            file.close()
            throw error
        }
        guard chosen == expected else {
            file.close()
            throw .corrupted(file: file.path, page: nil, reason: "the compacted file does not hold the meta that was written")
        }
        try installDataFile(file, layout: layout, meta: chosen)
    }
}

// MARK: Files that are not the database's own

extension ValueBox {
    /// Refuses a database whose `data`, `wal` or `header` is a symbolic link (see the rules above
    /// ``ValueBox/compact(progress:)``): called by every open and by `compact`.
    func refuseLinkedDatabaseFiles() throws(BoxwoodError) {
        guard let links = fileSystem as? FileSystemWithLinksAndModes else { return }
        for name in [ValueBox.dataFileName, ValueBox.walFileName, ValueBox.headerFileName] {
            let filePath = path + "/" + name
            if try links.isSymbolicLink(filePath) { throw .symbolicLink(path: filePath) }
        }
    }

    /// Removes the unfinished `data.compact` a compaction that did not reach its rename left behind (a writer's
    /// open does this, holding the writer lock, so nobody is compacting). Only a regular file there can be
    /// compaction's (a link is unlinked, never followed): anything else is left alone, so that it cannot stop
    /// writers from opening the database.
    func removeStrayCompactionFile() throws(BoxwoodError) {
        let temporaryPath = path + "/" + ValueBox.compactionFileName
        if isOurs(temporaryPath) { try fileSystem.removeFile(temporaryPath) }
    }

    /// Whether compaction may remove and create `temporaryPath`: nothing is there, or a regular file (or a link
    /// to one, or to nothing — removing unlinks the link only).
    private func isOurs(_ temporaryPath: String) -> Bool {
        switch fileSystem.kind(of: temporaryPath) {
        case nil, .regular?: return true
        case .directory?, .other?: return false
        }
    }
}

/// What a file system knows of symbolic links and permission bits. The real one (through the platform layer)
/// does; a file system that models neither — the simulated disk — has no links to refuse and no modes to keep.
protocol FileSystemWithLinksAndModes {
    /// Whether the entry `path` itself is a symbolic link (false when nothing is there).
    func isSymbolicLink(_ path: String) throws(BoxwoodError) -> Bool
    /// The permission bits of the entry `path`, nil when nothing is there.
    func permissions(of path: String) throws(BoxwoodError) -> FilePermissions?
    /// Sets the permission bits of the file `path`.
    func setPermissions(_ path: String, _ permissions: FilePermissions) throws(BoxwoodError)
}

extension PosixFileSystem: FileSystemWithLinksAndModes {
    func isSymbolicLink(_ path: String) throws(BoxwoodError) -> Bool {
        do { return try FileSystemCalls.entryStatus(of: FilePath(path))?.isSymbolicLink ?? false } catch { throw .io(operation: "lstat", path: path, errno: error.rawValue) }
    }

    func permissions(of path: String) throws(BoxwoodError) -> FilePermissions? {
        do { return try FileSystemCalls.entryStatus(of: FilePath(path))?.permissions } catch { throw .io(operation: "lstat", path: path, errno: error.rawValue) }
    }

    func setPermissions(_ path: String, _ permissions: FilePermissions) throws(BoxwoodError) {
        do { try FileSystemCalls.setPermissions(FilePath(path), permissions) } catch { throw .io(operation: "chmod", path: path, errno: error.rawValue) }
    }
}
