import BoxwoodStore

/// The `boxwood` tool's version and the line `boxwood --version` prints.
enum ToolVersion {
    /// The tool's version: the one place it is set.
    static let number = "0.1.0"

    /// How this binary was built: `debug` or `release`.
    static var build: String {
        #if DEBUG
        return "debug"
        #else
        return "release"
        #endif
    }

    /// `boxwood 0.1.0 (data format 1, wal format 4, release)`: the tool version, the engine's data file and WAL
    /// format versions (``BoxwoodFormat``) and the build configuration.
    static var line: String {
        "boxwood \(number) (data format \(BoxwoodFormat.dataVersion), wal format \(BoxwoodFormat.walVersion), \(build))"
    }
}
