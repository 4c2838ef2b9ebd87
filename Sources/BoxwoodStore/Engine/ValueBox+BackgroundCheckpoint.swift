/// Starting, settling and waiting for background checkpoints (the protocol: `BackgroundCheckpoint`).
extension ValueBox {
    /// Multiples of the thresholds at which a commit waits for the running background checkpoint: dirty memory
    /// (frozen and newer) at twice `checkpointMemoryBytes` (then the next background checkpoint starts at once), a
    /// WAL at four times `checkpointWALBytes` (then it checkpoints inline: only that empties the log).
    static let dirtyMemoryCap = 2
    static let walCap: UInt64 = 4
    /// The share of `checkpointMemoryBytes` commits may dirty after a freeze before they are paced by the
    /// checkpointer's progress (see ``paceCommitsByCheckpoint()``).
    static let pacingHeadStart = 0.5

    /// True while an automatic checkpoint is written in the background (see ``ValueBoxOptions/backgroundCheckpoints``),
    /// or has ended and is not taken over yet (the next call does that).
    public var isCheckpointingInBackground: Bool { backgroundCheckpoint != nil }

    /// Dirty page and value bytes in memory, frozen ones included.
    var dirtyBytes: Int { pager.liveDirtyPages * PageLayout.pageSize + pager.liveBlobBytes }

    /// Dirty bytes the running background checkpoint froze (0 when none runs).
    var frozenBytes: Int { pager.frozenPageCount * PageLayout.pageSize + pager.frozenBlobBytes }

    /// Dirty bytes made since the running background checkpoint froze its state (all of them when none runs).
    var dirtyBytesSinceFreeze: Int { dirtyBytes - frozenBytes }

    /// After a commit (writer lock held, no transaction open): checkpoints when a threshold is crossed — in the
    /// background when it may, else inline. Errors of an inline checkpoint are kept in `lastCheckpointError`.
    func checkpointAfterCommit(_ log: WriteAheadLog) {
        settleBackgroundCheckpoint()
        if failure != nil { return }
        paceCommitsByCheckpoint()
        if failure != nil { return }
        let walSinceCheckpoint = log.size - min(log.size, walCheckpointedEnd)
        // Values written once: the extents they released count whole (their pages are reusable only after a
        // checkpoint), the extents they wrote an eighth (a recovery after a restart reads each whole).
        let valueBytes = valueBytesWrittenOnce / 8 &+ UInt64(pager.releasedExtentPages * PageLayout.pageSize)
        let crossed = walSinceCheckpoint &+ valueBytes >= options.checkpointWALBytes || dirtyBytesSinceFreeze >= options.checkpointMemoryBytes
        // Saturating: a threshold near the type's limit (checkpoints effectively off) must not overflow.
        let walCap = options.checkpointWALBytes.multipliedReportingOverflow(by: ValueBox.walCap)
        let memoryCap = options.checkpointMemoryBytes.multipliedReportingOverflow(by: ValueBox.dirtyMemoryCap)
        let walOverCap = log.size >= (walCap.overflow ? .max : walCap.partialValue)
        let memoryOverCap = dirtyBytes >= (memoryCap.overflow ? .max : memoryCap.partialValue)
        if backgroundCheckpoint != nil {
            // One runs: wait for it only at a hard cap. At the memory cap the commits outran the checkpointer:
            // wait for it, then freeze what was committed meanwhile for the next one. Only an inline checkpoint
            // empties the WAL.
            guard walOverCap || memoryOverCap else { return }
            let start = ContinuousClock.now
            waitForBackgroundCheckpoint()
            noteCheckpointWait(since: start)
            if failure != nil { return }
            if !walOverCap, canCheckpointInBackground {
                startBackgroundCheckpoint(log)
                return
            }
        } else if !crossed && !walOverCap && !memoryOverCap {
            return
        } else if !walOverCap, canCheckpointInBackground {
            startBackgroundCheckpoint(log)
            return
        }
        do {
            try checkpoint()
            lastCheckpointError = nil
        } catch {
            lastCheckpointError = error
        }
    }

