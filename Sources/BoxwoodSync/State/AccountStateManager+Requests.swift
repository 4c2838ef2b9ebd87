import Boxwood

/// Server requests: retried until the server answers, backing off exponentially (capped) or as long as the
/// server's flood wait says, until the manager stops.
extension AccountStateManager {
    /// Calls the server until it answers.
    ///
    /// - Throws: ``SyncError/stopped`` once the manager stops (a request in flight ends with it).
    func request<T: Sendable>(_ body: @Sendable () async throws(SyncTransportError) -> T) async throws(SyncError) -> T {
        var delay = configuration.retryInitialDelay
        while !stopped {
            do {
                return try await body()
            } catch {
                statistics.retries += 1
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

    /// A server's flood wait of `seconds`, at most `limit`; nil when it is not a finite, non-negative number
    /// (`Duration.seconds` traps on NaN, infinities and values beyond about 1.7e20).
    static func floodWait(_ seconds: Double, limit: Duration) -> Duration? {
        guard seconds.isFinite, seconds >= 0 else { return nil }
        let (limitSeconds, limitAttoseconds) = limit.components
        return seconds < Double(limitSeconds) + Double(limitAttoseconds) * 1e-18 ? .seconds(seconds) : limit
    }
}
