import Dispatch
import BoxwoodStore

/// The Postbox layer over one database directory: typed tables on a `ValueBox`, run on one serial queue,
/// with atomic transactions that record exactly what changed (``PostboxChanges``).
///
/// ```swift
/// let postbox = try await Postbox.open(path: dir, seedConfiguration: seed)
/// let peer = try await postbox.transaction { tx in try tx.getPeer(id) }
/// ```
///
/// Every transaction runs on ``queue``, a serial queue of this Postbox (each Postbox has its own, so two databases
/// of one process — two accounts, or tests running in parallel — never wait for each other):
/// `valueBox.begin()`; when another process committed since this one's last transaction, every cache is
/// dropped; the closure; then the change record is built, observers see it (before the commit, on the
/// queue), a non-empty record bumps the TransactionStateVersion, write-back caches are flushed and the
/// value box commits. A closure that throws rolls everything back.
public final class Postbox: @unchecked Sendable {
    /// The serial queue this Postbox's transactions, view updates and observers run on (`.userInitiated`). Only
    /// this Postbox uses it.
    public let queue: DispatchQueue
    /// Marks every Postbox queue; the value names the Postbox (``queueTag``).
    static let queueKey = DispatchSpecificKey<ObjectIdentifier>()
    /// The value of ``queueKey`` on this Postbox's queue.
    private let queueTag: ObjectIdentifier

    /// The database directory.
    public let path: String
    public let seedConfiguration: SeedConfiguration
    /// The user (schema) version this build writes.
    public let userVersion: Int32

    let valueBox: ValueBox
    let tables: PostboxTables
    let viewTracker = ViewTracker()
    private var observers: [Int: @Sendable (PostboxChanges) -> Void] = [:]
    private var nextObserverId = 0
    private var isClosed = false
    private var isSuspended = false
    /// Watches the shared header for other processes' commits while live views exist (see `combinedView`).
    private var externalWatcher: Task<Void, Never>?
    /// Counts the watchers started, so a failing watcher acts only while it is the current one.
    private var externalWatcherGeneration = 0
    /// The TransactionStateVersion the last non-empty transaction of this Postbox wrote to the metadata table.
    var transactionStateVersion: Int64 = 0

    private init(path: String, seedConfiguration: SeedConfiguration, userVersion: Int32, options: ValueBoxOptions, useCaches: Bool,
                 queue: DispatchQueue, queueTag: ObjectIdentifier) throws {
        self.queue = queue
        self.queueTag = queueTag
        self.path = path
        self.seedConfiguration = seedConfiguration
        self.userVersion = userVersion
        try LibraryCodingTypes.ensureRegistered()   // before opening: the tables below cannot fail then
        valueBox = try ValueBox(path: path, options: options)
        tables = try PostboxTables(valueBox: valueBox, seedConfiguration: seedConfiguration, useCaches: useCaches)
    }

    /// Opens (creating when missing) the Postbox at `path`. A new database gets `userVersion`; an older one is
    /// brought to it by the registered `upgrades`, each step in one transaction (all or nothing).
    ///
    /// - Throws: ``PostboxError/newerUserVersion(found:supported:)`` for a database of a newer schema,
    ///   ``PostboxError/noUpgradePath(from:to:)`` when a step is missing; engine errors as `BoxwoodError`;
    ///   ``PostboxTypeRegistrationError`` when the library's ``CodableEntry`` cannot be registered (an app type
    ///   took the name `"CodableEntry"`).
    ///
    /// Encryption, as Postbox's `openPostbox`: `encryptionParameters` (when given) replaces `options.encryption`
    /// (see docs/encryption.md). With `removeDatabaseOnError`, a database that cannot be decrypted — the key or
    /// salt is not its own (``BoxwoodError/wrongKey(path:)``), or it is encrypted and no key was given — is
    /// deleted and created again, empty; never for a read-only open, which throws the error instead. Other
    /// errors (a damaged file, a full disk) are thrown whatever the flag: they are not a lost key.
    public static func open(path: String, seedConfiguration: SeedConfiguration = SeedConfiguration(), userVersion: Int32 = 1,
                            upgrades: [PostboxUpgrade] = [], options: ValueBoxOptions = ValueBoxOptions(),
                            encryptionParameters: ValueBoxEncryptionParameters? = nil, removeDatabaseOnError: Bool = false,
                            useCaches: Bool = true) async throws -> Postbox {
        let queue = DispatchQueue(label: "org.boxwood.postbox", qos: .userInitiated)
        // The tag is the identity of an object that lives as long as the queue does: the queue itself.
        let queueTag = ObjectIdentifier(queue)
        queue.setSpecific(key: queueKey, value: queueTag)
        var options = options
        if let encryptionParameters { options.encryption = encryptionParameters }
        let openOptions = options
        return try await run(on: queue) {
            let postbox: Postbox
            do {
                postbox = try Postbox(path: path, seedConfiguration: seedConfiguration, userVersion: userVersion,
                                      options: openOptions, useCaches: useCaches, queue: queue, queueTag: queueTag)
            } catch let error as BoxwoodError where removeDatabaseOnError && !openOptions.readOnly && error.isUndecryptable {
                PostboxLog.logger.error("the database cannot be decrypted; removing it and creating it again (removeDatabaseOnError)",
                                        metadata: ["path": "\(path)", "error": "\(error)"])
                try ValueBox.removeDatabaseFiles(at: path)
                postbox = try Postbox(path: path, seedConfiguration: seedConfiguration, userVersion: userVersion,
                                      options: openOptions, useCaches: useCaches, queue: queue, queueTag: queueTag)
            }
            do {
                try postbox.bringToUserVersion(upgrades)
            } catch {
                do {
                    try postbox.valueBox.close()
                } catch let closing {
                    // The upgrade's error is what the caller gets; this one would be lost without the log.
                    PostboxLog.logger.error("closing the database after a failed upgrade failed",
                                            metadata: ["path": "\(path)", "error": "\(closing)", "upgradeError": "\(error)"])
                }
                throw error
            }
            return postbox
        }
    }

