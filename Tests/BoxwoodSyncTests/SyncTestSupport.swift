import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator
import Foundation

/// A temporary directory removed when the value is dropped (unless ``keep`` is set).
final class SyncTemporaryDirectory {
    let path: String
    /// Keep the directory (for inspecting a failure).
    var keep = false

    init() {
        path = NSTemporaryDirectory() + "boxwood-sync-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { if !keep { try? FileManager.default.removeItem(atPath: path) } }
}

/// SplitMix64: the tests' own seeded generator.
struct TestRandom: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The seeds a test runs: `count` seeds from `base`, or only `BOXWOOD_SYNC_SEED` when it is set; the count is
/// multiplied by nothing unless `BOXWOOD_SYNC_SEEDS` overrides it.
func syncSeeds(default count: Int, base: UInt64) -> [UInt64] {
    let environment = ProcessInfo.processInfo.environment
    if let single = environment["BOXWOOD_SYNC_SEED"].flatMap(UInt64.init) { return [single] }
    let total = environment["BOXWOOD_SYNC_SEEDS"].flatMap(Int.init) ?? count
    return (0..<UInt64(total)).map { base &+ $0 }
}
