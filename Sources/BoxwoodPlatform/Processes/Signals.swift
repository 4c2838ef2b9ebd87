#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Process-wide signal settings.
public enum ProcessSignals {
    /// Ignores SIGPIPE in this process, so that writing to a pipe whose reader is gone fails with EPIPE instead of
    /// killing the process. (Children started by ``ChildProcess`` get SIGPIPE back at its default action.)
    public static func ignoreBrokenPipe() {
        _ = signal(SIGPIPE, SIG_IGN)
    }
}
