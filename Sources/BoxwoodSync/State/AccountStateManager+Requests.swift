import Boxwood
import Logging

/// Server requests: retried until the server answers, backing off exponentially (capped) or as long as the
/// server's flood wait says, until the manager stops.
extension AccountStateManager {
    /// How many failures in a row of one request are logged at `debug` before one is logged as a `warning`
    /// (and every that many after): a dropped connection or a timeout is routine for a client on a phone's network,
    /// a request that keeps failing is not.
    static let failuresPerWarning = 5

    /// Calls the server until it answers. Each failure is logged (``SyncLog``, metadata `operation`, `peer`,
    /// `error`, `attempt`), as a warning every ``failuresPerWarning`` failures in a row.
    ///
    /// - Parameters:
    ///   - operation: The request's name, for the log (`getDifference`).
    ///   - peerId: The chat or channel the request is about, for the log.
    /// - Throws: ``SyncError/stopped`` once the manager stops (a request in flight ends with it).
    func request<T: Sendable>(_ operation: String, peerId: PeerId? = nil,
                              _ body: @Sendable () async throws(SyncTransportError) -> T) async throws(SyncError) -> T {
        var delay = configuration.retryInitialDelay
        var attempt = 0
        while !stopped {
            do {
                return try await body()
            } catch {
                if case let .rejected(reason) = error { throw .rejected(operation: operation, reason: reason) }
                statistics.retries += 1
                attempt += 1
                logRetry(operation, peerId: peerId, error: error, attempt: attempt)
                // The sleeps below throw only when the task is cancelled; the loop then ends when the manager stops.
                if case let .floodWait(seconds) = error, let wait = Self.floodWait(seconds, limit: configuration.floodWaitLimit) {
                    try? await Task.sleep(for: wait)
                } else {
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, configuration.retryMaxDelay)
                }
            }
        }
        throw .stopped
    }

    /// Logs the `attempt`th failure in a row of a request that is retried.
    private func logRetry(_ operation: String, peerId: PeerId?, error: SyncTransportError, attempt: Int) {
        var metadata: Logger.Metadata = ["operation": "\(operation)", "error": "\(error)", "attempt": "\(attempt)",
                                         "account": "\(accountPeerId)"]
        if let peerId { metadata["peer"] = "\(peerId)" }
        let level: Logger.Level = attempt % Self.failuresPerWarning == 0 ? .warning : .debug
        SyncLog.logger.log(level: level, "request failed; retrying", metadata: metadata)
    }

    /// A server's flood wait of `seconds`, at most `limit`; nil when it is not a finite, non-negative number
    /// (`Duration.seconds` traps on NaN, infinities and values beyond about 1.7e20).
    static func floodWait(_ seconds: Double, limit: Duration) -> Duration? {
        guard seconds.isFinite, seconds >= 0 else { return nil }
        let (limitSeconds, limitAttoseconds) = limit.components
        return seconds < Double(limitSeconds) + Double(limitAttoseconds) * 1e-18 ? .seconds(seconds) : limit
    }
}
