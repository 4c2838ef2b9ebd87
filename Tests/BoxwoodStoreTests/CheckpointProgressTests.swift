import Testing
import BoxwoodPlatform
@testable import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `CheckpointProgress`, which commits pace themselves by while a background checkpoint runs: without a rate from an
/// earlier checkpoint the share of bytes written is the estimate; with one, the time since the start against the
/// expected duration; the end makes every share done and wakes whoever waits; an ended checkpoint reports its rate.
@Suite struct CheckpointProgressTests {
    @Test func withoutARateTheBytesWrittenAreTheEstimate() throws {
        let progress = CheckpointProgress(expectedBytes: 1_000, nanosecondsPerByte: nil)
        #expect(progress.expectedDuration == nil)
        #expect(progress.hasDone(0))
        #expect(!progress.hasDone(0.5))
        progress.noteWritten(499)
        #expect(!progress.hasDone(0.5))
        progress.noteWritten(500)
        #expect(progress.hasDone(0.5) && !progress.hasDone(0.51))
        progress.noteWritten(100)  // a smaller total never moves it back
        #expect(progress.hasDone(0.5))
        #expect(progress.nanosecondsPerByte == nil, "no rate before the end")
        let writer = try JoinableThread.start(name: "progress-test") {
            for bytes in stride(from: 600, through: 1_000, by: 100) {
                usleep(1_000)
                progress.noteWritten(UInt64(bytes))
            }
        }
        progress.wait(untilDone: 1)
        #expect(progress.hasDone(1))
        writer.join()
        progress.end()
        #expect(progress.hasDone(1) && progress.nanosecondsPerByte.map { $0 > 0 } == true)
    }

    @Test func withARateTheTimeIsTheEstimateAndTheEndWakesTheWaiter() throws {
        // 60 ms per byte, 1,000 bytes: a minute expected.
        let progress = CheckpointProgress(expectedBytes: 1_000, nanosecondsPerByte: 60_000_000)
        #expect(progress.expectedDuration == .seconds(60))
        #expect(!progress.hasDone(0.5))
        progress.noteWritten(1_000)
        #expect(!progress.hasDone(0.5), "with a rate, bytes written do not count: the final sync is most of the work")
        // 1/6000 of it (10 ms) passes soon.
        progress.wait(untilDone: 1.0 / 6_000)
        #expect(progress.hasDone(1.0 / 6_000))
        // A waiter for all of it is woken by the end, not by the minute running out.
        let ender = try JoinableThread.start(name: "progress-test") {
            usleep(20_000)
            progress.end()
        }
        let start = ContinuousClock.now
        progress.wait(untilDone: 1)
        #expect(start.duration(to: .now) < .seconds(60))
        #expect(progress.hasDone(1))
        ender.join()
    }
}
