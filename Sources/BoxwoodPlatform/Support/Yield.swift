#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Gives the processor to another runnable thread (for a spin that has gone on too long).
public func yieldProcessor() {
    _ = sched_yield()
}
