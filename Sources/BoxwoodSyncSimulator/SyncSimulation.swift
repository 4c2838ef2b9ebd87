import Boxwood
import BoxwoodSync

/// One client syncing against the simulated server under faults, then quiescence: the run the simulation tests
/// repeat over many seeds and the demo shows.
public struct SyncSimulationParameters: Sendable {
    /// Rounds of traffic; each generates `eventsPerRound` server events.
    public var rounds = 20
    public var eventsPerRound = 6
    /// Chance per round that the client sends a message / marks a chat read.
    public var sendChance = 0.3
    public var readChance = 0.2
    /// How many chats have a live history view open (their holes get filled).
    public var openHistoryViews = 3
    /// Messages per open history view.
    public var historyViewCount = 30
    /// Pause between rounds.
    public var roundPause: Duration = .milliseconds(2)

    public init() {}
}

/// What a simulated session observed.
public struct SyncSimulationResult: Sendable {
    /// New-message events by message id (a message reported twice appears with count 2).
    public var newMessageEvents: [MessageId: Int] = [:]
    /// The peers whose history views were open.
    public var viewedPeers: [PeerId] = []
    /// The last snapshot of each open history view.
    public var lastViews: [PeerId: MessageHistoryView] = [:]
    /// The history views that failed, with the error (a consistent run has none).
    public var viewFailures: [PeerId: any Error] = [:]
}

/// Collects a client's events and views while a simulation runs.
public actor SyncSimulationObserver {
    private(set) var result = SyncSimulationResult()
    private var tasks: [Task<Void, Never>] = []

    public init() {}

    /// Starts consuming the manager's events and opens history views on `peers`.
    public func observe(_ client: SyncClient, viewing peers: [PeerId], count: Int) {
        result.viewedPeers = peers
        let events = client.manager.events
        tasks.append(Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.record(event)
            }
        })
        for peerId in peers {
            let stream = client.postbox.view(.messageHistory(peerId: peerId, namespace: SyncNamespaces.cloudMessages, count: count))
            tasks.append(Task { [weak self] in
                do {
                    for try await view in stream {
                        guard let self else { return }
                        await self.record(view, peerId: peerId)
                    }
                } catch {
                    await self?.recordFailure(error, peerId: peerId)
                }
            })
        }
    }

    private func record(_ event: SyncEvent) {
        if case let .newMessages(ids, _) = event {
            for id in ids { result.newMessageEvents[id, default: 0] += 1 }
        }
    }

    private func record(_ view: MessageHistoryView, peerId: PeerId) { result.lastViews[peerId] = view }

    private func recordFailure(_ error: any Error, peerId: PeerId) { result.viewFailures[peerId] = error }

    /// Stops observing and returns what was seen.
    public func finish() -> SyncSimulationResult {
        for task in tasks { task.cancel() }
        tasks = []
        return result
    }

    public var snapshot: SyncSimulationResult { result }
}

public enum SyncSimulation {
    /// Drives traffic and client actions for `parameters.rounds` rounds (faults as configured on the server),
    /// calling `progress` after each round.
    public static func runTraffic(client: SyncClient, server: SimulatedServer, parameters: SyncSimulationParameters,
                                  random: inout some RandomNumberGenerator, progress: (Int) async -> Void = { _ in }) async throws {
        let chats = server.snapshot().chatStates.keys.sorted()
        for round in 0..<parameters.rounds {
            server.generate(events: parameters.eventsPerRound)
            if !chats.isEmpty, Double.random(in: 0..<1, using: &random) < parameters.sendChance {
                let peerId = chats[Int.random(in: 0..<chats.count, using: &random)]
                try await client.outbound.sendMessage(peerId: peerId, text: "sent in round \(round)", timestamp: server.snapshot().state.date)
            }
            if !chats.isEmpty, Double.random(in: 0..<1, using: &random) < parameters.readChance {
                let peerId = chats[Int.random(in: 0..<chats.count, using: &random)]
                if let top = server.snapshot().chatStates[peerId]?.messages.keys.max() {
                    try await client.outbound.markRead(peerId: peerId, maxId: top)
                }
            }
            try? await Task.sleep(for: parameters.roundPause)
            await progress(round + 1)
        }
    }

    /// Faults off, held pushes delivered, and the client left to settle; then one more difference poll (the
    /// idle-timer poll a real client makes) and settle again.
    public static func quiesce(client: SyncClient, server: SimulatedServer) async {
        server.setFaults(.none)
        server.deliverDelayed()
        await client.waitUntilQuiet()
        await client.manager.requestDifference()
        await client.waitUntilQuiet()
    }
}
