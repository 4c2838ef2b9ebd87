import BoxwoodFuzzTargets
import Foundation
import BoxwoodTestSupport
import Testing

/// Replays every input of every fuzz target's corpus (`Fuzz/Corpus/<target>/`: the seeds, the inputs fuzzing kept,
/// and the minimized reproducer of every crash found) through the target, each target in a child process running
/// the normally built `boxwood-fuzz` (so a crash fails this test instead of killing the test runner).
///
/// A reproducer of a crash that is not fixed yet is listed in `Fuzz/Corpus/known-crashes.txt`; it is replayed on
/// its own and expected to crash (a known issue). Once the bug is fixed the replay passes, and this test fails
/// until the line is removed from the list.
@Suite("fuzz corpus regression")
struct CorpusRegressionTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// `<target>/<file>` of each crash reproducer that is not fixed yet (`Fuzz/Corpus/known-crashes.txt`).
    static func knownCrashes() -> Set<String> {
        let list = fuzzDirectory.appendingPathComponent("Corpus/known-crashes.txt")
        guard let text = try? String(contentsOf: list, encoding: .utf8) else { return [] }
        // Each line: `<target>/<file>  <signature>  # comment`; comment lines start with `#`.
        return Set(text.split(separator: "\n").compactMap { line in
            guard let first = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first, !first.hasPrefix("#") else { return nil }
            return String(first)
        })
    }

    @Test("every corpus input replays without a crash", arguments: FuzzTargets.all.map(\.name))
    func replayCorpus(target: String) throws {
        guard let executable = Self.locate("boxwood-fuzz") else {
            Issue.record("boxwood-fuzz was not found; run `swift build` before `swift test` (or set BOXWOOD_FUZZ)")
            return
        }
        let directory = Self.fuzzDirectory.appendingPathComponent("Corpus/\(target)").path
        let files = try CorpusReplay.inputFiles(at: directory)
        #expect(!files.isEmpty, "the \(target) corpus has no inputs (at least its seeds belong there)")
        let known = Self.knownCrashes()
        let expectedCrashes = files.filter { known.contains("\(target)/\(URL(fileURLWithPath: $0).lastPathComponent)") }
        let regular = files.filter { !expectedCrashes.contains($0) }
        // Every input on both file backings of the database targets (`ScratchFiles`): real files, and the in-memory
        // disk fuzzing uses.
        for backing in ["disk", "memory"] where !regular.isEmpty {
            let result = try Self.run(executable, [target] + regular, files: backing)
            if result.status != 0 {
                // Name the input that crashed: the last one the replay announced.
                let culprit = result.stderr.split(separator: "\n").last { $0.hasPrefix("replaying ") }?.dropFirst("replaying ".count)
                Issue.record("""
                    \(target): replaying \(culprit.map(String.init) ?? "the corpus") on the \(backing) backing crashed \
                    (status \(result.status)). \
                    Reproduce: BOXWOOD_FUZZ_FILES=\(backing) boxwood-fuzz \(target) \(culprit.map(String.init) ?? directory)
                    \(Self.crashSummary(result.stderr))
                    """)
            }
        }
        for file in expectedCrashes {
            let result = try Self.run(executable, [target, file])
            withKnownIssue("\(target)/\(URL(fileURLWithPath: file).lastPathComponent) is a known crash (Fuzz/Corpus/known-crashes.txt)") {
                if result.status != 0 { Issue.record("crashed (status \(result.status)): \(Self.crashSummary(result.stderr))") }
            }
        }
    }

    /// The lines of a crash report that say what and where: the runtime's failure message and the first frames.
    static func crashSummary(_ stderr: String) -> String {
        let lines = stderr.split(separator: "\n", omittingEmptySubsequences: true)
        let message = lines.filter { $0.contains("Fatal error") || $0.contains("runtime failure") || $0.contains("ERROR: AddressSanitizer") }
        let frames = lines.filter { $0.range(of: #"^\s*\d+ .* in "#, options: .regularExpression) != nil }.prefix(8)
        var seen = Set<Substring>()
        let summary = (message.prefix(3) + frames).filter { seen.insert($0).inserted }.joined(separator: "\n")
        return summary.isEmpty ? String(stderr.suffix(2000)) : summary
    }

    /// Runs `executable` with `arguments`; its exit status (128 + signal when killed) and standard error.
    /// Runs `boxwood-fuzz` with `arguments`, its database targets on the `files` backing (`BOXWOOD_FUZZ_FILES`).
    static func run(_ executable: String, _ arguments: [String], files: String = "disk") throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["BOXWOOD_FUZZ_FILES"] = files
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return (status, String(decoding: data, as: UTF8.self))
    }

    /// Finds the built `boxwood-fuzz`: `BOXWOOD_FUZZ`, then the build directory (see `BuiltExecutable`).
    static func locate(_ name: String) -> String? {
        BuiltExecutable.locate(name, override: "BOXWOOD_FUZZ", packageRoot: fuzzDirectory.deletingLastPathComponent())
    }
}
