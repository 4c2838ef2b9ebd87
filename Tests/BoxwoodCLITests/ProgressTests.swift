import Foundation
import Testing

/// Progress bars appear on a terminal's stderr only, and never change what goes to stdout.
/// `BOXWOOD_PROGRESS_DELAY=0` makes them draw from the start (normally only work that takes a while shows one).
@Suite struct ProgressTests {
    private let immediately = ["BOXWOOD_PROGRESS_DELAY": "0"]

    /// A dump of `count` entries in one binary table.
    private func dumpText(_ count: Int) -> String {
        var text = "boxwood-dump 1\ntable 1 binary\n"
        for i in 0..<count { text += String(format: "%08x\t%064x\n", i, i) }
        return text
    }

    @Test func loadCheckAndDumpDrawOnATerminal() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let text = dumpText(9_000)
        let load = try CLI.runWithTerminalStderr(["load", db, "--batch", "5000"], stdin: Data(text.utf8), environment: immediately)
        #expect(load.status == 0, "\(load.stderr)")
        #expect(load.output == "committed 5000\ncommitted 9000\n")
        #expect(load.stderr.contains("entries"), "\(load.stderr)")
        #expect(load.stderr.contains("%"), "stdin is a file: a bar with a percentage: \(load.stderr)")

        let check = try CLI.runWithTerminalStderr(["check", db], environment: immediately)
        #expect(check.status == 0)
        #expect(check.output == "ok\n")
        #expect(check.stderr.contains("100%"), "\(check.stderr)")
        #expect(check.stderr.contains("pages"), "\(check.stderr)")

        let dump = try CLI.runWithTerminalStderr(["dump", db], environment: immediately)
        #expect(dump.status == 0)
        #expect(dump.output == text)
        #expect(dump.stderr.contains("/9000 entries"), "\(dump.stderr)")
    }

    @Test func backupAndCompactDrawOnATerminalAndQuietSilencesEveryBar() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        #expect(try CLI.run(["load", db], stdin: Data(dumpText(9_000).utf8)).status == 0)
        let backup = try CLI.runWithTerminalStderr(["backup", db, dir.path("copy")], environment: immediately)
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(backup.stderr.contains("/9000 entries"), "\(backup.stderr)")
        let compact = try CLI.runWithTerminalStderr(["compact", db], environment: immediately)
        #expect(compact.status == 0, "\(compact.stderr)")
        #expect(compact.stderr.contains("entries"), "\(compact.stderr)")
        for command in [["backup", db, dir.path("copy2"), "--quiet"], ["compact", db, "--quiet"], ["check", db, "--quiet"],
                        ["dump", db, "--quiet"], ["load", dir.path("db2"), "--quiet"]] {
            let input = command[0] == "load" ? Data(dumpText(5_000).utf8) : Data()
            let result = try CLI.runWithTerminalStderr(command, stdin: input, environment: immediately)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(result.stderr.isEmpty, "\(command) --quiet drew: \(result.stderr)")
        }
    }

    @Test func nothingIsDrawnWithoutATerminal() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let load = try CLI.run(["load", db], stdin: Data(dumpText(5_000).utf8), environment: immediately)
        #expect(load.status == 0)
        #expect(load.stderr.isEmpty, "\(load.stderr)")
        let check = try CLI.run(["check", db], environment: immediately)
        #expect(check.stderr.isEmpty)
        let dump = try CLI.run(["dump", db], environment: immediately)
        #expect(dump.stderr.isEmpty)
    }
}
