#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with a condition variable (heap-allocated `pthread_mutex_t` and `pthread_cond_t`, which must never move):
/// one thread changes the guarded state and broadcasts, others sleep in the kernel until it does. Waiters re-check
/// their predicate after every wake-up (spurious ones included), so ``wait(until:)`` takes the predicate.
public final class PlatformCondition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        // Invariant that rules a failure out (so these are preconditions, not thrown errors): nothing from a file or
        // a server reaches these calls. glibc's pthread_mutex_init and pthread_cond_init always return 0 (for the
        // condition, with default attributes or, on Linux, an attribute object initialized here whose clock is
        // CLOCK_MONOTONIC, a clock pthread_condattr_setclock accepts); Darwin's fail only for an invalid attribute
        // object (EINVAL), and none is passed there. A failure would be a broken platform, as in `PlatformLock`.
        let mutexStatus = pthread_mutex_init(mutex, nil)
        precondition(mutexStatus == 0, "pthread_mutex_init with default attributes failed with \(mutexStatus)")
        #if os(Linux)
        // Timed waits measure CLOCK_MONOTONIC, which a change of the wall clock does not move.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        let conditionStatus = pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        #else
        let conditionStatus = pthread_cond_init(condition, nil)
        #endif
        precondition(conditionStatus == 0, "pthread_cond_init failed with \(conditionStatus)")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held, then wakes every waiter (the state they wait on may have changed).
    public func changeAndBroadcast<Result>(_ body: () -> Result) -> Result {
        pthread_mutex_lock(mutex)
        let result = body()
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
        return result
    }

    /// Runs `body` with the mutex held, waking nobody.
    public func withLock<Result>(_ body: () -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    /// Sleeps (mutex released while asleep) until `predicate`, evaluated with the mutex held, is true or `timeout`
    /// has passed (a monotonic clock); returns the predicate's last value.
    public func wait(until predicate: () -> Bool, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !predicate() {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return false }
            let parts = left.components
            #if os(Linux)
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            var nanoseconds = Int(now.tv_nsec) + Int(parts.attoseconds / 1_000_000_000)
            var seconds = Int(now.tv_sec) + Int(parts.seconds) + nanoseconds / 1_000_000_000
            nanoseconds %= 1_000_000_000
            if seconds < 0 { seconds = 0 }
            var until = timespec(tv_sec: seconds, tv_nsec: nanoseconds)
            _ = pthread_cond_timedwait(condition, mutex, &until)
            #else
            var relative = timespec(tv_sec: Int(parts.seconds), tv_nsec: Int(parts.attoseconds / 1_000_000_000))
            _ = pthread_cond_timedwait_relative_np(condition, mutex, &relative)
            #endif
        }
        return true
    }

    /// Sleeps (mutex released while asleep) until `predicate`, evaluated with the mutex held, is true.
    public func wait(until predicate: () -> Bool) {
        pthread_mutex_lock(mutex)
        while !predicate() { pthread_cond_wait(condition, mutex) }
        pthread_mutex_unlock(mutex)
    }
}
