import BoxwoodSync

/// The probabilities of the simulated network's faults. All 0 (``none``) is a perfect network.
public struct SimulatedFaults: Hashable, Sendable {
    /// Per push: the push is lost.
    public var dropPush: Double
    /// Per push: the push arrives twice.
    public var duplicatePush: Double
    /// Per push: the push is held back and released later, in random order with other held pushes.
    public var delayPush: Double
    /// Per push: the connection drops (the push stream finishes; pushes are lost until the client reconnects).
    public var disconnect: Double
    /// Per push: `updatesTooLong` arrives instead of the push.
    public var tooLongPush: Double
    /// Per request: it fails with `.timeout` or `.disconnected` before anything is applied.
    public var requestFailure: Double
    /// Per sendMessage/readHistory: it is applied, then fails with `.timeout` or `.disconnected` (the answer is lost).
    public var lostAnswer: Double
    /// Per generated event: the chance that each held push is released before the event.
    public var delayedRelease: Double

    /// Faults with the given probabilities (all 0 by default).
    public init(dropPush: Double = 0, duplicatePush: Double = 0, delayPush: Double = 0, disconnect: Double = 0,
                tooLongPush: Double = 0, requestFailure: Double = 0, lostAnswer: Double = 0, delayedRelease: Double = 0.3) {
        self.dropPush = dropPush
        self.duplicatePush = duplicatePush
        self.delayPush = delayPush
        self.disconnect = disconnect
        self.tooLongPush = tooLongPush
        self.requestFailure = requestFailure
        self.lostAnswer = lostAnswer
        self.delayedRelease = delayedRelease
    }

    /// A perfect network.
    public static let none = SimulatedFaults()

    /// A bad mobile network: drop 5%, duplicate 5%, delay/reorder 10%, disconnect 1%, `updatesTooLong` 0.5%,
    /// request failure 5%, answer lost after applying 3%.
    public static let realistic = SimulatedFaults(dropPush: 0.05, duplicatePush: 0.05, delayPush: 0.10, disconnect: 0.01,
                                                  tooLongPush: 0.005, requestFailure: 0.05, lostAnswer: 0.03)
}

/// What the fault layer did so far (counted since the server was created).
public struct SimulatedFaultStats: Hashable, Sendable {
    /// Pushes the server tried to send (one per push, before faults).
    public var pushesAttempted = 0
    /// Pushes yielded to a client's stream (a duplicate counts twice, a released delayed push once).
    public var pushesDelivered = 0
    /// Pushes dropped by the fault layer.
    public var dropped = 0
    /// Pushes sent twice.
    public var duplicated = 0
    /// Pushes held back for later delivery.
    public var delayed = 0
    /// Connections dropped by the fault layer.
    public var disconnects = 0
    /// Pushes replaced with `updatesTooLong`.
    public var tooLongPushes = 0
    /// Pushes lost because no connection was open (including held pushes lost when their connection ended).
    public var lostWithoutConnection = 0
    /// Requests that failed before being applied.
    public var failedRequests = 0
    /// sendMessage/readHistory requests applied whose answer was lost.
    public var lostAnswers = 0

    /// All counters at 0.
    public init() {}
}

// MARK: - Push delivery through the fault layer

extension ServerState {
    /// Sends one push through the fault layer to the current connection.
    mutating func deliver(_ pushed: ApiUpdates) {
        guard var updates = withoutUnpushedChannels(pushed) else { return }
        faultStats.pushesAttempted += 1
        guard connection != nil else {
            faultStats.lostWithoutConnection += 1
            return
        }
        if pushRandom.chance(faults.disconnect) {
            faultStats.disconnects += 1
            faultStats.lostWithoutConnection += 1
            closeConnection()
            return
        }
        if pushRandom.chance(faults.tooLongPush) {
            faultStats.tooLongPushes += 1
            updates = .updatesTooLong
        }
        if pushRandom.chance(faults.dropPush) {
            faultStats.dropped += 1
            return
        }
        if pushRandom.chance(faults.delayPush) {
            faultStats.delayed += 1
            heldPushes.append(updates)
            return
        }
        yield(updates)
        if pushRandom.chance(faults.duplicatePush) {
            faultStats.duplicated += 1
            yield(updates)
        }
    }

    /// Releases each held push with probability `probability`, the released ones in random order.
    mutating func releaseHeldPushes(probability: Double) {
        guard !heldPushes.isEmpty else { return }
        var released: [ApiUpdates] = []
        var kept: [ApiUpdates] = []
        for push in heldPushes {
            if pushRandom.chance(probability) { released.append(push) } else { kept.append(push) }
        }
        heldPushes = kept
        pushRandom.shuffle(&released)
        for push in released { yield(push) }
    }

    /// Ends the current connection: its stream finishes and its held pushes are lost.
    mutating func closeConnection() {
        connection?.finish()
        connection = nil
        faultStats.lostWithoutConnection += heldPushes.count
        heldPushes.removeAll()
    }

    private mutating func yield(_ updates: ApiUpdates) {
        guard let connection else {
            faultStats.lostWithoutConnection += 1
            return
        }
        faultStats.pushesDelivered += 1
        connection.yield(.updates(updates))
    }
}

// MARK: - Request faults

extension ServerState {
    /// Fails the request before it is applied, with the configured probability.
    mutating func failRequestBeforeApplying() throws(SyncTransportError) {
        guard requestRandom.chance(faults.requestFailure) else { return }
        faultStats.failedRequests += 1
        throw requestRandom.chance(0.5) ? .timeout : .disconnected
    }

    /// Loses the answer of an applied sendMessage/readHistory, with the configured probability.
    mutating func loseAnswerAfterApplying() throws(SyncTransportError) {
        guard requestRandom.chance(faults.lostAnswer) else { return }
        faultStats.lostAnswers += 1
        throw requestRandom.chance(0.5) ? .timeout : .disconnected
    }
}
