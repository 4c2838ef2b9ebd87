import Testing
import BoxwoodPlatform
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `PlatformCondition`: a waiter sleeps until another thread changes the state and broadcasts, and a timed wait
/// gives up after its timeout with the predicate false.
@Suite struct PlatformConditionTests {
    final class Box: @unchecked Sendable { var value = 0 }

    @Test func aWaiterWakesWhenAnotherThreadChangesTheState() throws {
        let condition = PlatformCondition()
        let state = Box()
        let thread = try JoinableThread.start(name: "cond-test") {
            for step in 1...5 {
                usleep(2_000)
                condition.changeAndBroadcast { state.value = step }
            }
        }
        condition.wait { state.value == 5 }
        #expect(condition.withLock { state.value } == 5)
        thread.join()
    }

    @Test func aTimedWaitGivesUpWithThePredicateFalse() {
        let condition = PlatformCondition()
        let start = ContinuousClock.now
        let met = condition.wait(until: { false }, timeout: .milliseconds(30))
        #expect(!met)
        #expect(start.duration(to: .now) >= .milliseconds(30))
        #expect(condition.wait(until: { true }, timeout: .zero))
    }

    @Test func aTimedWaitReturnsTrueWhenTheStateChangesFirst() throws {
        let condition = PlatformCondition()
        let state = Box()
        let thread = try JoinableThread.start(name: "cond-test") {
            usleep(5_000)
            condition.changeAndBroadcast { state.value = 1 }
        }
        #expect(condition.wait(until: { state.value == 1 }, timeout: .seconds(60)))
        thread.join()
    }
}
