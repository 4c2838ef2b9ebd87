import Boxwood
import Foundation

/// Keeps a channel polled while a handle lives: Telegram's `polledChannel`, for a channel whose updates the server
/// does not push (one the account previews without having joined it, a large broadcast channel). The app asks for
/// a handle when it opens the channel's history and drops it when the history closes.
///
/// Limits (``SyncConfiguration``): one getChannelDifference round per ``SyncConfiguration/channelPollInterval`` for
/// all the polled channels together (at once for a channel newly opened), at most
/// ``SyncConfiguration/maxPolledChannels`` channels — the most recently opened — per round. Each round is one
/// `pollChannels` operation of the queue, so it never interleaves with another batch. While no handle lives, no task
/// runs and nothing wakes.
extension AccountStateManager {
    /// Polls `channelId` now and then every ``SyncConfiguration/channelPollInterval`` until the returned handle is
    /// cancelled or released. Several handles of one channel poll it once. A stopped manager polls nothing.
    public func pollChannel(_ channelId: PeerId) -> ChannelPolling {
        let handle = nextPollHandle
        nextPollHandle += 1
        guard !stopped else { return ChannelPolling(manager: nil, handle: handle) }
        let isNew = !polledChannels.contains { $0.channelId == channelId }
        polledChannels.append((handle, channelId))
        if isNew { enqueueBack(.pollChannels([channelId])) }
        startChannelPolling()
        return ChannelPolling(manager: self, handle: handle)
    }

    /// The channels polled each round: the most recently opened, at most ``SyncConfiguration/maxPolledChannels``.
    public var polledChannelIds: [PeerId] {
        var seen: Set<PeerId> = []
        var channels: [PeerId] = []
        for entry in polledChannels.reversed() where channels.count < configuration.maxPolledChannels {
            if seen.insert(entry.channelId).inserted { channels.append(entry.channelId) }
        }
        return channels
    }

    /// Ends a handle; the last one ends the polling task.
    func endPolling(_ handle: UInt64) {
        polledChannels.removeAll { $0.handle == handle }
        if polledChannels.isEmpty {
            channelPollTask?.cancel()
            channelPollTask = nil
        }
    }

    private func startChannelPolling() {
        guard channelPollTask == nil else { return }
        let interval = configuration.channelPollInterval
        channelPollTask = Task { [weak self] in
            while !Task.isCancelled {
                // Throws only when cancelled (the last handle ended, or the manager stopped), which the loop checks.
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let self else { return }
                await self.channelPollRound()
            }
        }
    }

    private func channelPollRound() {
        let channels = polledChannelIds
        guard !channels.isEmpty, !stopped else { return }
        statistics.channelPollRounds += 1
        // One round at a time: a round still queued takes the place of the new one.
        let queued = operations.contains { if case .pollChannels = $0 { return true }; return false }
        if !queued { enqueueBack(.pollChannels(Set(channels))) }
    }
}

/// A channel kept polled by ``AccountStateManager/pollChannel(_:)``: polling ends with ``cancel()`` or when the last
/// reference goes away.
public final class ChannelPolling: Sendable {
    private let manager: AccountStateManager?
    private let handle: UInt64
    /// Whether ``cancel()`` ran (guarded by `lock`).
    private nonisolated(unsafe) var cancelled = false
    private let lock = NSLock()

    init(manager: AccountStateManager?, handle: UInt64) {
        self.manager = manager
        self.handle = handle
    }

    /// Stops polling the channel (for this handle; idempotent).
    public func cancel() {
        let first = lock.withLock {
            defer { cancelled = true }
            return !cancelled
        }
        guard first, let manager else { return }
        let handle = handle
        Task { await manager.endPolling(handle) }
    }

    deinit { cancel() }
}
