import SystemPackage
/// Several value boxes on one database (in one process or many): the writer lock, snapshot pins, and
/// catching up with what the others committed. The protocol (see `docs/architecture.md`):
///
/// - A writer takes the writer lock, catches up, appends its record, publishes (generation, salt, version,
///   WAL end, MasterClientId) in the shared header, and releases the lock. `writerIsChangingFiles` is set
///   while the files run ahead of what is published; a writer that finds it set (its predecessor died) rebuilds
///   its state from the files, which are the truth, and publishes that.
/// - A reader pins the current checkpoint generation in its slot, then brings its state up to what the header
///   publishes: by replaying the new WAL records, or — when a checkpoint happened — by reloading from the
///   newest meta page. A pin keeps every page of that generation and newer from being reused.
/// - A checkpoint reuses free pages only when no live reader pins an older generation; otherwise it appends.
extension ValueBox {
    // MARK: Attaching

    /// Opens the shared header and, when its identity is valid, claims a reader slot (otherwise the slot is claimed
    /// by ``claimReaderSlotIfNeeded()`` once open has rebuilt the header). A read-only value box that cannot create
    /// or write the header (read-only directory or file) goes on without one: it reads the files as they are and
    /// cannot coordinate with writers. Throws `.incompatibleLockScheme` when a process of the older lock scheme has
    /// the database open.
    func attachHeader() throws(BoxwoodError) {
        let file: CoordinationFile
        let headerPath = path + "/" + ValueBox.headerFileName
        createdHeaderFile = fileSystem.kind(of: headerPath) == nil
        do {
            file = try fileSystem.openCoordinationFile(headerPath)
        } catch {
            if options.readOnly, case let .io(_, _, code) = error, code == Errno.permissionDenied.rawValue || code == Errno.readOnlyFileSystem.rawValue || code == Errno.notPermitted.rawValue { return }
            throw error
        }
        let header = SharedHeader(file: file)
        do throws(BoxwoodError) {
            if header.isVersion1, try file.hasVersion1Holders() { throw .incompatibleLockScheme(path: path) }
            if header.hasValidIdentity { readerSlot = try header.claimSlot() }
        } catch {
            file.close()
            throw error
        }
        self.header = header
    }

    /// Claims a reader slot if open had to rebuild the header first (slots are claimed only in a header with a
    /// valid identity, so that rebuilding it never drops a live claim).
    func claimReaderSlotIfNeeded() throws(BoxwoodError) {
        guard let header, readerSlot == nil, header.hasValidIdentity else { return }
        readerSlot = try header.claimSlot()
    }

    /// Releases the slot and any lock, and closes the header.
    func detachHeader() {
        guard let header else { return }
        if isPinned, let readerSlot { header.unpin(readerSlot) }
        isPinned = false
        inExplicitRead = false
        if holdsWriterLock { header.unlockWriter() }
        holdsWriterLock = false
        if let readerSlot, header.holdsSlot(readerSlot) { header.releaseSlot(readerSlot) }
        readerSlot = nil
        header.file.close()
        self.header = nil
    }

    // MARK: Locks and pins

    func lockWriter() throws(BoxwoodError) {
        guard let header, !holdsWriterLock else { return }
        if let checkpoint = backgroundCheckpoint {
            // A running background checkpoint holds the lock for this value box: share it.
            if checkpoint.joinWriterLock() {
                holdsWriterLock = true
                return
            }
            waitForBackgroundCheckpoint()
            if let failure { throw failure }
            if holdsWriterLock { return }
        }
        try header.lockWriter(timeout: options.lockTimeout)
        holdsWriterLock = true
    }

    func unlockWriter() {
        guard let header, holdsWriterLock else { return }
        if let checkpoint = backgroundCheckpoint {
            // The running checkpoint keeps the lock (and releases it when it ends).
            if checkpoint.leaveWriterLock() {
                holdsWriterLock = false
                return
            }
            // It ended while this value box held the lock: install it (publishing its generation) first.
            if transaction == nil { waitForBackgroundCheckpoint() } else { joinBackgroundCheckpoint() }
            if failure != nil { return }
        }
        header.unlockWriter()
        holdsWriterLock = false
    }

    /// Pins the current generation and catches up with the newest published commit.
    func pinSnapshot() throws(BoxwoodError) {
        guard let header, let readerSlot, !isPinned else { return }
        _ = header.pin(readerSlot)
        isPinned = true
        do { try catchUp() } catch { unpinSnapshot(); throw error }
    }

    func unpinSnapshot() {
        guard isPinned, let header, let readerSlot else { return }
        header.unpin(readerSlot)
        isPinned = false
    }

    /// Starts a read snapshot: until ``endRead()`` every read sees the state of the newest commit at this
    /// moment, however many commits other value boxes make meanwhile. Never waits for a writer. While the
    /// snapshot is open, checkpoints (in any process) do not reuse the pages it reads, so keep it short.
    public func beginRead() throws(BoxwoodError) {
        try checkUsable()
        if transaction != nil || inExplicitRead { throw .transactionAlreadyActive }
        if !isPinned { trimDecryptedPagesIfNeeded() }
        try pinSnapshot()
        inExplicitRead = true
    }