    /// Runs `body` in a transaction on the Postbox queue and returns its result. If `body` throws, nothing it
    /// did survives and the error is rethrown.
    @discardableResult
    public func transaction<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T {
        try await onQueue { try self.runTransaction(body) }
    }

    /// Closes the database (checkpointing it). Live view streams end; later transactions throw
    /// ``PostboxError/closed``.
    public func close() async throws {
        try await onQueue {
            if self.isClosed { return }
            self.isClosed = true
            self.externalWatcher?.cancel()
            self.externalWatcher = nil
            self.viewTracker.endAll()
            try self.valueBox.close()
        }
    }

    // MARK: Background

    /// Prepares for the app being suspended (call it from the app's background or scene-phase handler). Waits for
    /// the transaction in flight — transactions run one at a time on the Postbox queue, so at most the one running
    /// now, however long its closure takes — then suspends the value box (`ValueBox/suspend()`: a cheap
    /// checkpoint, no lock held, nothing waiting) and stops watching other processes' commits. Until
    /// ``resume()``, transactions throw ``PostboxError/suspended``; live views stay registered and emit nothing.
    public func suspend() async throws {
        try await onQueue {
            if self.isClosed { throw PostboxError.closed }
            if self.isSuspended { return }
            self.externalWatcher?.cancel()
            self.externalWatcher = nil
            try self.valueBox.suspend()
            self.isSuspended = true
        }
    }

    /// Ends a suspension: transactions work again, and live views catch up at once with everything other
    /// processes committed meanwhile (an empty transaction refreshes them, and watching resumes).
    public func resume() async throws {
        try await onQueue {
            if self.isClosed { throw PostboxError.closed }
            guard self.isSuspended else { return }
            try self.valueBox.resume()
            self.isSuspended = false
            if self.viewTracker.count > 0 {
                self.watchExternalChanges()
                try self.runTransaction { _ in }
            }
        }
    }

    // MARK: Live views (see Postbox+Views.swift)

    /// Starts (once) a task that runs an empty transaction whenever another process commits, so that live
    /// views refresh without waiting for a transaction of this Postbox. It sleeps in the kernel between commits
    /// (`ValueBox/externalChanges()`) and runs only while a live view exists. When watching or the refreshing
    /// transaction fails, every live view is stopped with that error (``ViewTracker/failAll(_:)``): a view that
    /// no longer follows other processes must not look live. Runs on the queue.
    func watchExternalChanges() {
        guard externalWatcher == nil, !isClosed, !isSuspended else { return }
        let changes = valueBox.externalChanges()
        externalWatcherGeneration += 1
        let generation = externalWatcherGeneration
        externalWatcher = Task { [self] in
            do {
                for try await _ in changes {
                    try await transaction { _ in }
                }
            } catch PostboxError.closed, PostboxError.suspended {
                // Closing or suspending stops the watcher on purpose (the views end or wait for `resume`).
            } catch {
                queue.async { [self] in
                    // Only this watcher's views: one cancelled meanwhile (close, suspend) has no say.
                    guard generation == externalWatcherGeneration, externalWatcher != nil else { return }
                    externalWatcher = nil
                    PostboxLog.logger.error("following other processes' commits failed; every live view is stopped",
                                            metadata: ["path": "\(path)", "views": "\(viewTracker.count)", "error": "\(error)"])
                    viewTracker.failAll(error)
                }
            }
        }
    }

