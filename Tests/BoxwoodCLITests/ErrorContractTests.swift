@testable import BoxwoodStore
import Foundation
import Testing

/// The one error contract of `boxwood` (`CommandFailure`): every subcommand reports a failure as one line
/// `boxwood: <what> (<where>)` on stderr and nothing on stdout; with `--json`, as one object
/// `{"error": {"code", "message", "path"}}` on stdout and nothing on stderr; exit codes 1 not found, 2 bad input,
/// 3 damaged, 4 locked.
@Suite("boxwood error contract")
struct ErrorContractTests {
    /// Every subcommand that takes a database path, given `path`.
    static func commands(_ path: String, _ dir: TempDir) -> [[String]] {
        [["stat", path], ["dump", path], ["check", path], ["compact", path], ["backup", path, dir.path("copy")],
         ["watch", path, "--count", "1"], ["search", path, "fox"], ["history", path, "2:3001"], ["readers", path], ["tables", path], ["recover", path, dir.path("salvaged")],
         ["get", path, "1", "k"], ["put", path, "1", "k", "v"], ["del", path, "1", "k"]]
    }

    /// Those with `--json`.
    static let jsonCommands: Set<String> = ["stat", "check", "compact", "backup", "watch", "search", "history", "readers", "tables", "recover"]

    func expectLine(_ result: CLIResult, place: String, _ command: [String]) {
        #expect(result.output.isEmpty, "\(command): stdout \(result.output)")
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty, "\(command): one line, got \(result.stderr)")
        #expect(result.stderr.hasPrefix("boxwood: "), "\(command): \(result.stderr)")
        #expect(result.stderr.hasSuffix(" (\(place))\n"), "\(command): \(result.stderr)")
    }

    func expectJSON(_ result: CLIResult, place: String, _ command: [String]) throws {
        #expect(result.stderr.isEmpty, "\(command): stderr \(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        #expect(object?.keys.sorted() == ["error"], "\(command): \(result.output)")
        let error = object?["error"] as? [String: Any]
        #expect(error?["code"] as? Int == Int(result.status), "\(command)")
        #expect((error?["message"] as? String)?.isEmpty == false, "\(command)")
        #expect(error?["path"] as? String == place, "\(command): \(result.output)")
    }

    @Test("a missing database: exit 1, one line naming the path, or the JSON error object")
    func missingDatabase() throws {
        let dir = try TempDir()
        let missing = dir.path("missing")
        for command in Self.commands(missing, dir) {
            let plain = try CLI.run(command)
            #expect(plain.status == 1, "\(command): \(plain.status)")
            expectLine(plain, place: missing, command)
            if Self.jsonCommands.contains(command[0]) {
                let json = try CLI.run(command + ["--json"])
                #expect(json.status == 1, "\(command) --json")
                try expectJSON(json, place: missing, command + ["--json"])
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty, "nothing was created")
    }

    @Test("a damaged database: check lists every problem and exits 3; opening through a damaged meta is exit 3")
    func damagedDatabase() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        var text = "boxwood-dump 1\ntable 1 binary\n"
        for i in 0..<3_000 { text += String(format: "%08x", i) + "\t" + String(repeating: "6b", count: 120) + "\n" }
        #expect(try CLI.run(["load", db], input: text).status == 0)
        var data = try Data(contentsOf: URL(fileURLWithPath: db + "/data"))
        let pages = data.count / PageLayout.pageSize
        // Two leaf-level pages far apart: check must report both, not stop at the first.
        for page in [pages / 3, 2 * pages / 3] { data[page * PageLayout.pageSize + 200] ^= 0xff }
        try data.write(to: URL(fileURLWithPath: db + "/data"))
        let check = try CLI.run(["check", db])
        #expect(check.status == 3, "\(check.stderr)")
        let problems = check.output.split(separator: "\n")
        #expect(problems.count >= 2, "every problem is listed: \(check.output)")
        let json = try CLI.run(["check", db, "--json"])
        #expect(json.status == 3)
        let object = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
        #expect(object?["ok"] as? Bool == false)
        #expect(((object?["problems"] as? [String]) ?? []).count >= 2)
        // Both meta pages damaged: the database cannot be opened at all.
        for slot in 0..<2 { data[slot * PageLayout.pageSize + 64] ^= 0xff }
        try data.write(to: URL(fileURLWithPath: db + "/data"))
        for command in [["stat", db], ["dump", db], ["backup", db, dir.path("copy")]] {
            let result = try CLI.run(command)
            #expect(result.status == 3 || result.status == 2, "\(command): \(result.status) \(result.stderr)")
            expectLine(result, place: db + "/data", command)
        }
    }

    @Test("bad input is exit 2: a path that is a file, a destination that exists, an unparsable argument")
    func badInput() throws {
        let dir = try TempDir()
        let file = dir.path("file")
        try Data("text".utf8).write(to: URL(fileURLWithPath: file))
        for command in [["stat", file], ["check", file], ["backup", file, dir.path("copy")]] {
            let result = try CLI.run(command)
            #expect(result.status == 2, "\(command): \(result.status)")
            expectLine(result, place: file, command)
        }
        let usage = try CLI.run(["history", dir.path("db"), "not-a-peer"])
        #expect(usage.status == 2)
    }

    @Test("shell completion scripts name every subcommand", arguments: ["bash", "zsh", "fish"])
    func completionScripts(shell: String) throws {
        let result = try CLI.run(["--generate-completion-script", shell])
        #expect(result.status == 0)
        for command in ["stat", "dump", "load", "check", "compact", "backup", "readers", "watch", "search", "history", "get", "put", "del", "tables", "recover"] {
            #expect(result.output.contains(command), "\(shell) completion lacks \(command)")
        }
    }

    @Test("--help lists the exit codes and the error format")
    func helpListsExitCodes() throws {
        let help = try CLI.run(["--help"])
        #expect(help.status == 0)
        let text = help.output.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "  ", with: " ")
        #expect(text.contains("0 ok, 1 failure or not found, 2 bad input or usage, 3 database damaged, 4 locked"), "\(help.output)")
        #expect(text.contains("boxwood: <what> (<where>)"))
    }
}
