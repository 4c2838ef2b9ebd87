/// Opening and recovery: pick the newest valid meta page, load the catalog and freelist, replay the WAL.
extension ValueBox {
    func open() throws(BoxwoodError) {
        let readOnly = options.readOnly
        switch fileSystem.kind(of: path) {
        case nil:
            if readOnly { throw .notABoxwoodDatabase(path: path, reason: "no such directory") }
            try fileSystem.createDirectory(path)
            try fileSystem.syncDirectory(parentDirectory(of: path))
        case .directory:
            break
        case .regular, .other:
            throw .notABoxwoodDatabase(path: path, reason: "not a directory (a Boxwood database is a directory holding 'data' and 'wal')")
        }
        try refuseLinkedDatabaseFiles()  // see ValueBox+Compaction.swift
        let dataPath = path + "/" + ValueBox.dataFileName
        let walPath = path + "/" + ValueBox.walFileName
        let dataExisted = fileSystem.kind(of: dataPath) != nil
        if !dataExisted && readOnly { throw .notABoxwoodDatabase(path: path, reason: "no data file") }
        var file = try openStorageFile(dataPath, create: !readOnly, readOnly: readOnly)
        dataFile = file
        if !dataExisted { try fileSystem.syncDirectory(path) }
        if header == nil { try attachHeader() }

        // Another value box may be writing right now. Then the shared header it maintains is trusted and this
        // one loads the published snapshot without waiting. Otherwise (no other writer, or a header that is
        // missing, damaged or stale) the files are read under the writer lock, repaired if a writer died, and
        // the header is rebuilt from them.
        var tookLock = false
        if let header, !holdsWriterLock {
            if !readOnly, try header.tryLockWriter() {
                tookLock = true
            } else {
                if header.hasValidIdentity, let (published, sequence) = header.read(), try openPublishedSnapshot(published) {
                    seenHeaderSequence = sequence
                    versionAtLastTransaction = state.version
                    return
                }
                try header.lockWriter(timeout: options.lockTimeout)
                tookLock = true
            }
            holdsWriterLock = true
        }
        defer { if tookLock && failure == nil { unlockWriter() } }
        if tookLock && dataExisted {
            // A compaction may have renamed a new file over `data` between the open above and taking the lock
            // (it swaps files only under the lock): read the file the path names now, or its meta would not
            // match the WAL the compaction reset.
            file = try openStorageFile(dataPath, create: false, readOnly: readOnly)
            dataFile = file
        }
        let logIsIntact = try openFromFiles(file, dataPath: dataPath, walPath: walPath)
        publishState()
        if logIsIntact, !readOnly { header?.intactLogBoot = BootDigest.current }
        try claimReaderSlotIfNeeded()
        versionAtLastTransaction = state.version
    }

    /// Loads the snapshot the header publishes (pinned while loading). False when it does not match the files.
    private func openPublishedSnapshot(_ published: SharedHeader.Published) throws(BoxwoodError) -> Bool {
        guard let header, let readerSlot else { return false }
        _ = header.pin(readerSlot)
        defer { header.unpin(readerSlot) }
        guard try loadSnapshot(published) else { return false }
        return try filesEndAt(published)
    }

    /// True when nothing in the files is newer than `published`, so that the snapshot it describes is the newest
    /// commit: its meta is the one loaded, the WAL on disk is that meta's log, and no intact record of that log
    /// starts where it says the log ends.
    ///
    /// The header is another process's file and only a hint. A stale one (an older state of this database) or a
    /// foreign one (copied from another database) must not decide what an open reads; when it disagrees the
    /// open reads the files under the writer lock and publishes what they hold. A live writer between appending
    /// a record and publishing it also disagrees for that moment: the open then waits for its commit to finish.
    private func filesEndAt(_ published: SharedHeader.Published) throws(BoxwoodError) -> Bool {
        guard meta.generation == published.generation, meta.walSalt == published.walSalt else { return false }
        guard let wal else { return true }
        guard case let .valid(salt, _) = try wal.readHeader(), salt == published.walSalt else { return false }
        return try !wal.hasIntactRecord(at: published.walEnd)
    }

