import Boxwood

/// Fills the message-history holes the live views show (Telegram's `ManagedMessageHistoryHolesContext`): it
/// watches the singleton holes view and fetches one page at a time per (peer, namespace, space), from the side the
/// view looks at (``HoleFillPage``: the hole's newest messages for a view above it, its oldest for a view below
/// it, the anchor's neighbourhood for a view opened inside it) — the fetch
/// and its store run as one operation of the state manager's queue, so no update batch interleaves with
/// them — keeps a cooldown per filled entry, and looks at the current holes again whenever a fetch ends
/// (filling one page reveals the next).
public actor MessageHistoryHoleFiller {
    private struct LocationKey: Hashable {
        let peerId: PeerId
        let namespace: MessageId.Namespace
        let space: MessageHistoryHoleSpace
    }

    private let postbox: Postbox
    /// Where fills are stored (the Postbox unless a test puts a store in front of it).
    private let store: any SyncStore
    private let manager: AccountStateManager
    private let transport: any SyncTransport
    private let configuration: SyncConfiguration
    private var current: Set<MessageHistoryHolesViewEntry> = []
    private var inFlight: Set<LocationKey> = []
    private var completed: [MessageHistoryHolesViewEntry: ContinuousClock.Instant] = [:]
    private var watchTask: Task<Void, Never>?
    private var cooldownTask: Task<Void, Never>?
    private var stopped = false

    /// A filler watching `postbox`'s holes; fills are stored through `store` (`postbox` unless given).
    public init(postbox: Postbox, store: (any SyncStore)? = nil, manager: AccountStateManager, transport: any SyncTransport,
                configuration: SyncConfiguration) {
        self.postbox = postbox
        self.store = store ?? postbox
        self.manager = manager
        self.transport = transport
        self.configuration = configuration
    }

    /// Starts watching the holes view.
    public func start() {
        guard watchTask == nil else { return }
        let stream = postbox.view(.messageHistoryHoles)
        watchTask = Task { [weak self] in
            do {
                for try await view in stream {
                    guard let self else { return }
                    await self.update(view.entries)
                }
            } catch {
                await self?.watchFailed(error)
            }
        }
    }

    /// The error that stopped watching the holes view (nil while it works): no hole is filled after it; start a
    /// new filler to try again.
    public private(set) var failure: (any Error)?

    private func watchFailed(_ error: any Error) {
        SyncLog.logger.error("the hole filler stopped: its holes view failed", metadata: ["error": "\(error)"])
        failure = error
        stop()
    }

    public func stop() {
        stopped = true
        watchTask?.cancel()
        cooldownTask?.cancel()
    }

    /// Whether a fetch is running or the view shows a hole not in cooldown.
    public var isBusy: Bool { !inFlight.isEmpty }

    private func update(_ entries: Set<MessageHistoryHolesViewEntry>) {
        current = entries
        guard !stopped else { return }
        let now = ContinuousClock.now
        completed = completed.filter { now - $0.value < configuration.holeCooldown }
        var earliestRetry: Duration?
        for entry in entries.sorted(by: Self.fetchOrder) where Self.isFillable(entry.space) {
            let key = LocationKey(peerId: entry.peerId, namespace: entry.namespace, space: entry.space)
            guard !inFlight.contains(key) else { continue }
            if let finished = completed[entry] {
                let remaining = configuration.holeCooldown - (now - finished)
                earliestRetry = min(earliestRetry ?? remaining, remaining)
                continue
            }
            inFlight.insert(key)
            Task { await self.fill(entry, key: key) }
        }
        if let earliestRetry, cooldownTask == nil {
            cooldownTask = Task { [weak self] in
                // Throws only when cancelled (the filler stopped); `cooldownEnded` then does nothing.
                try? await Task.sleep(for: earliestRetry)
                guard let self else { return }
                await self.cooldownEnded()
            }
        }
    }

    private func cooldownEnded() {
        cooldownTask = nil
        update(current)
    }

    /// Whether the filler can fetch holes of `space`: the whole history, a media space (``ApiSearchFilter``), or the
    /// unread mentions (``SyncMentions``).
    private static func isFillable(_ space: MessageHistoryHoleSpace) -> Bool {
        switch space {
        case .everywhere: return true
        case let .tag(tag): return ApiSearchFilter(tag: tag) != nil || tag == SyncMentions.tag
        }
    }

    private static func fetchOrder(_ lhs: MessageHistoryHolesViewEntry, _ rhs: MessageHistoryHolesViewEntry) -> Bool {
        (lhs.peerId, lhs.namespace, lhs.range.upperBound) < (rhs.peerId, rhs.namespace, rhs.range.upperBound)
    }

    /// Fetches and stores one page of `entry`'s hole as one operation of the manager's queue. A storage failure is
    /// emitted on the manager's events; the hole stays and is fetched again after its cooldown, like any fill.
    private func fill(_ entry: MessageHistoryHolesViewEntry, key: LocationKey) async {
        let store = store
        let manager = manager
        let transport = transport
        let limit = configuration.holeFillPageSize
        do throws(SyncError) {
            try await manager.perform { () async throws(SyncError) in
                // A send's answer stored while the page was on its way (by the outbound queue, outside this queue) may
                // be newer than the page: the fill would delete it as gone. The page is fetched again then.
                for _ in 0..<Self.attemptsAgainstSends {
                    let answersBefore: Int64
                    do throws(SyncStorageError) {
                        answersBefore = try await store.run(.fillHole) { transaction in try SyncStorage.storedAnswers(in: transaction) }
                    } catch {
                        throw .storage(error)
                    }
                    let page = HoleFillPage(range: entry.range, direction: entry.direction, limit: limit)
                    // A media space is fetched with its search filter: only its messages, in the same windows.
                    var filter: ApiSearchFilter?
                    if case let .tag(tag) = entry.space { filter = ApiSearchFilter(tag: tag) }
                    // The unread-mention space is fetched with getUnreadMentions.
                    let mentions = entry.space == SyncMentions.space
                    let operation = mentions ? "getUnreadMentions" : filter == nil ? "getHistory" : "searchHistory"
                    let messages = try await manager.request(operation, peerId: entry.peerId) {
                        [filter] () async throws(SyncTransportError) in
                        if mentions {
                            return try await transport.getUnreadMentions(peerId: entry.peerId, offsetId: page.offsetId, addOffset: page.addOffset,
                                                                         limit: page.limit, maxId: page.maxId, minId: page.minId)
                        }
                        if let filter {
                            return try await transport.searchHistory(peerId: entry.peerId, filter: filter, offsetId: page.offsetId,
                                                                     addOffset: page.addOffset, limit: page.limit, maxId: page.maxId, minId: page.minId)
                        }
                        return try await transport.getHistory(peerId: entry.peerId, offsetId: page.offsetId, addOffset: page.addOffset,
                                                              limit: page.limit, maxId: page.maxId, minId: page.minId)
                    }
                    // Only messages of this chat inside the hole count: an answer that proves nothing there fills
                    // nothing, and the hole is fetched again after its cooldown.
                    guard let filled = page.filledRange(messages, peerId: entry.peerId) else { return }
                    let accountPeerId = manager.accountPeerId
                    let result: (stored: Int, news: [MessageId])?
                    do throws(SyncStorageError) {
                        result = try await store.run(.fillHole) { [filter] transaction in
                            guard try SyncStorage.storedAnswers(in: transaction) == answersBefore else { return nil }
                            let news = try SyncStorage.unstoredNews(messages, peerId: entry.peerId, in: transaction)
                            let stored = try Self.store(messages, filled: filled, entry: entry, filter: filter, mentions: mentions,
                                                        accountPeerId: accountPeerId, in: transaction)
                            return (stored, try SyncStorage.storedIds(news, in: transaction))
                        }
                    } catch {
                        throw .storage(error)
                    }
                    guard let result else { continue }
                    await manager.reportFetchedNews(result.news)
                    await manager.recordHoleFill(messages: result.stored)
                    return
                }
            }
        } catch let .storage(failure) {
            await manager.deliver(failure, peerId: entry.peerId, details: "hole \(entry.range) of namespace \(entry.namespace)")
        } catch {
            // `.stopped`: the manager stopped, and nothing more is filled.
        }
        inFlight.remove(key)
        completed[entry] = .now
        update(current)
    }

    /// Pages fetched for one fill while sends' answers keep being stored; after that many the hole is left for its
    /// cooldown (the next look fetches it again).
    static let attemptsAgainstSends = 3

    /// Stores a fetched page of `entry`'s hole: the history, a media space or the unread mentions.
    private static func store(_ messages: [ApiMessage], filled: ClosedRange<Int32>, entry: MessageHistoryHolesViewEntry, filter: ApiSearchFilter?,
                              mentions: Bool, accountPeerId: PeerId, in transaction: Transaction) throws -> Int {
        if mentions {
            return try SyncMentions.fill(entry.peerId, range: filled, messages: messages, accountPeerId: accountPeerId, in: transaction)
        }
        if let filter {
            return try SyncStorage.fill(peerId: entry.peerId, range: filled, filter: filter, messages: messages, accountPeerId: accountPeerId,
                                        in: transaction)
        }
        return try SyncStorage.fill(peerId: entry.peerId, range: filled, messages: messages, accountPeerId: accountPeerId, in: transaction)
    }
}
