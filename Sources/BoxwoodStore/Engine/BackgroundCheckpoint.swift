import Atomics
import BoxwoodPlatform

/// A checkpoint written on a thread of its own while commits go on (the default, `ValueBoxOptions.backgroundCheckpoints`).
///
/// The protocol, and the invariant each step keeps:
///
/// 1. **Freeze** (the commit that crosses a threshold, writer lock held, no transaction open): the committed trees
///    are frozen (`Pager.freeze`): later transactions copy a frozen page before changing it, as they copy any page
///    of an earlier transaction, and a frozen page or blob is neither freed nor its slot reused until the install.
///    What commits released so far moves to the checkpoint (`FreeSpace.freeze`). The shared header's
///    `writerIsChangingFiles` stays set until the install: if this process dies, the next writer rebuilds its state
///    from the files.
/// 2. **Write** (`FrozenCheckpointWriter`, on the checkpointer thread): copies of the frozen pages go to pages free
///    in the durable meta (or past its end when a reader pins an older snapshot), then `fsync`, then the meta —
///    generation + 1, `lastSequence` the frozen version, the WAL's salt *kept* — then `fsync`. The WAL is not
///    touched: it holds every commit, the ones after the freeze too; recovery and catching up skip the records up
///    to the meta's `lastSequence`. It is emptied only by a checkpoint that includes everything (an inline one).
/// 3. **Writer lock**: the checkpoint holds the database's writer lock from the freeze to its end, so no other
///    value box (in any process) commits, checkpoints or reuses free pages meanwhile. This value box's own
///    transactions share that hold (`joinWriterLock` / `leaveWriterLock`): its commits go on. At the end the
///    checkpointer releases the lock itself when this value box does not hold it, publishing the new generation
///    first (with the last state this value box published), so that other processes see the files as they are.
/// 4. **Install** (this value box's thread, between transactions, after `join`): every reference to a frozen page
///    is redirected to the disk page it was written as (`Pager.installFrozen`), the frozen memory is freed, the
///    free space becomes the new meta's, and the new meta is the state's base. Until then every read uses the
///    frozen pages in memory, so no read ever sees a page that is not written yet.
///
/// Commits are paced while it runs (`ValueBox.paceCommitsByCheckpoint`): once they have dirtied half the memory
/// budget since the freeze, each waits until the checkpoint has done (by an estimate in time,
/// `CheckpointProgress`) a share of its work in proportion to what they dirtied beyond that, so that the wait spreads
/// over many commits instead of falling on the one that reaches a cap. Waiting for the whole checkpoint happens only
/// at a hard cap (dirty memory twice the budget: the commit joins the running checkpoint and starts the next; a WAL
/// four times its threshold: it joins it and runs an inline one, which empties the log), in
/// `suspend`, `close`, an explicit `checkpoint`, compaction and rekey, and in a recovery, always by joining the thread (a sleep in the kernel). The thread
/// exists only while a checkpoint is written. A failure is kept and becomes the value box's `failure` at the install,
/// as a failed inline checkpoint does: the files are consistent (the old meta and the WAL, or the new meta, whose
/// pages were synced, written again by the recovery) and the next call recovers from them.
final class BackgroundCheckpoint: @unchecked Sendable {
    /// Guards `running`, `mainHoldsLock`, `lastPublished` and the lock hand-over at the end.
    private let lock = PlatformLock()
    private var running = true
    /// True while the value box's own transaction (or maintenance) holds the writer lock.
    private var mainHoldsLock: Bool
    /// What the value box published last (the checkpointer publishes it with the new generation).
    private var lastPublished: SharedHeader.Published
    private let finished = ManagedAtomic<Bool>(false)
    private var thread: JoinableThread?
    private let writer: FrozenCheckpointWriter
    private let header: SharedHeader?

    /// How far the checkpointer has written (commits pace themselves by it).
    var progress: CheckpointProgress { writer.progress }

    /// The frozen version and the WAL's end at the freeze.
    let frozenVersion: UInt64
    let walEndAtFreeze: UInt64

    // Read after `join` only.
    private(set) var outcome: FrozenCheckpointOutcome?
    private(set) var error: BoxwoodError?
    /// A meta whose pages are durable but whose write or sync failed.
    private(set) var pendingMeta: MetaPage?
    /// True when the checkpointer released the writer lock (it published the new generation first).
    private(set) var releasedLock = false
    /// The header's seqlock value after the checkpointer published.
    private(set) var publishedSequence: UInt64?

    init(writer: FrozenCheckpointWriter, header: SharedHeader?, published: SharedHeader.Published, frozenVersion: UInt64, walEndAtFreeze: UInt64) {
        self.writer = writer
        self.header = header
        self.lastPublished = published
        self.mainHoldsLock = true
        self.frozenVersion = frozenVersion
        self.walEndAtFreeze = walEndAtFreeze
    }

    /// Starts the checkpointer thread; when no thread can be made, writes the checkpoint on this one.
    func start() {
        do {
            thread = try JoinableThread.start(name: "boxwood.ckpt") { [self] in run() }
        } catch {
            run()
        }
    }

    /// True once the checkpoint ended (successfully or not); `join` then returns at once.
    var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// Waits for the checkpointer thread to end.
    func join() { thread?.join() }

    /// The value box takes the writer lock: true when the running checkpoint holds it (the value box shares it),
    /// false when the checkpoint ended (the caller installs it, then locks as usual).
    func joinWriterLock() -> Bool {
        lock.withLock {
            if running { mainHoldsLock = true }
            return running
        }
    }

    /// The value box releases the writer lock: true when the running checkpoint keeps holding it.
    func leaveWriterLock() -> Bool {
        lock.withLock {
            if running { mainHoldsLock = false }
            return running
        }
    }

    /// Records what the value box just published (its lock held).
    func notePublished(_ state: SharedHeader.Published) {
        lock.withLock { lastPublished = state }
    }

    private func run() {
        do throws(BoxwoodError) {
            outcome = try writer.run()
        } catch {
            self.error = error
            pendingMeta = writer.pendingMeta
        }
        lock.withLock {
            running = false
            // After a failure the lock stays held: the value box takes it over and recovers (as after an inline
            // checkpoint's failure). When the value box holds it, the value box publishes at the install.
            if let outcome, !mainHoldsLock, let header {
                var state = lastPublished
                state.generation = outcome.meta.generation
                state.walSalt = outcome.meta.walSalt
                if header.hasValidIdentity { header.publish(state) } else { header.initialize(state) }
                header.writerIsChangingFiles = false
                publishedSequence = header.sequence
                header.unlockWriter()
                releasedLock = true
            }
        }
        finished.store(true, ordering: .releasing)
        // After `finished`: a commit woken by the end finds the checkpoint finished and installs it.
        writer.progress.end()
    }
}