    /// Ends the snapshot started by ``beginRead()`` (nothing happens without one).
    public func endRead() {
        guard inExplicitRead else { return }
        inExplicitRead = false
        unpinSnapshot()
    }

    /// True between `beginRead()` and `endRead()`.
    public var isInReadSnapshot: Bool { inExplicitRead }

    /// Runs `body` with every read it makes seeing one snapshot: the open transaction or read snapshot when
    /// there is one, otherwise the newest commit as of this call (pinned for the duration of `body`, like a
    /// ``beginRead()`` … ``endRead()`` pair that cannot be left open). For a layer whose one logical read is
    /// several engine reads (the full-text index's posting lists and documents). `body` must not begin or end
    /// a transaction.
    public func withSnapshot<R>(_ body: () throws(BoxwoodError) -> R) throws(BoxwoodError) -> R {
        let pinned = try enterRead()
        defer { exitRead(pinned) }
        return try body()
    }

    /// Starts a read call: outside a transaction or snapshot it pins one for the call. Returns whether it did
    /// (pass that to `exitRead`).
    @inline(__always)
    func enterRead() throws(BoxwoodError) -> Bool {
        if backgroundCheckpoint != nil { settleBackgroundCheckpoint() }
        if failure != nil { try recoverFromFailure() }
        if isClosed { throw .closed }
        if suspended { throw .suspended(path: path) }
        if transaction != nil || isPinned { return false }
        trimDecryptedPagesIfNeeded()  // no operation is in progress: no cursor holds a page
        if header == nil { return false }
        try pinSnapshot()
        return true
    }

    @inline(__always)
    func exitRead(_ pinned: Bool) {
        if pinned { unpinSnapshot() }
    }

    // MARK: Catching up

    /// Brings the in-memory state up to what the shared header publishes. The caller holds a pin or the
    /// writer lock.
    func catchUp() throws(BoxwoodError) {
        guard let header else { return }
        if let checkpoint = backgroundCheckpoint {
            // While it runs, this value box's background checkpoint holds the writer lock since a commit of this
            // value box: nobody else has written. Once it ended, install it before looking at the header.
            guard checkpoint.isFinished, transaction == nil else { return }
            waitForBackgroundCheckpoint()
            if let failure { throw failure }
        }
        if header.sequence == seenHeaderSequence && !(holdsWriterLock && header.writerIsChangingFiles) { return }
        if holdsWriterLock && header.writerIsChangingFiles {
            // The previous writer died between changing the files and publishing: the files are the truth.
            try reopen()
            return
        }
        for _ in 0..<3 {
            guard let (published, sequence) = header.read() else { break }
            if published.generation == meta.generation, let wal, published.walSalt == wal.salt,
               published.version >= state.version, published.walEnd >= wal.endOffset {
                if published.version == state.version && published.walEnd == wal.endOffset {
                    seenHeaderSequence = sequence
                    return
                }
                if try replayPublished(upTo: published.walEnd), state.version == published.version {
                    seenHeaderSequence = sequence
                    return
                }
            }
            if try loadSnapshot(published) {
                seenHeaderSequence = sequence
                return
            }
        }
        // The header does not describe the files (stale, damaged, or left half-published by a writer that
        // died), or checkpoints kept moving them: settle it under the writer lock from the files.
        let locked = holdsWriterLock
        if !locked {
            try header.lockWriter(timeout: options.lockTimeout)
            holdsWriterLock = true
        }
        defer { if !locked && failure == nil { unlockWriter() } }
        try reopen()
    }

    /// Replays the published WAL records this state has not applied yet.
    private func replayPublished(upTo end: UInt64) throws(BoxwoodError) -> Bool {
        guard let wal else { return false }
        return try wal.readPublished(upTo: end, afterSequence: state.version) { (sequence, count, payload) throws(BoxwoodError) in
            try applyRecord(sequence: sequence, operationCount: count, payload: payload, file: wal.file.path)
        }
    }