    /// Reads the durable state: initializes a new database, picks the newest meta, loads the trees and
    /// replays the WAL (truncating a torn tail unless read-only). Returns true when the WAL is now intact: it
    /// ended cleanly, was reset, or its torn tail was cut.
    private func openFromFiles(_ file: StorageFile, dataPath: String, walPath: String) throws(BoxwoodError) -> Bool {
        let readOnly = options.readOnly
        var size = try file.size()
        if size == 0 && readOnly {
            // A read-only open must not write: an empty data file is not a database until a writer initializes it.
            throw .notABoxwoodDatabase(path: path, reason: "the data file is empty")
        }
        var layout = try dataFileLayout(of: file, size: size)
        let metaBytes = layout.fileSize(pageCount: 2)
        if size <= metaBytes && !readOnly {
            // No checkpoint ever ran (its pages would follow the meta pages). A file shorter than its meta
            // pages, or with a meta page that does not validate, is either a creation interrupted before
            // its meta pages were durable or a damaged file. The WAL tells them apart: it is created only
            // after the meta pages are durable, so a WAL with a valid header or records means the database
            // existed. Without one there is nothing to lose, and the database is initialized again.
            let evidence = try walEvidence(walPath)
            var interrupted = false
            if evidence == nil, try holdsOnlyCreationBytes(file, size: size, layout: layout) {
                interrupted = size < metaBytes
                if !interrupted { interrupted = !(try bothMetaPagesValid(file, layout: layout)) }
            }
            if interrupted {
                if size > 0 { try file.truncate(to: 0) }
                layout = newDataFileLayout()
                try initializeDataFile(file, layout: layout)
                size = try file.size()
            } else if let evidence, size < metaBytes {
                throw .corrupted(file: dataPath, page: nil,
                                 reason: "the data file is \(size) bytes, shorter than its two meta pages, but \(evidence)")
            }
        }
        // A compaction that did not reach its rename left its unfinished file behind; nobody else can be
        // compacting now (this open holds the writer lock).
        if !readOnly { try removeStrayCompactionFile() }  // only a regular file: see ValueBox+Compaction.swift
        let (chosen, other) = try readMeta(file, size: size, layout: layout)
        if size < layout.fileSize(pageCount: chosen.pageCount) {
            throw .corrupted(file: dataPath, page: nil,
                             reason: "file is \(size) bytes but the meta accounts for \(chosen.pageCount) pages (truncated?)")
        }
        try installDataFile(file, layout: layout, meta: chosen)

        let walExisted = fileSystem.kind(of: walPath) != nil
        wal = nil
        if readOnly && !walExisted { return false }
        let walFile = try openStorageFile(walPath, create: !readOnly, readOnly: readOnly)
        let log = WriteAheadLog(file: walFile, keys: layout.keys)
        wal = log
        if !walExisted { try fileSystem.syncDirectory(path) }
        return try recover(log, otherMeta: other)
    }

    /// What the WAL at `walPath` proves about a database having been created (nil when nothing).
    private func walEvidence(_ walPath: String) throws(BoxwoodError) -> String? {
        guard fileSystem.kind(of: walPath) == .regular else { return nil }
        let walFile = try openStorageFile(walPath, create: false, readOnly: true)
        defer { walFile.close() }
        let walSize = try walFile.size()
        if walSize > UInt64(WriteAheadLog.headerSize) { return "the WAL holds \(walSize) bytes of commits" }
        if case .valid = try WriteAheadLog(file: walFile).readHeader() { return "the WAL beside it was initialized" }
        return nil
    }

    private func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// Writes the two meta pages of an empty database (after the encryption header of an encrypted one) and
    /// makes them durable.
    private func initializeDataFile(_ file: StorageFile, layout: DataFileLayout) throws(BoxwoodError) {
        let page = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
        defer { page.deallocate() }
        let salt = UInt64.random(in: 1...UInt64.max)
        try layout.writeHeader(to: file)
        // The header is durable before the meta slots are written: a creation cut short then leaves either no
        // header (zeros: created again) or the header and torn slots (created again, see `holdsOnlyCreationBytes`),
        // never ciphertext behind a lost header.
        if layout.isEncrypted && options.durability != .off { try file.sync() }
        for generation in [UInt64(0), 1] {
            let m = MetaPage(generation: generation, pageCount: 2, catalogRoot: 0, freelistHead: 0, freeCount: 0,
                             lastSequence: 0, walSalt: salt)
            m.encode(into: page)
            try layout.write(page, as: m.slot, to: file)
        }
        if options.durability != .off { try file.sync() }
    }

