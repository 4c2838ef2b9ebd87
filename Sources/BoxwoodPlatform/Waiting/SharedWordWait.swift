import CBoxwoodPlatform
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sleeping in the kernel until a 32-bit word in memory shared between processes (a `MAP_SHARED` mapping of one
/// file) changes, and waking those who sleep on it — the primitive behind "no polling".
///
/// - Linux: a shared futex (`FUTEX_WAIT` / `FUTEX_WAKE` without the private flag), keyed by the file page, so a
///   waiter in one process is woken by a waker in another.
/// - Darwin: `os_sync_wait_on_address` with the shared flag (macOS 14.4, iOS 17.4 and later). Where it does not
///   exist, a timed sleep of at least one second stands in: the only polling left, and only there.
///
/// Waits return on a wake, when the word no longer equals the expected value, at the timeout, on a signal, or
/// spuriously: callers always re-read the word and decide.
public enum SharedWordWait {
    /// The sleep used where no kernel wait on shared memory exists.
    public static let fallbackInterval: Duration = .seconds(1)

    /// Sleeps while `*address == expected`, up to `timeout` (nil: until woken).
    public static func wait(_ address: UnsafeMutablePointer<UInt32>, whileEquals expected: UInt32, timeout: Duration?) {
        #if os(Linux)
        if let timeout {
            let (seconds, attoseconds) = max(timeout, .zero).components
            var interval = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            _ = boxwood_futex_wait_shared(address, expected, &interval)
        } else {
            _ = boxwood_futex_wait_shared(address, expected, nil)
        }
        #elseif canImport(Darwin)
        if #available(macOS 14.4, iOS 17.4, tvOS 17.4, watchOS 10.4, visionOS 1.1, *) {
            if let timeout {
                let (seconds, attoseconds) = max(timeout, .zero).components
                let nanoseconds = UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
                _ = os_sync_wait_on_address_with_timeout(UnsafeMutableRawPointer(address), UInt64(expected), 4,
                                                         OS_SYNC_WAIT_ON_ADDRESS_SHARED, OS_CLOCK_MACH_ABSOLUTE_TIME,
                                                         nanosecondsToMachTicks(nanoseconds))
            } else {
                _ = os_sync_wait_on_address(UnsafeMutableRawPointer(address), UInt64(expected), 4, OS_SYNC_WAIT_ON_ADDRESS_SHARED)
            }
        } else {
            fallbackSleep(timeout)
        }
        #else
        fallbackSleep(timeout)
        #endif
    }

    /// Wakes every thread, in any process, sleeping on `address`.
    public static func wakeAll(_ address: UnsafeMutablePointer<UInt32>) {
        #if os(Linux)
        _ = boxwood_futex_wake_shared(address, CInt.max)
        #elseif canImport(Darwin)
        if #available(macOS 14.4, iOS 17.4, tvOS 17.4, watchOS 10.4, visionOS 1.1, *) {
            _ = os_sync_wake_by_address_all(UnsafeMutableRawPointer(address), 4, OS_SYNC_WAKE_BY_ADDRESS_SHARED)
        }
        #endif
    }

    private static func fallbackSleep(_ timeout: Duration?) {
        let interval = min(timeout ?? fallbackInterval, fallbackInterval)
        let (seconds, attoseconds) = max(interval, .zero).components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        _ = nanosleep(&request, nil)
    }
}

#if canImport(Darwin)
/// Converts nanoseconds to mach absolute-time ticks (the clock os_sync_wait_on_address_with_timeout takes).
private func nanosecondsToMachTicks(_ nanoseconds: UInt64) -> UInt64 {
    var base = mach_timebase_info_data_t()
    mach_timebase_info(&base)
    guard base.numer != 0 else { return nanoseconds }
    return nanoseconds.multipliedReportingOverflow(by: UInt64(base.denom)).partialValue / UInt64(base.numer)
}
#endif
