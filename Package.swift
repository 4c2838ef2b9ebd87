// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Boxwood",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "BoxwoodStore", targets: ["BoxwoodStore"]),
        .library(name: "Boxwood", targets: ["Boxwood"]),
        .library(name: "BoxwoodSync", targets: ["BoxwoodSync"]),
        .executable(name: "boxwood", targets: ["boxwood"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        .target(name: "BoxwoodStore", dependencies: ["CLZ4"]),
        .target(name: "Boxwood", dependencies: ["BoxwoodStore"]),
        .target(name: "BoxwoodSync", dependencies: ["Boxwood"]),
        .executableTarget(
            name: "boxwood",
            dependencies: [
                "BoxwoodStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The kill-and-reopen crash test: a child executable and the workload it shares with the test.
        .target(name: "BoxwoodCrashWorkload", dependencies: ["BoxwoodStore"]),
        .executableTarget(name: "boxwood-crash-child", dependencies: ["BoxwoodStore", "BoxwoodCrashWorkload"]),
        .testTarget(name: "BoxwoodStoreTests", dependencies: ["BoxwoodStore"]),
        .testTarget(name: "BoxwoodCLITests", dependencies: ["BoxwoodStore"]),
        .testTarget(name: "BoxwoodCrashTests", dependencies: ["BoxwoodStore", "BoxwoodCrashWorkload", "boxwood-crash-child"]),
    ]
)
