import Boxwood

/// The operation queue: one operation runs at a time, in `runner`, so no two batches are ever built at once. A
/// difference poll goes to the front (at most one is queued: later requests join its waiters), pushed updates
/// and custom work to the back.
extension AccountStateManager {
    /// A caller of ``synchronize()`` waiting for the difference poll it queued to end.
    typealias PollWaiter = CheckedContinuation<Result<Void, SyncError>, Never>

    enum Operation {
        /// getDifference until final; `waiters` are resumed with how it ended.
        case pollDifference(waiters: [PollWaiter])
        /// Pushed updates collected for ``SyncConfiguration/collectWindow`` (new pushes join them), then processed.
        case collect([UpdateGroup])
        /// Pushed updates processed at once, with those held back.
        case process([UpdateGroup])
        /// getChannelDifference of channels whose gap did not fill.
        case pollChannels(Set<PeerId>)
        /// Fills the unread-mention spaces of the chats whose count is not exact yet (`+Mentions`).
        case fillMentions
        /// Fetches the dialogs of chats discovered below the chat list's hole (`+ChatListHoles`).
        case refreshDialogs
        /// Work run as one operation (``perform(_:)``); it delivers its own outcome.
        case custom(@Sendable () async -> Void)
    }

    /// Queues `operation` at the front. A difference poll is queued at most once: a second one adds its waiters
    /// to the first. Once stopped, nothing is queued and a poll's waiters get ``SyncError/stopped``.
    func enqueueFront(_ operation: Operation) {
        if case let .pollDifference(waiters) = operation {
            guard !stopped else {
                for waiter in waiters { waiter.resume(returning: .failure(.stopped)) }
                return
            }
            let queued = operations.firstIndex { if case .pollDifference = $0 { return true }; return false }
            if let queued, case let .pollDifference(earlier) = operations[queued] {
                operations[queued] = .pollDifference(waiters: earlier + waiters)
                return
            }
        }
        guard !stopped else { return }
        operations.insert(operation, at: 0)
        ensureRunning()
    }

    /// Queues `operation` at the back. Once stopped, custom work still runs (its requests end at once), so that
    /// no caller of ``perform(_:)`` waits for ever.
    func enqueueBack(_ operation: Operation) {
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
            case let .pollDifference(waiters):
                let result = await run { () async throws(SyncError) in try await self.pollDifference() }
                for waiter in waiters { waiter.resume(returning: result) }
                reexamineHeldBack()
            case let .collect(groups):
                collecting = groups
                // Throws only when the task is cancelled; the collected groups are processed either way.
                try? await Task.sleep(for: configuration.collectWindow)
                let all = collecting ?? groups
                collecting = nil
                await run { () async throws(SyncError) in try await self.processGroups(all) }
            case let .process(groups):
                await run { () async throws(SyncError) in try await self.processGroups(groups) }
            case let .pollChannels(channels):
                await run { () async throws(SyncError) in try await self.pollChannels(channels) }
                reexamineHeldBack()
            case .fillMentions:
                await run { () async throws(SyncError) in try await self.fillPendingMentions() }
            case .refreshDialogs:
                await run { () async throws(SyncError) in try await self.refreshPendingDialogs() }
            case let .custom(body):
                await body()
            }
        }
        runner = nil
        checkIdle()
    }

    /// Runs one operation's work unless the manager stopped. A storage failure that ends it is emitted on
    /// ``events``; how it ended is returned for the callers waiting on it.
    @discardableResult
    private func run(_ work: () async throws(SyncError) -> Void) async -> Result<Void, SyncError> {
        guard !stopped else { return .failure(.stopped) }
        do {
            try await work()
            return .success(())
        } catch {
            if case let .storage(failure) = error { deliver(failure) }
            return .failure(error)
        }
    }

    /// After a poll, updates still held back (a failed commit, a gap the poll filled) are looked at again unless
    /// a gap timer will do it.
    private func reexamineHeldBack() {
        guard !heldBack.isEmpty, gapTimer == nil, !stopped else { return }
        if !operations.contains(where: { if case .process = $0 { return true }; return false }) { enqueueBack(.process([])) }
    }

    func checkIdle() {
        if isIdle { resumeIdleWaiters() }
    }

    func resumeIdleWaiters() {
        let waiters = idleWaiters
        idleWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}
