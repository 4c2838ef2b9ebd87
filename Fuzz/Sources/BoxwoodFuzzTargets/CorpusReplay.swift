import Foundation

/// Corpus files on disk: replaying them through a target (the regression mode of `boxwood-fuzz` and the
/// `BoxwoodFuzzRegressionTests`), and writing a target's seeds.
public enum CorpusReplay {
    /// The input files at `path`: the file itself, or the regular files of the directory (not hidden), sorted.
    public static func inputFiles(at path: String) throws -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        guard isDirectory.boolValue else { return [path] }
        return try FileManager.default.contentsOfDirectory(atPath: path)
            .filter { !$0.hasPrefix(".") }
            .sorted()
            .map { path + "/" + $0 }
            .filter { var d: ObjCBool = false; return FileManager.default.fileExists(atPath: $0, isDirectory: &d) && !d.boolValue }
    }

    /// Runs every input at `paths` (files or directories) through `target`; returns how many ran. `before` is
    /// called with each file's path first (to name the input if it crashes).
    @discardableResult
    public static func replay(_ target: FuzzTarget, paths: [String], before: (String) -> Void = { _ in }) throws -> Int {
        var count = 0
        for path in paths {
            for file in try inputFiles(at: path) {
                before(file)
                let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
                bytes.withUnsafeBytes { target.fuzzOne($0) }
                count += 1
            }
        }
        return count
    }

    /// Writes `target`'s seeds into `directory` (created if needed) as `seed-*` files; returns their paths.
    @discardableResult
    public static func writeSeeds(_ target: FuzzTarget, to directory: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var written: [String] = []
        for (name, bytes) in try target.seeds() {
            let path = directory + "/" + name
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            written.append(path)
        }
        return written
    }
}
