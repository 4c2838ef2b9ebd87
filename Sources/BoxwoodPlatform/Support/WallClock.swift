#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The wall clock, for times other processes read (a reader slot's claim time): `CLOCK_REALTIME`, which every
/// process on the machine shares (a monotonic clock's origin may differ between processes on Darwin).
public enum WallClock {
    /// Whole seconds since 1970-01-01 UTC.
    public static func secondsSinceEpoch() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(max(0, now.tv_sec))
    }
}