    /// Paces this commit by the running background checkpoint, so that the writer does not outrun the checkpointer
    /// and then wait for all of it at the cap. Commits may dirty ``pacingHeadStart`` of the memory budget after the
    /// freeze freely; beyond that, a commit returns only once the checkpoint has done (by `CheckpointProgress`'s
    /// estimate) the same share of its work as the commits have dirtied of the rest of their room (dirtied 3/4 of
    /// it: half done). Their room ends at the budget, or earlier where the cap (twice the budget, frozen pages
    /// included) would stop a commit: a checkpoint frozen at the budget plus a transaction puts the cap a
    /// transaction short of the budget, and pacing to the budget left the last commit before the cap a wait for the
    /// checkpoint's whole remainder (the slowest `latency-txn-1000` commits). At the end of the room the estimate
    /// says the checkpoint is done, so the cap waits only for the estimate's error. The wait sleeps in the kernel
    /// until the estimate's time or the checkpoint's end, whichever comes first; a checkpoint that ended is installed.
    private func paceCommitsByCheckpoint() {
        guard let checkpoint = backgroundCheckpoint else { return }
        let budget = Double(options.checkpointMemoryBytes)
        let headStart = budget * ValueBox.pacingHeadStart
        let room = max(headStart + Double(PageLayout.pageSize), min(budget, budget * Double(ValueBox.dirtyMemoryCap) - Double(frozenBytes)))
        let dirtied = Double(dirtyBytesSinceFreeze)
        guard dirtied > headStart else { return }
        let share = min(1, (dirtied - headStart) / (room - headStart))
        guard !checkpoint.progress.hasDone(share) else { return }
        let start = ContinuousClock.now
        checkpoint.progress.wait(untilDone: share)
        noteCheckpointWait(since: start)
        settleBackgroundCheckpoint()
    }

    /// Counts a commit's wait for the checkpointer (``DatabaseStatistics/checkpointWaits``).
    private func noteCheckpointWait(since start: ContinuousClock.Instant) {
        let waited = start.duration(to: .now).components
        checkpointWaits += 1
        checkpointWaitNanoseconds += UInt64(max(0, waited.seconds)) * 1_000_000_000 + UInt64(max(0, waited.attoseconds / 1_000_000_000))
    }

    /// A background checkpoint may start: asked for, files that two threads may use at once (the simulated disks of
    /// the power-cut tests are not: they checkpoint inline), nothing to scrub (a secure delete wants its bytes gone at
    /// the checkpoint, which an inline one does), and a shared header to hold the lock in.
    private var canCheckpointInBackground: Bool {
        options.backgroundCheckpoints && fileSystem.allowsConcurrentFileAccess && header != nil && !state.secureDeletePending && holdsWriterLock && transaction == nil
    }

    /// Freezes the committed state and starts writing it (see `BackgroundCheckpoint`, step 1).
    private func startBackgroundCheckpoint(_ log: WriteAheadLog) {
        guard let header else { return }
        let reuse: Bool
        do {
            reuse = !(try header.hasLiveReader(olderThan: meta.generation, ownSlot: readerSlot))
        } catch {
            lastCheckpointError = error
            return
        }
        header.writerIsChangingFiles = true
        let freeSpace = pager.freeSpace
        freeSpace.freeze()
        let (pages, blobs) = pager.freeze()
        let input = FrozenCheckpointInput(
            tables: state.tables.sorted { $0.key < $1.key }.map { (id: $0.key, table: $0.value) },
            version: state.version, masterClientId: state.masterClientId, pages: pages, blobs: blobs,
            durableMeta: meta, firstNewPage: pager.pageCount, walSalt: log.salt, reusable: reuse ? freeSpace.free : [], durableFree: freeSpace.free,
            alsoFree: freeSpace.frozenReleased + freeSpace.catalogPages + freeSpace.freelistPages,
            sync: options.durability != .off)
        let writer = FrozenCheckpointWriter(input: input, file: dataFile, layout: pager.layout,
                                            nanosecondsPerByte: checkpointNanosecondsPerByte)
        backgroundCheckpointReserve = pager.pageCount..<writer.fence
        let published = SharedHeader.Published(generation: meta.generation, walSalt: log.salt, version: state.version,
                                               walEnd: log.endOffset, masterClientId: state.masterClientId)
        let checkpoint = BackgroundCheckpoint(writer: writer, header: header, published: published,
                                              frozenVersion: state.version, walEndAtFreeze: log.endOffset)
        backgroundCheckpoint = checkpoint
        walCheckpointedEnd = log.endOffset
        valueBytesWrittenOnce = 0
        pager.releasedExtentPages = 0
        checkpoint.start()
    }

