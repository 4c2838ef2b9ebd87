import Boxwood

/// Keeps the local database converged with the server (Telegram's `AccountStateManager`). One serial queue of
/// operations — a difference poll goes to the front, pushed updates are collected at the back for a short
/// window and processed together, custom work (hole fills) is queued like any other — so no two batches are
/// ever built at once. Each batch is replayed in one Postbox transaction that first checks the stored cursors
/// are still the ones it was built on. Events are emitted after the commit.
public actor AccountStateManager {
    public let accountPeerId: PeerId
    let postbox: Postbox
    let transport: any SyncTransport
    let configuration: SyncConfiguration
    private let replayer: SyncReplayer

    private enum Operation {
        case pollDifference
        case collect([UpdateGroup])
        case process([UpdateGroup])
        case pollChannels(Set<PeerId>)
        case custom(@Sendable () async -> Void)
    }

    private var operations: [Operation] = []
    private var runner: Task<Void, Never>?
    /// The groups of the collect operation that is running (new pushes join it).
    private var collecting: [UpdateGroup]?
    /// Updates behind a gap, waiting for it to fill.
    private var heldBack: [UpdateGroup] = []
    private var gapTimer: Task<Void, Never>?
    /// Gap waits that ended, in a row, with updates still held (reset whenever nothing is held after a batch);
    /// past ``SyncConfiguration/gapPollLimit`` the held updates are dropped (see `gapWaitEnded`).
    private var gapPollsInARow = 0
    private var pushTask: Task<Void, Never>?
    private var idlePollTask: Task<Void, Never>?
    private var lastActivity = ContinuousClock.now
    private var started = false
    private(set) var stopped = false
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    private var activeRequests = 0

    /// What the manager has done since it was created.
    public private(set) var statistics = SyncStatistics()

    /// Events of committed batches, in commit order.
    public nonisolated let events: AsyncStream<SyncEvent>
    private let eventContinuation: AsyncStream<SyncEvent>.Continuation

    public init(postbox: Postbox, transport: any SyncTransport, accountPeerId: PeerId, configuration: SyncConfiguration = SyncConfiguration()) {
        self.postbox = postbox
        self.transport = transport
        self.accountPeerId = accountPeerId
        self.configuration = configuration
        replayer = SyncReplayer(accountPeerId: accountPeerId)
        (events, eventContinuation) = AsyncStream.makeStream(of: SyncEvent.self, bufferingPolicy: .unbounded)
    }

    // MARK: Lifecycle

    /// Connects the push channel and polls the difference first (at startup only getDifference is called;
    /// channels that need catching up come back as `channelTooLong`).
    public func start() {
        guard !started else { return }
        started = true
        stopped = false
        enqueueFront(.pollDifference)
        let transport = transport
        let reconnectDelay = configuration.reconnectDelay
        pushTask = Task { [weak self] in
            while !Task.isCancelled {
                let stream = await transport.connect()
                for await event in stream {
                    guard let self else { return }
                    await self.handlePush(event)
                }
                try? await Task.sleep(for: reconnectDelay)
            }
        }
        let interval = configuration.idlePollInterval
        idlePollTask = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                await self.pollIfQuiet(for: interval)
            }
        }
    }

    /// Stops taking pushes and waits for the running operation to end (requests stop retrying).
    public func stop() async {
        stopped = true
        pushTask?.cancel()
        idlePollTask?.cancel()
        gapTimer?.cancel()
        gapTimer = nil
        // Queued custom work still runs (its requests return at once now), so no caller waits forever.
        let pending = operations
        operations.removeAll()
        for case let .custom(body) in pending { await body() }
        await runner?.value
        eventContinuation.finish()
        resumeIdleWaiters()
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

    /// Polls the difference now (what a client does when it comes to the foreground).
    public func requestDifference() { enqueueFront(.pollDifference) }

    /// Runs `body` as one operation of the queue: no batch is built or replayed while it runs.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
        await withCheckedContinuation { continuation in
            enqueueBack(.custom {
                continuation.resume(returning: await body())
            })
        }
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
            enqueueFront(.pollDifference)
        case let .updates(updates):
            addUpdates(updates)
        }
    }

    private func addUpdateGroups(_ groups: [UpdateGroup]) {
        guard !stopped, !groups.isEmpty else { return }
        lastActivity = .now
        if collecting != nil {
            collecting! += groups
        } else if case let .collect(existing)? = operations.last {
            operations[operations.count - 1] = .collect(existing + groups)
        } else {
            enqueueBack(.collect(groups))
        }
    }

    private func pollIfQuiet(for interval: Duration) {
        if ContinuousClock.now - lastActivity >= interval { enqueueFront(.pollDifference) }
    }

    // MARK: The queue

    private func enqueueFront(_ operation: Operation) {
        guard !stopped else { return }
        if case .pollDifference = operation, operations.contains(where: { if case .pollDifference = $0 { return true }; return false }) { return }
        operations.insert(operation, at: 0)
        ensureRunning()
    }

    private func enqueueBack(_ operation: Operation) {
        guard !stopped else {
            if case let .custom(body) = operation { Task { await body() } }
            return
        }
        operations.append(operation)
        ensureRunning()
    }

    private func ensureRunning() {
        guard runner == nil, !stopped else { return }
        runner = Task { await self.runLoop() }
    }

    private func runLoop() async {
        while !operations.isEmpty {
            let operation = operations.removeFirst()
            switch operation {
            case .pollDifference:
                if !stopped { await pollDifference() }
                reexamineHeldBack()
            case let .collect(groups):
                collecting = groups
                try? await Task.sleep(for: configuration.collectWindow)
                let all = collecting ?? groups
                collecting = nil
                if !stopped { await processGroups(all) }
            case let .process(groups):
                if !stopped { await processGroups(groups) }
            case let .pollChannels(channels):
                if !stopped { await pollChannels(channels) }
                reexamineHeldBack()
            case let .custom(body):
                await body()
            }
        }
        runner = nil
        checkIdle()
    }

    /// After a poll, updates still held back (a failed commit, a gap the poll filled) are looked at again unless
    /// a gap timer will do it.
    private func reexamineHeldBack() {
        guard !heldBack.isEmpty, gapTimer == nil, !stopped else { return }
        if !operations.contains(where: { if case .process = $0 { return true }; return false }) { enqueueBack(.process([])) }
    }

    private func checkIdle() {
        if isIdle { resumeIdleWaiters() }
    }

    private func resumeIdleWaiters() {
        let waiters = idleWaiters
        idleWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    // MARK: Pushed updates

    private func processGroups(_ groups: [UpdateGroup]) async {
        let all = heldBack + groups
        heldBack = []
        guard !all.isEmpty else { return }
        var channelIds = Set<PeerId>()
        for case let .withChannelPts(updates, _, _) in all {
            for update in updates { if let range = update.channelPtsRange { channelIds.insert(range.channelId) } }
        }
        guard let loaded = await load(channels: channelIds) else { heldBack = all; return }
        guard let cursor = loaded.cursor else {
            // Not synced yet: the first difference poll brings everything.
            enqueueFront(.pollDifference)
            return
        }
        var batch = SyncMutableState(initialState: cursor, state: cursor, storedAnswers: loaded.storedAnswers)
        for channelId in channelIds.sorted() { batch.loadChannel(channelId, storedPts: loaded.channels[channelId] ?? nil) }
        let outcome = UpdateReducer.reduce(all, into: &batch, source: .realtime)
        statistics.updatesApplied += outcome.applied
        statistics.duplicatesSkipped += outcome.duplicates
        statistics.implausibleUpdates += outcome.implausible.count
        if !outcome.channelsToFetch.isEmpty {
            guard await fetchChannels(outcome.channelsToFetch, into: &batch) else { heldBack = all; return }
        }
        if !batch.isEmpty {
            guard await commit(batch) else {
                heldBack = all
                enqueueFront(.pollDifference)
                return
            }
        }
        heldBack = outcome.heldBack
        if outcome.reset { enqueueFront(.pollDifference) }
        if heldBack.isEmpty {
            gapPollsInARow = 0
            gapTimer?.cancel()
            gapTimer = nil
        } else if gapTimer == nil {
            statistics.gapsDetected += 1
            let wait = configuration.gapWait
            gapTimer = Task { [weak self] in
                try? await Task.sleep(for: wait)
                guard !Task.isCancelled, let self else { return }
                await self.gapWaitEnded()
            }
        }
    }

    /// The gap did not fill in time: fetch what is missing (the common box by getDifference, each channel by
    /// getChannelDifference), then look at the held updates again.
    ///
    /// A poll fetches everything the server had when it answered, so an update held before it is released by
    /// it — unless the update claims counters the server never reaches (a hostile or broken server: pts
    /// `Int32.max`, say). Waiting and polling again would then go on for ever, the manager never idle: after
    /// ``SyncConfiguration/gapPollLimit`` such rounds in a row the held updates are dropped instead, and the
    /// polls run once more. Nothing is lost by dropping: no cursor moved past them.
    private func gapWaitEnded() {
        gapTimer = nil
        guard !heldBack.isEmpty, !stopped else { checkIdle(); return }
        var commonGap = false
        var channels = Set<PeerId>()
        for group in heldBack {
            switch group {
            case let .withChannelPts(updates, _, _):
                for update in updates { if let range = update.channelPtsRange { channels.insert(range.channelId) } }
            case .reset:
                break
            default:
                commonGap = true
            }
        }
        gapPollsInARow += 1
        if gapPollsInARow > configuration.gapPollLimit {
            statistics.heldUpdatesDropped += heldBack.count
            heldBack = []
            gapPollsInARow = 0
        } else {
            enqueueBack(.process([]))
        }
        if !channels.isEmpty { enqueueFront(.pollChannels(channels)) }
        if commonGap { enqueueFront(.pollDifference) }
        checkIdle()
    }

    // MARK: getDifference

    private func pollDifference() async {
        while !stopped {
            guard let loaded = await load(channels: []) else { return }
            guard let cursor = loaded.cursor else {
                guard await resetFromDialogs(expected: nil, storedAnswers: loaded.storedAnswers) else { continue }
                continue
            }
            let limit = configuration.ptsTotalLimit
            statistics.differenceRequests += 1
            guard let difference = await request({ [transport] () async throws(SyncTransportError) in
                try await transport.getDifference(pts: cursor.pts, qts: cursor.qts, date: cursor.date, ptsTotalLimit: limit)
            }) else { return }
            var batch = SyncMutableState(initialState: cursor, state: cursor, storedAnswers: loaded.storedAnswers)
            var final = true
            switch difference {
            case let .empty(date, seq):
                batch.state.date = date
                batch.state.seq = seq
            case let .difference(messages, encrypted, other, chats, users, state):
                guard await build(&batch, messages, encrypted, other, chats, users, SyncAccountState(state)) else { return }
            case let .slice(messages, encrypted, other, chats, users, state):
                guard await build(&batch, messages, encrypted, other, chats, users, SyncAccountState(state)) else { return }
                final = false
            case .tooLong:
                statistics.differenceTooLong += 1
                if await resetFromDialogs(expected: cursor, storedAnswers: loaded.storedAnswers) { return }
                continue
            }
            if !batch.isEmpty {
                guard await commit(batch) else { continue }
            }
            if final { return }
            if !batch.state.isAhead(of: cursor) {
                // A slice that does not move the cursor forward would be asked for, and answered, for ever.
                statistics.implausibleAnswers += 1
                return
            }
        }
    }

    /// Adds a difference (or slice) to a batch: its messages and updates in order, then the channels it says to
    /// fetch, then its cursor.
    private func build(_ batch: inout SyncMutableState, _ messages: [ApiMessage], _ encrypted: [ApiEncryptedMessage],
                       _ other: [ApiUpdate], _ chats: [ApiChat], _ users: [ApiUser], _ state: SyncAccountState) async -> Bool {
        if !users.isEmpty { batch.add(.mergeUsers(users, overwrite: false)) }
        if !chats.isEmpty { batch.add(.mergeChats(chats, overwrite: false)) }
        if !messages.isEmpty { batch.add(.addMessages(messages, .catchUp)) }
        if !encrypted.isEmpty { batch.add(.addEncryptedMessages(encrypted, .catchUp)) }
        var outcome = ReduceOutcome()
        for update in other {
            if update.ptsRange != nil || update.qts != nil {
                UpdateReducer.applyCommon(update, to: &batch, source: .catchUp)
            } else if update.channelPtsRange == nil {
                UpdateReducer.applyOther(update, to: &batch, outcome: &outcome)
            }
        }
        statistics.updatesApplied += messages.count + encrypted.count + other.count
        batch.state = state
        if !outcome.channelsToFetch.isEmpty {
            return await fetchChannels(outcome.channelsToFetch, into: &batch)
        }
        return true
    }

    /// Rebuilds every chat from the dialog list and takes the server's cursor (first start, `differenceTooLong`):
    /// stored messages stay, but everything below each chat's newest message becomes a hole to fill.
    /// `storedAnswers` is the stored send-answer count read before the request (see ``SyncStoredAnswers``).
    private func resetFromDialogs(expected: SyncAccountState?, storedAnswers: Int64) async -> Bool {
        guard let dialogs = await request({ [transport] () async throws(SyncTransportError) in try await transport.getDialogs() }) else { return false }
        var batch = SyncMutableState(initialState: expected, state: SyncAccountState(dialogs.state), storedAnswers: storedAnswers)
        batch.add(.mergeUsers(dialogs.users, overwrite: true))
        batch.add(.mergeChats(dialogs.chats, overwrite: true))
        let messagesByPeer = Dictionary(grouping: dialogs.messages, by: \.peerId)
        for dialog in dialogs.dialogs {
            batch.add(.resetChat(dialog, messages: messagesByPeer[dialog.peerId] ?? []))
        }
        return await commit(batch)
    }

    // MARK: getChannelDifference

    private func pollChannels(_ channels: Set<PeerId>) async {
        guard let loaded = await load(channels: []), let cursor = loaded.cursor else { return }
        var batch = SyncMutableState(initialState: cursor, state: cursor, storedAnswers: loaded.storedAnswers)
        guard await fetchChannels(channels, into: &batch) else { return }
        if !batch.isEmpty, !(await commit(batch)) { enqueueBack(.pollChannels(channels)) }
    }

    /// Fetches each channel's difference on its own branch of the batch (at most
    /// ``SyncConfiguration/maxConcurrentChannelFetches`` at once) and merges the branches back in channel order.
    private func fetchChannels(_ channels: Set<PeerId>, into batch: inout SyncMutableState) async -> Bool {
        let missing = channels.filter { batch.channelPts[$0] == nil }
        if !missing.isEmpty {
            guard let loaded = await load(channels: missing) else { return false }
            for channelId in missing.sorted() { batch.loadChannel(channelId, storedPts: loaded.channels[channelId] ?? nil) }
        }
        let base = batch
        let ordered = channels.sorted()
        var branches: [PeerId: SyncMutableState] = [:]
        let limit = configuration.maxConcurrentChannelFetches
        var failed = false
        await withTaskGroup(of: (PeerId, SyncMutableState?).self) { group in
            var next = 0
            func launch() {
                let channelId = ordered[next]
                next += 1
                group.addTask { (channelId, await self.channelBranch(channelId, base: base)) }
            }
            while next < ordered.count && next < limit { launch() }
            for await (channelId, branch) in group {
                if let branch { branches[channelId] = branch } else { failed = true }
                if next < ordered.count { launch() }
            }
        }
        guard !failed else { return false }
        for channelId in ordered { if let branch = branches[channelId] { batch.merge(branch) } }
        return true
    }

    /// One channel's difference, looped until `final`, on a branch of `base`.
    private func channelBranch(_ channelId: PeerId, base: SyncMutableState) async -> SyncMutableState? {
        var branch = base.branch()
        var pts = branch.channelPts[channelId] ?? 0
        let limit = configuration.channelDifferenceLimit
        while true {
            statistics.channelDifferenceRequests += 1
            let requestPts = pts
            guard let difference = await request({ [transport] () async throws(SyncTransportError) in
                try await transport.getChannelDifference(channelId: channelId, pts: requestPts, limit: limit)
            }) else { return nil }
            switch difference {
            case let .empty(_, serverPts):
                if branch.channelPts[channelId] != serverPts { branch.setChannelPts(channelId, serverPts) }
                return branch
            case let .difference(final, newPts, messages, other, chats, users):
                if !users.isEmpty { branch.add(.mergeUsers(users, overwrite: false)) }
                if !chats.isEmpty { branch.add(.mergeChats(chats, overwrite: false)) }
                if !messages.isEmpty { branch.add(.addMessages(messages, .catchUp)) }
                for update in other { UpdateReducer.applyChannel(update, to: &branch, source: .catchUp) }
                statistics.updatesApplied += messages.count + other.count
                branch.setChannelPts(channelId, newPts)
                if final { return branch }
                if newPts <= requestPts {
                    // A non-final answer that does not move the channel's pts would be asked for again for ever.
                    statistics.implausibleAnswers += 1
                    return branch
                }
                pts = newPts
            case let .tooLong(dialog, messages, chats, users):
                statistics.channelTooLong += 1
                if !users.isEmpty { branch.add(.mergeUsers(users, overwrite: false)) }
                if !chats.isEmpty { branch.add(.mergeChats(chats, overwrite: false)) }
                branch.add(.resetChat(dialog, messages: messages))
                branch.setChannelPts(channelId, dialog.pts ?? pts)
                return branch
            }
        }
    }

    // MARK: Storage

    private struct Loaded: Sendable {
        let cursor: SyncAccountState?
        let channels: [PeerId: Int32?]
        /// The stored ``SyncStoredAnswers`` count.
        let storedAnswers: Int64
    }

    /// The stored cursor, the stored pts of `channels` and the stored send-answer count.
    private func load(channels: Set<PeerId>) async -> Loaded? {
        do {
            return try await postbox.transaction { transaction in
                var pts: [PeerId: Int32?] = [:]
                for channelId in channels { pts[channelId] = .some(try SyncStorage.channelPts(channelId, in: transaction)) }
                return Loaded(cursor: try transaction.getState() as? SyncAccountState, channels: pts,
                              storedAnswers: try SyncStorage.storedAnswers(in: transaction))
            }
        } catch {
            return nil
        }
    }

    /// Replays a batch in one transaction; false when it was discarded (the cursor moved, or the database
    /// refused the write).
    private func commit(_ batch: SyncMutableState) async -> Bool {
        let replayer = replayer
        do {
            let events = try await postbox.transaction { transaction in try replayer.replay(batch, in: transaction) }
            statistics.commits += 1
            for event in events { eventContinuation.yield(event) }
            return true
        } catch {
            statistics.discardedBatches += 1
            return false
        }
    }

    /// Calls the server until it answers, backing off exponentially (capped); nil once the manager stops.
    func request<T: Sendable>(_ body: @Sendable () async throws(SyncTransportError) -> T) async -> T? {
        var delay = configuration.retryInitialDelay
        while !stopped {
            do {
                return try await body()
            } catch {
                statistics.retries += 1
                if case let .floodWait(seconds) = error, let wait = Self.floodWait(seconds, limit: configuration.floodWaitLimit) {
                    try? await Task.sleep(for: wait)
                } else {
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, configuration.retryMaxDelay)
                }
            }
        }
        return nil
    }

    /// A server's flood wait of `seconds`, at most `limit`; nil when it is not a finite, non-negative number
    /// (`Duration.seconds` traps on NaN, infinities and values beyond about 1.7e20).
    static func floodWait(_ seconds: Double, limit: Duration) -> Duration? {
        guard seconds.isFinite, seconds >= 0 else { return nil }
        let (limitSeconds, limitAttoseconds) = limit.components
        return seconds < Double(limitSeconds) + Double(limitAttoseconds) * 1e-18 ? .seconds(seconds) : limit
    }

    func recordHoleFill(messages: Int) {
        statistics.holesFilled += 1
        statistics.messagesFetchedForHoles += messages
    }
}
