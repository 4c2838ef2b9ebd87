import Boxwood
import Foundation
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
    /// Chance per round that the client edits one of its messages (now and then someone else's, which the server
    /// refuses), reacts to a message, or deletes one of its messages for everyone.
    public var editChance = 0.12
    public var reactChance = 0.12
    public var deleteChance = 0.06
    /// Chance per round that the client types (or clears) a draft in a chat.
    public var draftChance = 0.1
    /// Chance per round that the client forwards one of its stored messages to another chat.
    public var forwardChance = 0.08
    /// Chance per round that the client reads mentions: all of a chat's (its mention count goes to zero), or one it
    /// has stored.
    public var mentionReadChance = 0.15
    /// Chance per round that the client sends a file (written into ``fileDirectory``, uploaded in parts).
    public var fileChance = 0.06
    /// Where the files sent are written; nil: no file is sent.
    public var fileDirectory: String?
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
            try await messageActions(client: client, chats: chats, round: round, parameters: parameters, random: &random)
            try? await Task.sleep(for: parameters.roundPause)
            await progress(round + 1)
        }
    }

    /// The client's edits, reactions and deletions of one round, on messages it has stored. A message the sync
    /// layer deleted between the pick and the action is skipped (`OutboundError.messageNotFound`), as an app's
    /// action on a message that just went away would be.
    private static func messageActions(client: SyncClient, chats: [PeerId], round: Int, parameters: SyncSimulationParameters,
                                       random: inout some RandomNumberGenerator) async throws {
        do {
            try await messageActionsOnStored(client: client, chats: chats, round: round, parameters: parameters, random: &random)
        } catch OutboundError.messageNotFound {
            // Deleted meanwhile.
        }
    }

    private static func messageActionsOnStored(client: SyncClient, chats: [PeerId], round: Int, parameters: SyncSimulationParameters,
                                               random: inout some RandomNumberGenerator) async throws {
        let actionable = chats.filter { $0.namespace != SyncNamespaces.secretChat }
        guard !actionable.isEmpty else { return }
        func pick(_ random: inout some RandomNumberGenerator) -> PeerId { actionable[Int.random(in: 0..<actionable.count, using: &random)] }
        if Double.random(in: 0..<1, using: &random) < parameters.editChance {
            // Mostly its own messages; one time in five someone else's (refused: MESSAGE_AUTHOR_REQUIRED, undone here).
            let own = Double.random(in: 0..<1, using: &random) < 0.8
            if let id = try await storedMessage(client, in: pick(&random), outgoing: own, random: &random) {
                try await client.outbound.editMessage(id, text: "edited in round \(round)")
            }
        }
        if Double.random(in: 0..<1, using: &random) < parameters.reactChance,
           let id = try await storedMessage(client, in: pick(&random), outgoing: nil, random: &random) {
            let emoji = Double.random(in: 0..<1, using: &random) < 0.2 ? nil : ["👍", "❤️", "🔥"][Int.random(in: 0..<3, using: &random)]
            try await client.outbound.setReaction(id, emoji: emoji)
        }
        if Double.random(in: 0..<1, using: &random) < parameters.deleteChance {
            // Mostly its own messages; now and then someone else's. For everyone or for this account only: for
            // everyone someone else's message of a group or channel is refused, and deleted for the account instead.
            let own = Double.random(in: 0..<1, using: &random) < 0.7
            let forEveryone = Double.random(in: 0..<1, using: &random) < 0.6
            if let id = try await storedMessage(client, in: pick(&random), outgoing: own, random: &random) {
                try await client.outbound.deleteMessages([id], forEveryone: forEveryone)
            }
        }
        if Double.random(in: 0..<1, using: &random) < parameters.draftChance {
            let text = Double.random(in: 0..<1, using: &random) < 0.3 ? "" : "draft of round \(round)"
            try await client.outbound.saveDraft(peerId: pick(&random), text: text, timestamp: Int32(1_700_000_000 + round))
        }
        if Double.random(in: 0..<1, using: &random) < parameters.mentionReadChance {
            let peerId = pick(&random)
            if Double.random(in: 0..<1, using: &random) < 0.4 {
                try await client.outbound.readAllMentions(peerId: peerId)
            } else {
                let mentions = try await client.postbox.transaction { transaction in
                    try transaction.getTaggedMessageIndices(peerId: peerId, tag: SyncMessageTags.unseenMention, anchor: nil, direction: .earlier,
                                                            limit: 20).map(\.id)
                }
                if !mentions.isEmpty {
                    try await client.outbound.markMentionsSeen([mentions[Int.random(in: 0..<mentions.count, using: &random)]])
                }
            }
        }
        if Double.random(in: 0..<1, using: &random) < parameters.forwardChance,
           let id = try await storedMessage(client, in: pick(&random), outgoing: nil, random: &random) {
            try await client.outbound.forwardMessages([id], to: pick(&random), timestamp: Int32(1_700_000_000 + round))
        }
        if let directory = parameters.fileDirectory, Double.random(in: 0..<1, using: &random) < parameters.fileChance {
            let path = directory + "/file-\(round)-\(random.next() % 1_000_000).bin"
            let bytes = (0..<Int.random(in: 1...5_000, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            try await client.outbound.sendMedia(peerId: pick(&random), file: SyncOutgoingFile(path: path, fileName: "file-\(round).bin",
                                                                                             mimeType: "application/octet-stream"),
                                                caption: "file of round \(round)", timestamp: Int32(1_700_000_000 + round))
        }
    }

    /// A random cloud message of `peerId` the client has stored (`outgoing`: only the account's, only others', or
    /// either when nil).
    private static func storedMessage(_ client: SyncClient, in peerId: PeerId, outgoing: Bool?,
                                      random: inout some RandomNumberGenerator) async throws -> MessageId? {
        let ids = try await client.postbox.transaction { transaction in
            try transaction.getMessageHistory(peerId: peerId, namespaces: [SyncNamespaces.cloudMessages], anchor: nil, direction: .earlier, limit: 50)
                .filter { outgoing == nil || $0.flags.contains(.incoming) != outgoing! }.map(\.id)
        }
        return ids.isEmpty ? nil : ids[Int.random(in: 0..<ids.count, using: &random)]
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
