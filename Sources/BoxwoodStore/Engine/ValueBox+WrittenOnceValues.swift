/// Values written once. A value whose stored form is an extent (`ExtentPage`: more than one overflow page's payload,
/// in a plain file) goes straight into the data file when the transaction sets it, and the transaction's WAL record
/// names the extent (`setExtent`, see `WALOperation`) instead of carrying the bytes. The value is written once — not
/// into the record and again, at the checkpoint, into pages — and never held in memory (LMDB's overflow pages are the
/// model).
///
/// Why that keeps every crash guarantee, step by step:
///
/// 1. **Where.** The extent goes only into pages that neither the durable meta's trees nor any WAL record use: a run
///    of the free pages (`FreeSpace.takeRun`; only while no reader in any process pins an older snapshot, which may
///    still read free pages), or past the page count (`Pager.growPageCount`) — while a background checkpoint runs,
///    past its fence (`FrozenCheckpointWriter.fence`), which its own pages never reach. A crash at any moment leaves
///    the durable state and every record as they were.
/// 2. **Before the record.** The extent is written (`pwrite`) before its operation enters the record, so no record
///    names bytes that were not handed to the file. Its head's checksum covers every byte, and the record carries it:
///    a record never takes an older extent that lies at the same place for its own.
/// 3. **`full`.** The commit syncs the data file before the record whenever a value written once may not be durable
///    yet: this value box wrote one since the last sync, or the log holds records not known to be durable (another
///    value box's, which may name extents it did not sync). So a record that returned durable never names an extent a
///    power cut can lose, and `earlierRecordsDurable` keeps its meaning.
/// 4. **`normal` and `off`.** A power cut may keep a record and lose its extent. Recovery checks every extent a record
///    names before it applies the record (`admitsRecoveredRecord`). After a restart, a record whose extent does not
///    match is treated like a torn record: cut, with everything after it (`normal` promises the prefix before the first
///    loss), unless a later record proves it durable, which is damage. Within the boot a writer last found the log
///    intact, every write that returned is in the page cache: a mismatch is damage, and the open throws.
/// 5. **Until the next checkpoint.** The extent's pages stay in use until a commit replaces or removes the value; they
///    are then released like any page of the durable state, reusable only after the next checkpoint, whose `fsync` made
///    the extent durable and after which replay skips or no longer has the records that name it. So no record replay
///    may apply ever names pages written over since.
/// 6. **Abort.** A transaction that aborts gives its extents back to the free pages: no record names them.
///
/// Values go through the record as before in an encrypted file (each page is sealed alone, so a value there is a
/// chain), in a log of version 5 or older (whose readers do not know `setExtent`; the next reset makes the log version
/// 6), and for a value the compression settings may compress (`LeafValue.makeCell` decides that).
extension ValueBox {
    /// True when a set of a `count`-byte value is written once (see the extension's comment).
    func writesOnce(_ count: Int) -> Bool {
        guard ExtentPage.holds(count, layout: pager.layout), let wal else { return false }
        if count >= options.compressionThreshold && count <= options.compressionLimit { return false }
        do {
            return try wal.acceptsValuesWrittenOnce()
        } catch {
            // The log's header cannot be read now: the value goes into the record, whose append reads it again and
            // fails the commit if it still cannot (see `setWrittenOnce` on why a mutation does not throw for I/O).
            return false
        }
    }

    /// Sets `key` of table `id` to the `count` bytes at `value`, written once into a new extent, and logs `setExtent`.
    /// Returns false, having changed nothing, when the extent could not be written (mapped or handed to the file): the
    /// caller then logs the value's bytes as for any other value, and the commit writes and syncs that record — an
    /// I/O error that persists fails the commit, with its rollback; a passing one costs nothing. So a mutation still
    /// fails only for what its arguments are, never halfway through with a transaction open.
    func setWrittenOnce(_ id: Int32, _ keyType: ValueBoxKeyType, key: UnsafeRawBufferPointer, value: UnsafeRawPointer, count: Int) throws(BoxwoodError) -> Bool {
        let pages = ExtentPage.pageCount(forStored: count)
        let freeSpace = pager.freeSpace
        let head: UInt64
        if backgroundCheckpoint != nil {
            // The running checkpoint allocates from the free pages and past the page count, up to its fence.
            head = max(pager.pageCount, backgroundCheckpointReserve.upperBound)
        } else if !pinsOlderSnapshot(), let run = freeSpace.takeRun(pages) {
            head = run
        } else {
            head = pager.pageCount
        }
        if head >= pager.pageCount {
            do {
                try pager.growPageCount(to: head + UInt64(pages))
            } catch {
                // The pages could not be mapped: nothing was taken.
                return false
            }
            freeSpace.noteExtent(head, pages: pages)
        }
        let checksum: UInt64
        do {
            checksum = try valueWriter.write(value, count: count, head: head, to: dataFile, layout: pager.layout)
        } catch {
            // Nothing names the pages: they are free again.
            freeSpace.giveBackLastExtent()
            return false
        }
        pager.didWriteExtent(head, pages: pages)
        valueBytesWrittenOnce += UInt64(pages * PageLayout.pageSize)
        dataFileHasUnsyncedValues = true
        let extent = LoggedExtent(head: head, storedLength: UInt64(count), rawLength: UInt64(count), codec: ValueCodec.raw.rawValue,
                                  checksum: checksum)
        try putExtent(id, keyType, key.baseAddress ?? UnsafeRawPointer(cellBuffer), key.count, extent)
        record.append(.setExtent(table: id, keyType: keyType, key: key, extent: extent))
        return true
    }

