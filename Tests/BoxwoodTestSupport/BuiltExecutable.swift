import Foundation

/// Finds an executable of this package that `swift build` built, for tests that run it as a child process (the
/// tests cannot build it themselves: `swift build` before `swift test` builds every product).
public enum BuiltExecutable {
    /// The path of executable `name`: the path in environment variable `override` when it is set (and, when
    /// `overrideMustNameIt`, ends in `name`), then next to the test bundle (the same `.build/<triple>/<config>`
    /// directory: on Linux `Bundle.main` is the xctest runner there, on macOS the `.xctest` bundle is in it), then
    /// the package's `.build/debug` and `.build/release`. Nil when none of them is an executable file.
    public static func locate(_ name: String, override: String, overrideMustNameIt: Bool = false,
                              packageRoot: URL = BuiltExecutable.packageRoot) -> String? {
        var candidates: [URL] = []
        if let path = ProcessInfo.processInfo.environment[override], !path.isEmpty,
           !overrideMustNameIt || URL(fileURLWithPath: path).lastPathComponent == name {
            candidates.append(URL(fileURLWithPath: path))
        }
        for bundle in [Bundle.main] + Bundle.allBundles {
            candidates.append(bundle.bundleURL.appendingPathComponent(name))
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent(name))
        }
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent(name))
        }
        for config in ["debug", "release"] {
            candidates.append(packageRoot.appendingPathComponent(".build/\(config)/\(name)"))
        }
        return candidates.first { url in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && !isDirectory.boolValue
                && FileManager.default.isExecutableFile(atPath: url.path)
        }?.path
    }

    /// The package's root directory, found from this source file (Tests/BoxwoodTestSupport/…).
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
