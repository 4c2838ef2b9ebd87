import Foundation
import Testing

/// `boxwood demo --no-tui` end to end: a client process syncing the simulated server under faults, killed and
/// restarted, then the verdict computed from the databases (not printed unconditionally: the summary's numbers
/// and the verdict come from the consistency check).
@Suite("demo", .timeLimit(.minutes(3)))
struct DemoTests {
    @Test func shortDemoEndsWithAConsistentVerdict() throws {
        let dir = try TempDir()
        let data = dir.path("demo-data")
        let demo = try CLI.run(["demo", "--no-tui", "--duration", "2", "--seed", "5", "--data-dir", data])
        #expect(demo.status == 0, "\(demo.stderr)\n\(demo.output)")
        for phase in ["first sync", "offline", "catch-up", "live", "killed with SIGKILL", "settling", "summary",
                      "updates applied", "gaps repaired", "holes filled", "TransactionStateVersion", "database size"] {
            #expect(demo.output.contains(phase), "missing \(phase)")
        }
        let lines = demo.output.split(separator: "\n")
        #expect(lines.last == "verdict: consistent", "\(lines.suffix(3))")
        // The database it leaves is a valid Boxwood database the other tools read.
        #expect(try CLI.run(["check", data + "/db"]).output == "ok\n")
        // A directory the demo did not create is refused.
        let precious = dir.path("precious")
        try FileManager.default.createDirectory(atPath: precious, withIntermediateDirectories: false)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: precious + "/file"))
        let refused = try CLI.run(["demo", "--no-tui", "--duration", "1", "--data-dir", precious])
        #expect(refused.status == 2)
        #expect(FileManager.default.fileExists(atPath: precious + "/file"))
    }

    @Test func badDurationIsAUsageError() throws {
        let result = try CLI.run(["demo", "--duration", "0"])
        #expect(result.status == 2)
    }
}