    /// Stops the watcher once no live view is left: with no view, nothing of this Postbox wakes. Runs on the queue.
    func stopWatchingExternalChangesIfUnused() {
        guard viewTracker.count == 0 else { return }
        externalWatcher?.cancel()
        externalWatcher = nil
    }

    // MARK: Observers (the view tracker's hook)

    /// Registers `observer`, called on ``queue`` with the change record of every transaction that changed
    /// something or began after another process's commits — before the value box commits, like Postbox's
    /// view updates. Returns a token for ``removeTransactionObserver(_:)``.
    public func addTransactionObserver(_ observer: @escaping @Sendable (PostboxChanges) -> Void) -> Int {
        syncOnQueue {
            let id = nextObserverId
            nextObserverId += 1
            observers[id] = observer
            return id
        }
    }

    public func removeTransactionObserver(_ token: Int) {
        syncOnQueue { _ = observers.removeValue(forKey: token) }
    }

    // MARK: Running transactions (on the queue)

    func runTransaction<T>(_ body: (Transaction) throws -> T) throws -> T {
        if isClosed { throw PostboxError.closed }
        if isSuspended { throw PostboxError.suspended }
        try valueBox.begin()
        let sawExternalCommits = valueBox.lastBeginSawExternalCommits
        if sawExternalCommits { tables.clearMemoryCaches() }
        let transaction = Transaction(postbox: self)
        defer { transaction.end() }
        do {
            let result = try body(transaction)
            try commit(sawExternalCommits: sawExternalCommits)
            return result
        } catch {
            valueBox.abort()
            tables.clearMemoryCaches()
            tables.resetChanges()
            throw error
        }
    }

    private func commit(sawExternalCommits: Bool) throws {
        var changes = try tables.collectChanges(renderingMessages: !observers.isEmpty)
        changes.sawExternalCommits = sawExternalCommits
        // The write-back tables write (and encode) their values first, so a value that cannot be encoded fails
        // the transaction before any view or observer hears of its changes.
        for table in tables.all { try table.beforeCommit() }
        if !changes.isEmpty {
            transactionStateVersion = try tables.metadata.incrementTransactionStateVersion()
        }
        if !changes.isEmpty || sawExternalCommits {
            viewTracker.updateViews(tables: tables, changes: changes)
            for id in observers.keys.sorted() { observers[id]?(changes) }
        }
        tables.resetChanges()
        try valueBox.commit()
    }

    private func bringToUserVersion(_ upgrades: [PostboxUpgrade]) throws {
        var stored = try runTransaction { tx in
            let version = try tx.postbox.tables.metadata.userVersion()
            // A database written before the unsent-message index existed gets it built once (not by a
            // read-only instance, which cannot write it).
            if version != nil && !self.valueBox.options.readOnly {
                try tx.postbox.tables.history.history.buildUnsentIndexIfNeeded()
                try tx.postbox.tables.history.recountLegacyTotalUnreadStates()
                // A text index of an older full-text layout is rebuilt once.
                try tx.postbox.tables.history.history.rebuildTextIndexIfNeeded()
            }
            return version
        }
        if stored == nil {
            // A new database: its version, the chat list's seeded hole (what makes the sync layer fetch the
            // first page of dialogs) and the mark that its unsent-message index is complete.
            try runTransaction { tx in
                try tx.postbox.tables.metadata.setUserVersion(self.userVersion)
                try tx.postbox.tables.history.chatList.ensureInitialized(groupId: .root)
                try tx.postbox.tables.history.history.buildUnsentIndexIfNeeded()
            }
            return
        }
        while let version = stored, version != userVersion {
            if version > userVersion { throw PostboxError.newerUserVersion(found: version, supported: userVersion) }
            guard let step = upgrades.first(where: { $0.from == version }) else {
                throw PostboxError.noUpgradePath(from: version, to: userVersion)
            }
            guard step.to > step.from, step.to <= userVersion else { throw PostboxError.invalidUpgrade(from: step.from, to: step.to) }
            try runTransaction { tx in
                try step.run(tx)
                try tx.postbox.tables.metadata.setUserVersion(step.to)
            }
            stored = step.to
        }
    }

    // MARK: The queue

    /// Runs `body` on `queue` and returns (or throws) its result.
    private static func run<T: Sendable>(on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try body() })
            }
        }
    }

    /// Runs `body` on this Postbox's queue and returns (or throws) its result.
    func onQueue<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await Postbox.run(on: queue, body)
    }

    /// Runs `body` on this Postbox's queue, waiting for it (at once when already there).
    func syncOnQueue<T>(_ body: () -> T) -> T {
        if isOnQueue { return body() }
        return queue.sync(execute: body)
    }

    /// Whether the calling code runs on this Postbox's queue.
    var isOnQueue: Bool { DispatchQueue.getSpecific(key: Postbox.queueKey) == queueTag }
}