    /// True when the first `size` bytes (at most the header and two meta pages) are what creating the file can
    /// leave. Plain: each page's first sector zero or starting with the meta header, every other sector zero.
    /// Encrypted: the header block zero except the fields of its two copies (the meta slots after it are
    /// ciphertext). A foreign file fails this and is never overwritten.
    private func holdsOnlyCreationBytes(_ file: StorageFile, size: UInt64, layout: DataFileLayout) throws(BoxwoodError) -> Bool {
        guard layout.isEncrypted else { return try holdsOnlyMetaSectors(file, size: size) }
        let (block, count) = try EncryptionHeader.readBlock(of: file)
        return EncryptionHeader.holdsOnlyHeaderBytes(block, count: count)
    }

    private func holdsOnlyMetaSectors(_ file: StorageFile, size: UInt64) throws(BoxwoodError) -> Bool {
        let count = Int(size)
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        defer { bytes.deallocate() }
        guard try file.read(into: bytes, count: count, offset: 0) == count else { return false }
        var sector = 0
        while sector * 512 < count {
            let start = sector * 512
            let end = min(count, start + 512)
            if start % PageLayout.pageSize == 0 && end - start >= 40
                && MetaPage.magic.indices.allSatisfy({ bytes.load(fromByteOffset: start + 32 + $0, as: UInt8.self) == MetaPage.magic[$0] }) {
                sector += 1
                continue
            }
            for i in start..<end where bytes.load(fromByteOffset: i, as: UInt8.self) != 0 { return false }
            sector += 1
        }
        return true
    }

    private func bothMetaPagesValid(_ file: StorageFile, layout: DataFileLayout) throws(BoxwoodError) -> Bool {
        let page = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
        defer { page.deallocate() }
        for slot in [UInt64(0), 1] {
            guard case .read = try layout.read(slot, of: file, into: page), case .valid = MetaPage.decode(page, slot: slot) else { return false }
        }
        return true
    }

    /// Reads both meta pages (through `layout`) and picks the valid one with the higher generation.
    /// Returns the meta to use and what the other slot holds.
    func readMeta(_ file: StorageFile, size: UInt64, layout: DataFileLayout) throws(BoxwoodError) -> (MetaPage, MetaPage.DecodeResult) {
        let page = UnsafeMutableRawPointer.allocate(byteCount: PageLayout.pageSize, alignment: 16)
        defer { page.deallocate() }
        var results: [MetaPage.DecodeResult] = []
        for slot in [UInt64(0), 1] {
            switch try layout.read(slot, of: file, into: page) {
            case .read, .short: results.append(MetaPage.decode(page, slot: slot))
            case .unauthenticated: results.append(.damaged("the encrypted meta page does not authenticate"))
            }
        }
        var best: MetaPage? = nil
        for case let .valid(m) in results where best.map({ m.generation > $0.generation }) ?? true { best = m }
        if let best { return (best, results[Int(1 - best.slot)]) }
        let dataPath = file.path
        for case let .unsupportedVersion(v) in results {
            throw .unsupportedFormatVersion(path: dataPath, found: v, supported: MetaPage.formatVersion)
        }
        if results.allSatisfy({ if case .foreign = $0 { return true } else { return false } }) {
            throw .notABoxwoodDatabase(path: path, reason: size < layout.fileSize(pageCount: 2)
                ? "data file is \(size) bytes, shorter than its two meta pages" : "the data file has no Boxwood header")
        }
        if size < layout.fileSize(pageCount: 2) {
            throw .corrupted(file: dataPath, page: nil, reason: "data file is \(size) bytes, shorter than its two meta pages (truncated)")
        }
        throw .checksumMismatch(file: dataPath, page: 0, offset: layout.offset(of: 0))
    }