    /// True unless no reader (in any process) pins a snapshot older than the durable meta: such a reader may still
    /// read free pages. When the reader slots cannot be read, as if one did (the extent then goes past the pages in
    /// use, which no snapshot reads).
    private func pinsOlderSnapshot() -> Bool {
        do {
            return try header?.hasLiveReader(olderThan: meta.generation, ownSlot: readerSlot) ?? false
        } catch {
            return true
        }
    }

    /// Step 3: in `full` mode, makes every extent a record may name durable before `log` gets the commit's record.
    func syncValuesWrittenOnce(before log: WriteAheadLog) throws(BoxwoodError) {
        guard options.durability == .full, dataFileHasUnsyncedValues || !log.earlierRecordsKnownDurable else { return }
        try dataFile.sync()
        dataFileHasUnsyncedValues = false
    }

    /// Takes the extent a replayed record names (recovery, or catching up with another value box's commit) into the
    /// state: its pages leave the free pages, and the page count covers them. Throws `.corrupted` when the extent is
    /// not in the file as the record says (a record another value box published names bytes it wrote before; a
    /// recovery checked the extents with `admitsRecoveredRecord` first) or lies over pages in use.
    func adoptLoggedExtent(_ extent: LoggedExtent) throws(BoxwoodError) {
        if extentsCheckedByRecovery.remove(extent.head) == nil, let problem = try problemWithLoggedExtent(extent) {
            throw .corrupted(file: dataFile.path, page: extent.head, reason: "WAL record names a value written once that is not there: \(problem)")
        }
        let pages = ExtentPage.pageCount(forStored: Int(extent.storedLength))
        guard let pageCount = pager.freeSpace.takeLogged(extent.head, pages: pages, pageCount: pager.pageCount) else {
            throw .corrupted(file: dataFile.path, page: extent.head,
                             reason: "WAL record names an extent of \(pages) pages at page \(extent.head) over pages in use")
        }
        try pager.growPageCount(to: pageCount)
        pager.didWriteExtent(extent.head, pages: pages)
    }

    /// Step 4: whether a recovered record (`payload`, commit `sequence`) may be applied — every extent it names is in
    /// the data file as it says. False after a restart when one is not (the caller treats the record as damaged);
    /// it throws `.corrupted` within the boot (`sameBoot`), and for a record that was `synced` before its commit
    /// returned (step 3 synced its extents first: no power cut explains the mismatch). A malformed operation is left
    /// to the replay, which reports it.
    func admitsRecoveredRecord(sequence: UInt64, payload: UnsafeRawBufferPointer, synced: Bool, sameBoot: Bool) throws(BoxwoodError) -> Bool {
        var reader = ByteReader(payload)
        while !reader.isAtEnd {
            let operation: WALOperation
            do throws(ByteReadError) { operation = try reader.operation() } catch { return true }
            guard case let .setExtent(_, _, _, extent) = operation else { continue }
            guard let problem = try problemWithLoggedExtent(extent) else {
                extentsCheckedByRecovery.insert(extent.head)
                continue
            }
            if sameBoot || synced {
                let why = synced ? "though the commit was synced" : "though nothing restarted since it was written"
                throw .corrupted(file: dataFile.path, page: extent.head, reason: "WAL record \(sequence) names a value written once that is not there, \(why): \(problem)")
            }
            return false
        }
        return true
    }

    /// Why the extent a record names is not in the data file as the record says, or nil. Checks the record's numbers
    /// first (a forged or damaged record must not make the pager map or hash beyond the file), then the bytes.
    private func problemWithLoggedExtent(_ extent: LoggedExtent) throws(BoxwoodError) -> String? {
        if pager.layout.isEncrypted { return "an extent in an encrypted file" }
        let stored = extent.storedLength
        // Only raw values are written once (`writesOnce` leaves compressible ones to the record).
        guard stored > UInt64(PageLayout.overflowPayload), stored <= LeafValue.maxValueLength, extent.codec == ValueCodec.raw.rawValue,
              extent.rawLength == stored else {
            return "an extent of \(stored) stored bytes for a value of \(extent.rawLength) (codec \(extent.codec))"
        }
        let pages = UInt64(ExtentPage.pageCount(forStored: Int(stored)))
        guard extent.head >= 2, extent.head <= MetaPage.pageCountLimit - pages else { return "an extent at page \(extent.head)" }
        let end = pager.layout.fileSize(pageCount: extent.head + pages)
        if try dataFile.size() < end { return "the file ends before the extent's \(pages) pages at page \(extent.head)" }
        try pager.ensureMapped(pages: extent.head + pages)
        return pager.problemWithLoggedExtent(extent, pages: Int(pages))
    }
}
