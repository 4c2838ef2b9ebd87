#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutual-exclusion lock over a heap-allocated `pthread_mutex_t` (the mutex must never move, so it does not live
/// inline in a Swift value). For the platform layer's own small critical sections; it never blocks on I/O.
public final class PlatformLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // Cannot fail, so it is not a thrown error: with default attributes (nil), glibc's pthread_mutex_init always
        // returns 0, and Darwin's fails only for an invalid attribute object (EINVAL), of which none is passed.
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init with default attributes failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the lock held.
    public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