    /// Makes `file` (with its newest meta `chosen`) the data file of this value box and loads its trees.
    /// `layout` is the file's (`dataFileLayout(of:size:)`); the WAL follows its keys.
    func installDataFile(_ file: StorageFile, layout: DataFileLayout, meta chosen: MetaPage) throws(BoxwoodError) {
        // Mapped before anything is replaced: when mapping fails the value box keeps its file and pager (a
        // replacement file is closed), so that `pager` is never left nil (see its declaration).
        let pager = Pager(file: file, layout: layout, validatePage: { page, pageCount in PageType.problem(page, pageCount: pageCount) })
        pager.pageCount = chosen.pageCount
        do { try pager.ensureMapped(pages: chosen.pageCount) } catch {
            if file !== dataFile { file.close() }
            throw error
        }
        if file !== dataFile {
            let old = dataFile
            self.pager = nil  // unmaps the old file before it is closed
            dataFile = file
            old?.close()
        }
        self.pager = pager
        wal?.keys = layout.keys
        meta = chosen
        try loadFreelist()
        try loadCatalog()
        state.version = chosen.lastSequence
        state.masterClientId = chosen.masterClientId
        state.secureDeletePending = chosen.scrubPending
    }

    /// Loads the durable freelist into the pager.
    func loadFreelist() throws(BoxwoodError) {
        var free: [UInt64] = []
        var listPages: [UInt64] = []
        var page = meta.freelistHead
        while page != 0 {
            if listPages.count > Int(meta.pageCount) { throw .corrupted(file: dataFile.path, page: page.diskPageNumber, reason: "freelist loops") }
            guard let list = FreelistPage(try pager.diskPage(page)) else {
                throw .corrupted(file: dataFile.path, page: page.diskPageNumber, reason: "expected a freelist page")
            }
            listPages.append(page.diskPageNumber)
            for i in 0..<list.entryCount {
                // Entries are bare page numbers (no write tag).
                let entry = list.entry(i)
                guard entry >= 2, entry < meta.pageCount else {
                    throw .corrupted(file: dataFile.path, page: page.diskPageNumber, reason: "freelist entry \(entry) out of range")
                }
                free.append(entry)
            }
            page = list.next
        }
        guard UInt64(free.count) == meta.freeCount else {
            throw .corrupted(file: dataFile.path, page: meta.freelistHead.diskPageNumber, reason: "freelist holds \(free.count) pages, meta says \(meta.freeCount)")
        }
        pager.freeSpace.install(free: free, freelistPages: listPages, catalogPages: try catalogTreePages(meta.catalogRoot))
    }

    /// The page numbers of the catalog tree at `root` (a catalog holds no overflow values).
    func catalogTreePages(_ root: PageRef) throws(BoxwoodError) -> [UInt64] {
        var pages: [UInt64] = []
        try BTree.visit(pager, root: root, page: { (ref, _, _) throws(BoxwoodError) in pages.append(ref.diskPageNumber) }, overflow: { (_) throws(BoxwoodError) in
            throw BoxwoodError.corrupted(file: self.dataFile.path, page: nil, reason: "overflow value in the catalog")
        })
        return pages
    }

    /// Loads the catalog tree into `state.tables`.
    func loadCatalog() throws(BoxwoodError) {
        state.tables = [:]
        var cursor = Cursor(pager: pager, root: meta.catalogRoot)
        try cursor.seekFirst()
        while cursor.isValid {
            let (p, off) = cursor.cell
            let (key, keyLength) = cursor.key
            guard keyLength == 4, !LeafValue.isOverflow(p, off), LeafValue.codec(p, off) == 0,
                  let table = Catalog.decode(p + LeafValue.valueOffset(p, off), count: LeafPage.valueLength(p, off)) else {
                throw .corrupted(file: dataFile.path, page: nil, reason: "malformed catalog entry")
            }
            state.tables[Catalog.id(fromKey: key)] = table
            try cursor.next()
        }
    }

