// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Boxwood",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "BoxwoodStore", targets: ["BoxwoodStore"]),
        .library(name: "BoxwoodFullText", targets: ["BoxwoodFullText"]),
        .library(name: "Boxwood", targets: ["Boxwood"]),
        .library(name: "BoxwoodSync", targets: ["BoxwoodSync"]),
        .library(name: "BoxwoodSyncSimulator", targets: ["BoxwoodSyncSimulator"]),
        .executable(name: "boxwood", targets: ["boxwood"]),
        .executable(name: "boxwood-sync-child", targets: ["boxwood-sync-child"]),
        .executable(name: "boxwood-large-account", targets: ["boxwood-large-account"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-atomics", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
        // The benchmark's latency histograms only (boxwood-bench); no library product depends on it.
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        // A header-only prefetch hint (no library to link).
        .systemLibrary(name: "CPrefetch", path: "Sources/CPrefetch"),
        // The platform layer: owned descriptors, pipes, child processes (every OS call of those goes through it).
        .systemLibrary(name: "CBoxwoodPlatform", path: "Sources/CBoxwoodPlatform"),
        .target(name: "BoxwoodPlatform", dependencies: ["CBoxwoodPlatform", .product(name: "SystemPackage", package: "swift-system")]),
        // A pure-Swift LZ4 block codec (the same bytes as liblz4's block format; builds on every platform).
        .target(name: "BoxwoodLZ4"),
        .target(name: "BoxwoodStore", dependencies: [.target(name: "CLZ4", condition: .when(platforms: [.linux])), "BoxwoodLZ4", "CPrefetch", "BoxwoodPlatform", .product(name: "SystemPackage", package: "swift-system"), .product(name: "Atomics", package: "swift-atomics"), .product(name: "Crypto", package: "swift-crypto")]),
        // The full-text index, built on the engine's tables (see docs/full-text-index.md).
        .target(name: "BoxwoodFullText", dependencies: ["BoxwoodStore", "BoxwoodPlatform"]),
        // Test doubles of the engine's file seam: a simulated disk that loses unsynced writes on a power cut, and
        // files that fail on command. Used by the tests and the crash workload; no shipped product contains it.
        .target(name: "BoxwoodStoreTesting", dependencies: ["BoxwoodStore", "BoxwoodPlatform", .product(name: "SystemPackage", package: "swift-system")]),
        .target(name: "Boxwood", dependencies: ["BoxwoodStore", "BoxwoodFullText", "BoxwoodPlatform", .product(name: "Logging", package: "swift-log")]),
        .target(name: "BoxwoodSync", dependencies: ["BoxwoodStore", "Boxwood", "BoxwoodPlatform", .product(name: "SystemPackage", package: "swift-system"), .product(name: "Logging", package: "swift-log")]),
        // A deterministic simulated server (with a fault layer) for testing the sync engine.
        .target(name: "BoxwoodSyncSimulator", dependencies: ["Boxwood", "BoxwoodSync", "BoxwoodPlatform", .product(name: "SystemPackage", package: "swift-system")]),
        // A sync client in its own process, over the simulator's process transport (the kill-and-restart sync test).
        .executableTarget(name: "boxwood-sync-child", dependencies: ["Boxwood", "BoxwoodSync", "BoxwoodSyncSimulator", "BoxwoodPlatform"]),
        // A sync of a large synthetic account in one process, reporting its peak memory (the large-account test).
        .executableTarget(name: "boxwood-large-account", dependencies: ["Boxwood", "BoxwoodSync", "BoxwoodSyncSimulator", "BoxwoodPlatform"]),
        .executableTarget(
            name: "boxwood",
            dependencies: [
                "BoxwoodStore",
                "Boxwood",
                "BoxwoodSync",
                "BoxwoodSyncSimulator",
                "BoxwoodPlatform",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The kill-and-reopen crash test: a child executable and the workload it shares with the test.
        .target(name: "BoxwoodCrashWorkload", dependencies: ["BoxwoodStore"]),
        .executableTarget(name: "boxwood-crash-child", dependencies: ["BoxwoodStore", "BoxwoodCrashWorkload"]),
        // The processes of the multi-process tests.
        .executableTarget(name: "boxwood-process-child", dependencies: ["BoxwoodStore", "BoxwoodCrashWorkload"]),
        // The benchmark harness and the system libraries of the engines it compares Boxwood with.
        .systemLibrary(
            name: "CSQLite",
            path: "Benchmarks/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(name: "CLMDB", path: "Benchmarks/CLMDB", providers: [.apt(["liblmdb-dev"])]),
        .executableTarget(
            name: "boxwood-bench",
            dependencies: [
                "BoxwoodStore",
                "BoxwoodFullText",
                "Boxwood",
                "BoxwoodSync",
                "BoxwoodSyncSimulator",
                "BoxwoodPlatform",
                .product(name: "SystemPackage", package: "swift-system"),
                "BoxwoodLZ4",
                "CLZ4",
                "CSQLite",
                "CLMDB",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "Benchmarks/boxwood-bench"
        ),
        // The fuzz targets (Fuzz/README.md): harnesses shared by the libFuzzer driver `boxwood-fuzz` (built with
        // `-sanitize=fuzzer,address` by scripts/fuzz.sh; replays corpus files when built normally) and the corpus
        // regression tests.
        .target(name: "BoxwoodFuzzTargets", dependencies: ["BoxwoodStore", "BoxwoodStoreTesting", "Boxwood", "BoxwoodSync", "BoxwoodSyncSimulator"],
                path: "Fuzz/Sources/BoxwoodFuzzTargets"),
        .executableTarget(name: "boxwood-fuzz", dependencies: ["BoxwoodFuzzTargets"], path: "Fuzz/Sources/boxwood-fuzz"),
        // What several test targets share (finding the executables they run as child processes).
        .target(name: "BoxwoodTestSupport", path: "Tests/BoxwoodTestSupport"),
        .testTarget(name: "BoxwoodFuzzRegressionTests", dependencies: ["BoxwoodFuzzTargets", "BoxwoodTestSupport", "boxwood-fuzz"]),
        .testTarget(name: "BoxwoodStoreTests", dependencies: ["BoxwoodStore", "BoxwoodFullText", "BoxwoodStoreTesting", "BoxwoodCrashWorkload"]),
        .testTarget(name: "BoxwoodCLITests", dependencies: ["BoxwoodTestSupport", "BoxwoodStore", "BoxwoodFullText", "Boxwood", "BoxwoodSync", "boxwood-sync-child"]),
        .testTarget(name: "BoxwoodTests", dependencies: ["BoxwoodStore", "BoxwoodFullText", "Boxwood", .product(name: "Logging", package: "swift-log"), .product(name: "InMemoryLogging", package: "swift-log")]),
        .testTarget(name: "BoxwoodSyncSimulatorTests", dependencies: ["Boxwood", "BoxwoodSync", "BoxwoodSyncSimulator"]),
        .testTarget(name: "BoxwoodSyncTests", dependencies: ["BoxwoodTestSupport", "BoxwoodStore", "Boxwood", "BoxwoodSync", "BoxwoodSyncSimulator", "BoxwoodPlatform", .product(name: "SystemPackage", package: "swift-system"), .product(name: "Logging", package: "swift-log"), .product(name: "InMemoryLogging", package: "swift-log"), "boxwood-sync-child", "boxwood-large-account"]),
        .testTarget(name: "BoxwoodCrashTests", dependencies: ["BoxwoodTestSupport", "BoxwoodStore", "BoxwoodCrashWorkload", "BoxwoodPlatform", .product(name: "SystemPackage", package: "swift-system"), "boxwood-crash-child", "boxwood-process-child"]),
        .testTarget(name: "BoxwoodPlatformTests", dependencies: ["BoxwoodPlatform"]),
        // liblz4 is here only to prove that both codecs write and read the same bytes.
        .testTarget(name: "BoxwoodLZ4Tests", dependencies: ["BoxwoodLZ4", "BoxwoodStore", .target(name: "CLZ4", condition: .when(platforms: [.linux]))]),
    ]
)