    /// Installs the background checkpoint if it has ended. Only between transactions and outside a read snapshot
    /// (no cursor holds a pointer into a frozen page).
    func settleBackgroundCheckpoint() {
        guard let checkpoint = backgroundCheckpoint, transaction == nil, !isPinned, checkpoint.isFinished else { return }
        installBackgroundCheckpoint(checkpoint)
    }

    /// Waits for the running background checkpoint, if any, and installs it (between transactions).
    func waitForBackgroundCheckpoint() {
        guard let checkpoint = backgroundCheckpoint else { return }
        checkpoint.join()
        installBackgroundCheckpoint(checkpoint)
    }

    /// Waits for the running background checkpoint without installing it: the files are being released (the state
    /// is rebuilt from them). The writer lock is this value box's afterwards when the checkpointer kept it.
    func joinBackgroundCheckpoint() {
        guard let checkpoint = backgroundCheckpoint else { return }
        checkpoint.join()
        backgroundCheckpoint = nil
        backgroundCheckpointReserve = 0..<0
        if !checkpoint.releasedLock { holdsWriterLock = header != nil }
    }

    /// Step 4 of `BackgroundCheckpoint`: the new meta becomes the state's base. On a failure of the checkpoint, or
    /// of the install, `failure` is set (and the writer lock kept) as after a failed inline checkpoint.
    private func installBackgroundCheckpoint(_ checkpoint: BackgroundCheckpoint) {
        checkpoint.join()
        backgroundCheckpoint = nil
        backgroundCheckpointReserve = 0..<0
        if !checkpoint.releasedLock { holdsWriterLock = header != nil }
        checkpointNanosecondsPerByte = checkpoint.progress.nanosecondsPerByte
        guard let outcome = checkpoint.outcome else {
            let error = checkpoint.error ?? .closed
            pendingMeta = checkpoint.pendingMeta
            lastCheckpointError = error
            failure = error
            return
        }
        meta = outcome.meta
        // Values written once while it ran lie past the fence, beyond the new meta's pages.
        let pagesInUse = max(pager.pageCount, outcome.meta.pageCount)
        pager.pageCount = pagesInUse
        do {
            try pager.ensureMapped(pages: pagesInUse)
        } catch {
            // The files are consistent (the new meta is durable); the recovery maps them again.
            lastCheckpointError = error
            failure = error
            holdsWriterLock = holdsWriterLock || (header != nil && (try? header!.tryLockWriter()) == true)
            return
        }
        for (id, table) in state.tables where table.root.isDirtyRef {
            if let disk = outcome.forward[table.root.dirtyIndex] { state.tables[id]!.root = disk }
        }
        let released = pager.installFrozen(forward: outcome.forward, blobForward: outcome.blobForward, written: outcome.written)
        pager.freeSpace.installAfterBackgroundCheckpoint(free: outcome.free, freelistPages: outcome.freelistPages,
                                                         catalogPages: outcome.catalogPages, alsoReleased: released,
                                                         metaPageCount: outcome.meta.pageCount, pageCount: pagesInUse)
        lastCheckpointError = nil
        if holdsWriterLock {
            publishState()
        } else if let sequence = checkpoint.publishedSequence, header?.sequence == sequence {
            seenHeaderSequence = sequence
        } else {
            seenHeaderSequence = .max
        }
    }
}