    /// Replays the WAL records committed after the meta, truncating a torn tail. Returns true when the log is
    /// intact afterwards (see `openFromFiles`).
    private func recover(_ log: WriteAheadLog, otherMeta: MetaPage.DecodeResult) throws(BoxwoodError) -> Bool {
        let header = try log.readHeader()
        var headerSalt: UInt64? = nil
        var logVersion = WriteAheadLog.version
        if case let .valid(salt, version) = header { headerSalt = salt; logVersion = version }
        var previousSalt: UInt64? = nil
        if case let .valid(previous) = otherMeta, previous.generation + 1 == meta.generation { previousSalt = previous.walSalt }
        if let headerSalt, headerSalt != meta.walSalt, headerSalt != previousSalt {
            // A log with a valid header belongs either to the newest meta or, after a crash between a
            // checkpoint's meta flip and its log reset, to the meta before it. Any other log was reset by a
            // checkpoint whose meta is not readable (damaged): falling back to an older meta would silently
            // drop that checkpoint and every commit since.
            let slot = 1 - meta.slot
            if case .damaged = otherMeta {
                throw .checksumMismatch(file: dataFile.path, page: slot, offset: pager.layout.offset(of: slot))
            }
            throw .corrupted(file: dataFile.path, page: slot,
                             reason: "the WAL was reset by a checkpoint newer than the readable meta page (generation \(meta.generation)): meta page \(slot) is damaged, or the WAL belongs to another database")
        }
        if headerSalt == nil, try log.file.size() > UInt64(WriteAheadLog.headerSize) {
            // The header is written (and, unless in `.off` mode, synced) before any record is appended, so a
            // log with bytes past a header that does not validate holds another version's records or damage.
            if case let .otherVersion(version) = header {
                throw .unsupportedFormatVersion(path: log.file.path, found: version, supported: WriteAheadLog.version)
            }
            throw .checksumMismatch(file: log.file.path, page: nil, offset: 0)
        }
        if headerSalt != meta.walSalt {
            // A new, torn or stale log (crash after the meta flip, before the log reset): nothing in it is
            // newer than the pages.
            if options.readOnly { return false }
            try log.reset(salt: meta.walSalt, sync: options.durability != .off)
            return true
        }
        // Read under the writer lock (or with no header at all): no writer can be changing it.
        let sameBoot = BootDigest.current != 0 && self.header?.hasValidIdentity == true
            && self.header?.intactLogBoot == BootDigest.current
        defer { extentsCheckedByRecovery.removeAll() }   // also when the replay throws
        let outcome = try log.replay(salt: meta.walSalt, version: logVersion, afterSequence: meta.lastSequence, sameBoot: sameBoot,
                                     admit: { (sequence, payload, synced) throws(BoxwoodError) -> Bool in
            try admitsRecoveredRecord(sequence: sequence, payload: payload, synced: synced, sameBoot: sameBoot)
        }) { (sequence, count, payload) throws(BoxwoodError) in
            try replayRecoveredRecord(sequence: sequence, operationCount: count, payload: payload, file: log.file.path)
        }
        finishRecoveryReplay()
        let (applied, torn) = (outcome.applied, outcome.tornBytes)
        let cut = torn > 0 && !options.readOnly
        // After a restart, records a power cut kept without the ones before them may follow the end marker (in
        // `normal` mode unsynced appends reach the disk in any order): they are cut, so that no later append that
        // ends where one of them starts can make it look like the next commit. Within one boot every append that
        // returned is in the file in order, and what follows the marker is the preallocated zeros: it stays.
        let cutAfterMarker = outcome.endedAtMarker && !sameBoot && !options.readOnly
        if cut || cutAfterMarker { try log.cutAfterEnd(sync: options.durability != .off) }
        lastRecovery = RecoveryReport(replayedCommits: applied, tornTailOffset: torn > 0 ? log.endOffset : nil,
                                      tornTailBytes: torn, tornTailWasCut: cut)
        return torn == 0 || cut
    }
}

extension ValueBox {
    /// Opens one of the database's files. Every file the engine opens goes through here, so that `full`
    /// durability reaches every sync of every file (F_FULLFSYNC on Darwin).
    func openStorageFile(_ path: String, create: Bool, readOnly: Bool) throws(BoxwoodError) -> StorageFile {
        let file = try fileSystem.open(path, create: create, readOnly: readOnly)
        file.flushesDriveCache = options.durability == .full
        return file
    }
}