    /// Rebuilds the in-memory state from the newest meta page plus the WAL records `published` covers.
    /// Returns false when the files moved under it (a checkpoint ran meanwhile).
    func loadSnapshot(_ published: SharedHeader.Published) throws(BoxwoodError) -> Bool {
        var file: StorageFile = dataFile
        // The layout of the installed file, or (the first load of an open) of the file just opened.
        let size = try file.size()
        var layout: DataFileLayout
        if let pager, pager.file === file { layout = pager.layout } else { layout = try dataFileLayout(of: file, size: size) }
        var chosen = try readMeta(file, size: size, layout: layout).0
        if chosen.generation < published.generation {
            // A compaction may have swapped a new file in under the path: look at the file it names now (a rekey
            // in another process makes it one this value box's key does not open: that is thrown).
            let replacement = try openStorageFile(path + "/" + ValueBox.dataFileName, create: false, readOnly: options.readOnly)
            var newest: MetaPage? = nil
            do {
                let replacementSize = try replacement.size()
                layout = try dataFileLayout(of: replacement, size: replacementSize)
                newest = try readMeta(replacement, size: replacementSize, layout: layout).0
            } catch let error where error.isUndecryptable {
                replacement.close()
                throw error
            } catch {
                // Not readable yet (a swap in progress): the caller reads the files under the writer lock.
            }
            guard let newest, newest.generation >= published.generation else {
                replacement.close()
                return false
            }
            file = replacement
            chosen = newest
        }
        if try file.size() < layout.fileSize(pageCount: chosen.pageCount) {
            if file !== dataFile { file.close() }
            return false
        }
        try installDataFile(file, layout: layout, meta: chosen)
        let log: WriteAheadLog
        if let wal {
            log = wal
        } else {
            let walPath = path + "/" + ValueBox.walFileName
            guard fileSystem.kind(of: walPath) == .regular else {
                // A writer needs its log: without the file, the state is read from the files under the writer
                // lock instead (`openFromFiles` creates it).
                return options.readOnly && state.version == published.version
            }
            log = WriteAheadLog(file: try openStorageFile(walPath, create: false, readOnly: options.readOnly), keys: layout.keys)
            wal = log
        }
        log.restart(salt: chosen.walSalt)
        if chosen.generation == published.generation && chosen.walSalt == published.walSalt {
            guard try replayPublished(upTo: published.walEnd) else { return false }
        }
        return state.version == published.version
    }

    /// Applies one WAL record to the in-memory state as a committed transaction: all of its operations, or (when
    /// one is malformed or fails) none.
    func applyRecord(sequence: UInt64, operationCount: UInt32, payload: UnsafeRawBufferPointer, file: String) throws(BoxwoodError) {
        let base = state
        do throws(BoxwoodError) {
            try applyOperations(sequence: sequence, operationCount: operationCount, payload: payload, file: file)
        } catch {
            state = base
            pager.abortTransaction()
            throw error
        }
        pager.commitTransaction()
        state.version = sequence
    }

    // MARK: Publishing

    /// Publishes this state (the writer lock is held, or nothing else can be writing) and marks the files as
    /// matching it.
    func publishState() {
        guard let header else { return }
        let state = SharedHeader.Published(generation: meta.generation, walSalt: wal?.salt ?? meta.walSalt, version: state.version,
                                           walEnd: wal?.endOffset ?? UInt64(WriteAheadLog.headerSize),
                                           masterClientId: state.masterClientId)
        if header.hasValidIdentity { header.publish(state) } else { header.initialize(state) }
        // While a background checkpoint writes, the files run ahead of what is published (its pages, then its meta).
        if let checkpoint = backgroundCheckpoint {
            checkpoint.notePublished(state)
        } else if !options.readOnly {
            header.writerIsChangingFiles = false
        }
        seenHeaderSequence = header.sequence
    }

    /// Checkpoints when no other value box is writing (used by `close`, which must not wait, and which shrinks:
    /// see `checkpoint(shrinking:)`).
    func checkpointIfWriterLockIsFree(shrinking: Bool = false) throws(BoxwoodError) {
        waitForBackgroundCheckpoint()
        if let failure { throw failure }
        if let header, !holdsWriterLock {
            guard try header.tryLockWriter() else { return }
            holdsWriterLock = true
        }
        defer { if failure == nil { unlockWriter() } }
        try catchUp()
        try checkpoint(shrinking: shrinking)
    }

    // MARK: MasterClientId

    /// The MasterClientId: the ``sessionClientId`` of the value box that last called
    /// ``becomeMasterClient()`` (in any process), 0 when none did. No I/O.
    public var masterClientId: Int64 { header?.masterClientId ?? state.masterClientId }

    /// True when this value box is the master client.
    public var isMasterClient: Bool { masterClientId == sessionClientId }

    /// Makes this value box the master client (Postbox's `becomeMasterClient`): records its
    /// ``sessionClientId`` as the MasterClientId, durably, as a commit that other processes see. Inside a
    /// transaction it becomes part of that transaction; outside, it runs one. Nothing is written when this
    /// value box already is the master.
    public func becomeMasterClient() throws(BoxwoodError) {
        if transaction != nil {
            try checkWritable()
            guard state.masterClientId != sessionClientId else { return }
            try perform(.setMasterClientId(sessionClientId))
            return
        }
        try begin()
        do { try becomeMasterClient() } catch { abort(); throw error }
        try commit()
    }

    /// Gives up being the master client: the MasterClientId becomes 0 (none), durably, as a commit that other
    /// processes see. Nothing is written when this value box is not the master (another one took over: its claim
    /// stays). Inside a transaction it becomes part of that transaction; outside, it runs one.
    public func resignMasterClient() throws(BoxwoodError) {
        if transaction != nil {
            try checkWritable()
            guard state.masterClientId == sessionClientId else { return }
            try perform(.setMasterClientId(0))
            return
        }
        try begin()
        do { try resignMasterClient() } catch { abort(); throw error }
        try commit()
    }
}

