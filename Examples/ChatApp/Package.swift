// swift-tools-version:6.0
// A separate app package that embeds Boxwood the way the README's "Adding Boxwood to an app" says: it sees only
// the library products, never the targets. `make test` builds and runs it (`make example`).
import PackageDescription

let package = Package(
    name: "ChatApp",
    platforms: [.macOS(.v14), .iOS(.v17)],
    dependencies: [
        // An app outside this repository writes `.package(url: "https://github.com/<owner>/boxwood.git", from: "…")`.
        .package(name: "Boxwood", path: "../.."),
    ],
    targets: [
        .executableTarget(name: "ChatApp", dependencies: [.product(name: "Boxwood", package: "Boxwood")]),
    ]
)
