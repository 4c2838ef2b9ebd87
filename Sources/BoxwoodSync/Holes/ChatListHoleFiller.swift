import Boxwood

/// Fills the chat list's hole while a chat-list view shows it (Telegram's `ManagedChatListHoles`): it watches the
/// singleton `.chatListHoles` view (the holes every live chat-list view shows) and has the state manager fetch the
/// page below each hole of the root list (``AccountStateManager/fillChatListHole(_:)``), one at a time; filling a
/// page moves the hole down, and the view shows the new one when it is still in its window. Nothing runs while no
/// chat-list view shows a hole.
public actor ChatListHoleFiller {
    private let postbox: Postbox
    private let manager: AccountStateManager
    private var current: Set<ChatListHolesViewEntry> = []
    private var inFlight: ChatListHole?
    private var watchTask: Task<Void, Never>?
    private var stopped = false

    public init(postbox: Postbox, manager: AccountStateManager) {
        self.postbox = postbox
        self.manager = manager
    }

    /// Starts watching the chat-list holes view.
    public func start() {
        guard watchTask == nil else { return }
        stopped = false
        let stream = postbox.view(.chatListHoles)
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

    /// The error that stopped watching the view (nil while it works): no chat-list hole is filled after it; start
    /// a new filler to try again.
    public private(set) var failure: (any Error)?

    private func watchFailed(_ error: any Error) {
        SyncLog.logger.error("the chat-list hole filler stopped: its holes view failed", metadata: ["error": "\(error)"])
        failure = error
        stop()
    }

    public func stop() {
        stopped = true
        watchTask?.cancel()
        watchTask = nil
    }

    /// Whether a page is being fetched.
    public var isBusy: Bool { inFlight != nil }

    private func update(_ entries: Set<ChatListHolesViewEntry>) {
        current = entries
        guard !stopped, inFlight == nil,
              let hole = entries.filter({ $0.groupId == .root }).map(\.hole).max() else { return }
        inFlight = hole
        Task { await self.fill(hole) }
    }

    /// Fetches the page below `hole`, then looks at the holes shown now. After a failure (a refusal; a storage
    /// failure is reported on the manager's events) the hole is tried again only when the view changes, so a server
    /// that keeps refusing is not asked in a loop; after the manager stopped, never.
    private func fill(_ hole: ChatListHole) async {
        var failed = false
        do throws(SyncError) {
            try await manager.fillChatListHole(hole)
        } catch .stopped {
            stopped = true
        } catch {
            failed = true
        }
        inFlight = nil
        if !failed { update(current) }
    }
}
