import Boxwood

/// Keeps the local database converged with the server (Telegram's `AccountStateManager`). One serial queue of
/// operations — a difference poll goes to the front, pushed updates are collected at the back for a short
/// window and processed together, custom work (hole fills) is queued like any other — so no two batches are
/// ever built at once. Each batch is replayed in one Postbox transaction that first checks the stored cursors
/// are still the ones it was built on. Events are emitted after the commit.
///
/// A storage failure (``SyncStorageError``) ends the operation it happened in and is never taken for "nothing to
/// do": the cursors stay where they were, the failure is emitted on ``events`` as ``SyncEvent/storageFailed(_:)``
/// and thrown to the caller waiting on that operation (``synchronize()``, ``perform(_:)``). Pushed updates it
/// interrupted are held and tried again like updates behind a gap (see `AccountStateManager+Pushes.swift`).
///
/// One concern per file:
/// - here: the lifecycle, the input and the calls the app makes;
/// - `+Queue`: the operation queue and its run loop;
/// - `+Pushes`: pushed updates, gaps and held-back updates;
/// - `+Difference`: getDifference and rebuilding from the dialog list;
/// - `+Channels`: getChannelDifference;
/// - `+ChannelPolling`: channels kept polled while the app shows them;
/// - `+Requests`: server requests and their retries;
/// - `+Events`: committing a batch and delivering its events and storage failures;
/// - `SyncBatchStore`: reading the cursors and replaying a batch.
public actor AccountStateManager {
    public let accountPeerId: PeerId
    let transport: any SyncTransport
    let configuration: SyncConfiguration
    /// The cursors and batches in the database.
    let batches: SyncBatchStore

    // The queue (kept by `+Queue`): at most one operation runs, in `runner`; the rest wait in `operations`.
    var operations: [Operation] = []
    var runner: Task<Void, Never>?
    private var started = false
    private(set) var stopped = false
    var idleWaiters: [CheckedContinuation<Void, Never>] = []

    // Pushed updates (kept by `+Pushes`).
    /// The groups of the collect operation that is running (new pushes join it).
    var collecting: [UpdateGroup]?
    /// Updates behind a gap, or interrupted by a storage failure, waiting to be processed again.
    var heldBack: [UpdateGroup] = []
    var gapTimer: Task<Void, Never>?
    /// Gap waits that ended, in a row, with updates still held (reset whenever nothing is held after a batch);
    /// past ``SyncConfiguration/gapPollLimit`` the held updates are dropped (see `gapWaitEnded`).
    var gapPollsInARow = 0
    var lastActivity = ContinuousClock.now

    // Polled channels (kept by `+ChannelPolling`).
    /// The channel of each live ``ChannelPolling`` handle, by handle number, in the order they were opened.
    var polledChannels: [(handle: UInt64, channelId: PeerId)] = []
    var nextPollHandle: UInt64 = 1
    /// Runs while a channel is polled; nil otherwise (nothing wakes while no channel is open).
    var channelPollTask: Task<Void, Never>?

    // Unread-mention fills (kept by `+Mentions`).
    /// Chats whose mention space is to be filled.
    var mentionFillsPending: Set<PeerId> = []
    /// Whether this start scanned the chat list for chats left with a mention space to fill.
    var mentionSpacesScanned = false
    // Chat-list holes (kept by `+ChatListHoles`).
    /// Chats discovered below the chat list's hole whose dialogs are to be fetched.
    var dialogRefreshPending: Set<PeerId> = []

    private var pushTask: Task<Void, Never>?
    private var idlePollTask: Task<Void, Never>?

    /// What the manager has done since it was created.
    public internal(set) var statistics = SyncStatistics()

    /// Events of committed batches, in commit order, and the storage failures that ended an operation.
    public nonisolated let events: AsyncStream<SyncEvent>
    let eventContinuation: AsyncStream<SyncEvent>.Continuation
    /// The subscribers of ``notifications(bufferSize:)``.
    nonisolated let notificationCenter = SyncNotificationCenter()

    /// The committed changes with their content, for any number of consumers (a notification layer, a UI, a
    /// badge): each call is a new subscription with its own buffer of `bufferSize` notifications. When a consumer
    /// falls behind by more than that, its oldest notifications are dropped and the jump in
    /// ``SyncNotification/sequence`` tells it so (it reads the database again); the sync layer never waits for it.
    /// Ending the iteration ends the subscription.
    public nonisolated func notifications(bufferSize: Int = 256) -> AsyncStream<SyncNotification> {
        notificationCenter.subscribe(bufferSize: bufferSize)
    }

    /// A manager whose transactions run on `postbox`.
    public init(postbox: Postbox, transport: any SyncTransport, accountPeerId: PeerId, configuration: SyncConfiguration = SyncConfiguration()) {
        self.init(store: postbox, transport: transport, accountPeerId: accountPeerId, configuration: configuration)
    }

    /// A manager whose transactions run on `store` (a Postbox, or a test's store in front of one).
    public init(store: any SyncStore, transport: any SyncTransport, accountPeerId: PeerId, configuration: SyncConfiguration = SyncConfiguration()) {
        self.transport = transport
        self.accountPeerId = accountPeerId
        self.configuration = configuration
        batches = SyncBatchStore(store: store, replayer: SyncReplayer(accountPeerId: accountPeerId))
        (events, eventContinuation) = AsyncStream.makeStream(of: SyncEvent.self, bufferingPolicy: .unbounded)
    }

    // MARK: Lifecycle

    /// Connects the push channel and polls the difference first (at startup only getDifference is called;
    /// channels that need catching up come back as `channelTooLong`).
    public func start() {
        guard !started else { return }
        started = true
        stopped = false
        enqueueFront(.pollDifference(waiters: []))
        queueMentionFills()
        let transport = transport
        let reconnectDelay = configuration.reconnectDelay
        pushTask = Task { [weak self] in
            while !Task.isCancelled {
                let stream = await transport.connect()
                for await event in stream {
                    guard let self else { return }
                    await self.handlePush(event)
                }
                // Throws only when cancelled, which the loop checks.
                try? await Task.sleep(for: reconnectDelay)
            }
        }
        let interval = configuration.idlePollInterval
        idlePollTask = Task { [weak self] in
            while !Task.isCancelled {
                // Throws only when cancelled, which the loop checks.
                try? await Task.sleep(for: interval)
                guard let self else { return }
                await self.pollIfQuiet(for: interval)
            }
        }
    }

    /// Stops taking pushes and waits for the running operation to end (requests stop retrying). Callers waiting
    /// on queued work get ``SyncError/stopped``.
    public func stop() async {
        stopped = true
        pushTask?.cancel()
        idlePollTask?.cancel()
        channelPollTask?.cancel()
        channelPollTask = nil
        gapTimer?.cancel()
        gapTimer = nil
        // Queued custom work still runs (its requests end at once now), so no caller waits forever.
        let pending = operations
        operations.removeAll()
        for operation in pending {
            switch operation {
            case let .custom(body): await body()
            case let .pollDifference(waiters): for waiter in waiters { waiter.resume(returning: .failure(.stopped)) }
            case .collect, .process, .pollChannels, .fillMentions, .refreshDialogs: break
            }
        }
        await runner?.value
        eventContinuation.finish()
        resumeIdleWaiters()
    }

    /// Stops because another client became the master of the database: ``SyncEvent/mastershipLost(_:)`` (and the
    /// notification) is the last event, then everything ``stop()`` does.
    func stop(lostMastershipTo holder: MasterClientState) async {
        guard !stopped else { return }
        SyncLog.logger.warning("another client took over syncing this database; this client stops",
                               metadata: ["account": "\(accountPeerId)", "holder": "\(holder)"])
        eventContinuation.yield(.mastershipLost(holder))
        notificationCenter.post([.mastershipLost(holder)])
        await stop()
    }

    // MARK: Input

    /// Hands pushed updates to the manager (the push connection does this itself).
    public func addUpdates(_ updates: ApiUpdates) {
        addUpdateGroups(UpdateGroup.groups(from: updates, accountPeerId: accountPeerId))
    }

    /// A pts step whose content was stored by the caller (the answer to sending a message or reading).
    public func addUpdatePts(pts: Int32, ptsCount: Int32) {
        addUpdateGroups([.updatePts(pts: pts, ptsCount: ptsCount)])
    }

    /// Polls the difference now (what a client does when it comes to the foreground); returns at once. A storage
    /// failure of the poll is emitted on ``events``.
    public func requestDifference() { enqueueFront(.pollDifference(waiters: [])) }

    /// Polls the difference now and returns once the poll ended: everything the server had when it answered is
    /// stored (or the server had nothing new).
    ///
    /// - Throws: ``SyncError/storage(_:)`` when the database refused a read or write of the poll (it is also
    ///   emitted on ``events``; nothing moved, so calling again starts from the same cursor);
    ///   ``SyncError/stopped`` when the manager stopped first.
    public func synchronize() async throws(SyncError) {
        let result = await withCheckedContinuation { (waiter: PollWaiter) in
            enqueueFront(.pollDifference(waiters: [waiter]))
        }
        try result.get()
    }

    /// Runs `body` as one operation of the queue: no batch is built or replayed while it runs. What `body` throws
    /// is rethrown here.
    public func perform<T: Sendable, E: Error>(_ body: @escaping @Sendable () async throws(E) -> T) async throws(E) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>, Never>) in
            enqueueBack(.custom {
                do throws(E) {
                    continuation.resume(returning: .success(try await body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            })
        }
        return try result.get()
    }

    /// Returns when no operation is queued or running, nothing is collected or held behind a gap.
    public func waitUntilIdle() async {
        if isIdle || stopped { return }
        await withCheckedContinuation { idleWaiters.append($0) }
    }

    /// Whether the manager has nothing to do.
    public var isIdle: Bool {
        operations.isEmpty && runner == nil && collecting == nil && heldBack.isEmpty && gapTimer == nil
    }

    private func handlePush(_ event: SyncPushEvent) {
        guard !stopped else { return }
        switch event {
        case .newSession:
            enqueueFront(.pollDifference(waiters: []))
        case let .updates(updates):
            addUpdates(updates)
        }
    }

    private func pollIfQuiet(for interval: Duration) {
        if ContinuousClock.now - lastActivity >= interval { enqueueFront(.pollDifference(waiters: [])) }
    }
}
