#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Set by the SIGINT/SIGTERM handler of ``StopSignals``.
nonisolated(unsafe) private var stopSignalArrived: sig_atomic_t = 0

/// Turns SIGINT and SIGTERM into a request to stop that a polling loop checks, so that a long-running command
/// ends cleanly (closing the database, exit 0) instead of being killed. The handler only sets a flag.
final class StopSignals {
    /// Installs the handler and unblocks the signals (a parent may have started this process with them
    /// blocked).
    init() {
        stopSignalArrived = 0
        signal(SIGINT) { _ in stopSignalArrived = 1 }
        signal(SIGTERM) { _ in stopSignalArrived = 1 }
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// True once SIGINT or SIGTERM arrived.
    var requested: Bool { stopSignalArrived != 0 }

    /// Sleeps `seconds`, waking at least every 20 ms to check for a stop request. Returns false when one
    /// arrived.
    func sleep(_ seconds: Double) -> Bool {
        let deadline = ContinuousClock.now + .microseconds(Int64(seconds * 1_000_000))
        while !requested {
            let left = deadline - ContinuousClock.now
            if left <= .zero { return true }
            let (secs, attoseconds) = min(left, .milliseconds(20)).components
            var request = timespec(tv_sec: time_t(secs), tv_nsec: Int(attoseconds / 1_000_000_000))
            _ = nanosleep(&request, nil)
        }
        return false
    }
}
