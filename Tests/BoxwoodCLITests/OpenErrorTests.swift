@testable import BoxwoodStore
import Foundation
import Testing

/// The messages of every subcommand that opens a database when the path is not a usable database: one line
/// on stderr (or the JSON error object with `--json`), exit code 1 when missing and 2 otherwise, nothing created or changed.
@Suite struct OpenErrorTests {
    /// Every subcommand that opens `db`, with arguments that are otherwise valid.
    private func commands(_ db: String) -> [[String]] {
        [["stat", db], ["stat", db, "--json"], ["dump", db], ["check", db], ["check", db, "--json"], ["compact", db],
         ["watch", db, "--count", "1"], ["search", db, "fox"], ["history", db, "2:3001"]]
    }

    @Test func foreignFileAndDirectoryWithoutDatabase() throws {
        let dir = try TempDir()
        let file = dir.path("notes.txt")
        try Data("just some text\n".utf8).write(to: URL(fileURLWithPath: file))
        let emptyDir = dir.path("empty")
        try FileManager.default.createDirectory(atPath: emptyDir, withIntermediateDirectories: false)
        let foreign = dir.path("foreign")
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: false)
        try Data(repeating: 0x42, count: 3 * 4096).write(to: URL(fileURLWithPath: foreign + "/data"))

        let cases: [(String, String)] = [(file, "not a directory"), (emptyDir, "no data file"), (foreign, "the data file has no Boxwood header"),
                                         (dir.path("missing"), "no such directory")]
        for (path, reason) in cases {
            for command in commands(path) + [["load", path]] {
                if command[0] == "load" && path != file && path != foreign { continue }  // load creates a database there
                let result = try CLI.run(command, input: "boxwood-dump 1\n")
                #expect(result.exitedNormally, "\(command)")
                // Missing: not found (1). Something else: not a database, bad input (2).
                #expect(result.status == (reason == "no such directory" ? 1 : 2), "\(command): \(result.status) \(result.stderr)")
                if command.contains("--json") {
                    // The error contract's JSON form: on stdout, nothing on stderr.
                    #expect(result.stderr.isEmpty, "\(command): \(result.stderr)")
                    let object = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
                    let error = object?["error"] as? [String: Any]
                    #expect(error?["code"] as? Int == Int(result.status))
                    #expect((error?["message"] as? String)?.contains("not a Boxwood database: \(reason)") == true, "\(result.output)")
                    #expect(error?["path"] as? String == path)
                } else {
                    // One line: `boxwood: <what> (<where>)`.
                    #expect(result.stderr.hasPrefix("boxwood: not a Boxwood database: \(reason)"), "\(command): \(result.stderr)")
                    #expect(result.stderr.hasSuffix("(\(path))\n"), "\(command): \(result.stderr)")
                    #expect(result.stderr.split(separator: "\n").count == 1, "\(command): \(result.stderr)")
                    #expect(result.output.isEmpty, "\(command): \(result.output)")
                }
            }
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("missing")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: emptyDir).isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: foreign + "/data")) == Data(repeating: 0x42, count: 3 * 4096))
    }

    @Test func newerFormatVersionSaysWhichIsSupported() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        #expect(try CLI.run(["load", db], input: "boxwood-dump 1\ntable 1 binary\n01\t02\n").status == 0)
        // Both meta pages claim the next format version (with valid checksums).
        var data = try Data(contentsOf: URL(fileURLWithPath: db + "/data"))
        data.withUnsafeMutableBytes { raw in
            for slot in 0..<2 {
                let page = raw.baseAddress! + slot * PageLayout.pageSize
                store32(page, 40, ValueBox.formatVersion + 1)
                sealPage(page, pageNumber: UInt64(slot))
            }
        }
        try data.write(to: URL(fileURLWithPath: db + "/data"))
        for command in commands(db) + [["load", db]] {
            let result = try CLI.run(command, input: "boxwood-dump 1\n")
            #expect(result.status == 1, "\(command): \(result.status)")
            let report = command.contains("--json") ? result.output : result.stderr
            #expect(report.contains("data format version \(ValueBox.formatVersion + 1) is newer than this build supports (version \(ValueBox.formatVersion))"),
                    "\(command): \(result.stderr)")
            #expect(report.contains("use a newer boxwood"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: db + "/data")) == data)
    }

    /// A writer that died while changing the files leaves the header's writer state set (the kernel releases
    /// its lock): readers say it is safe to go on and work; the next writer recovers and clears it.
    @Test func crashedWriterIsSafeToContinue() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        #expect(try CLI.run(["load", db], input: "boxwood-dump 1\ntable 1 binary\n01\t02\n").status == 0)
        // A real crash: a writer killed in the middle of a load, holding the write lock in an open transaction
        // after its first commit. The kernel releases the lock: readers and the next writer go on at once.
        let killed = try RunningCLI(["load", db, "--batch", "2"], feedsStdin: true)
        killed.writeStdin("boxwood-dump 1\ntable 1 binary\n05\t06\n07\t08\n09\t0a\n")
        #expect(killed.waitForOutput { $0.contains("committed 2") }, "\(killed.errors)")
        kill(killed.process.processIdentifier, SIGKILL)
        try #require(killed.waitForExit())
        #expect(killed.process.terminationReason == .uncaughtSignal)
        let afterKill = try CLI.run(["dump", db])
        #expect(afterKill.output == "boxwood-dump 1\ntable 1 binary\n01\t02\n05\t06\n07\t08\n", "\(afterKill.stderr)")
        let relock = try CLI.run(["load", db, "--lock-timeout", "0.5"], input: "boxwood-dump 1\ntable 1 binary\n07\t08\n")
        #expect(relock.status == 0, "\(relock.stderr)")

        // A writer can also die while changing the files: then the header's writer state (offset 72) stays 1
        // with no lock held. Simulate that moment.
        try CLIFixture.markWriterStoppedMidWrite(db)

        for command in [["stat", db], ["dump", db], ["check", db]] {
            let result = try CLI.run(command)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("the last writer stopped in the middle of a write"), "\(command): \(result.stderr)")
            #expect(result.stderr.contains("safe to continue"))
            #expect(result.stderr.contains("WAL"))
        }
        let load = try CLI.run(["load", db], input: "boxwood-dump 1\ntable 1 binary\n03\t04\n")
        #expect(load.status == 0, "\(load.stderr)")
        #expect(load.stderr.contains("recovering from the WAL"), "\(load.stderr)")
        let after = try CLI.run(["dump", db])
        #expect(after.stderr.isEmpty, "\(after.stderr)")
        #expect(after.output == "boxwood-dump 1\ntable 1 binary\n01\t02\n03\t04\n05\t06\n07\t08\n")
    }

    /// A live writer holding the write lock: writers give up after --lock-timeout with a message that says it is
    /// safe to retry and that a crash would not have left the lock held; readers go on.
    @Test func heldWriteLock() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let box = try CLIFixture.openDatabaseWithOneEntry(db)
        defer { try? box.close() }
        try box.begin()
        for command in [["compact", db, "--lock-timeout", "0.2"], ["load", db, "--lock-timeout", "0.2"]] {
            let result = try CLI.run(command, input: "boxwood-dump 1\n")
            #expect(result.status == 4, "\(command)")
            #expect(result.stderr.contains("another process has held the write lock for more than 0.2 s"), "\(result.stderr)")
            #expect(result.stderr.contains("the next writer recovers from the WAL"))
            #expect(result.stderr.contains("safe to retry"))
        }
        #expect(try CLI.run(["check", db]).status == 0)
        box.abort()
    }

    /// Permissions do not apply to root, so these run the tool as `nobody` through `setpriv` (skipped when the
    /// tests do not run as root or `setpriv` is missing).
    @Test(.enabled(if: CLI.setpriv != nil)) func readOnlyDirectory() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        #expect(try CLI.run(["load", db], input: "boxwood-dump 1\ntable 1 binary\n01\t02\n").status == 0)
        // Boxwood's files are private (0600 in a 0700 directory): hand them to `nobody`, read-only.
        for name in try FileManager.default.contentsOfDirectory(atPath: db) {
            try FileManager.default.setAttributes([.ownerAccountName: "nobody", .posixPermissions: 0o400], ofItemAtPath: db + "/" + name)
        }
        try FileManager.default.setAttributes([.ownerAccountName: "nobody", .posixPermissions: 0o555], ofItemAtPath: db)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: db) }

        for command in [["load", db], ["compact", db]] {
            let result = try CLI.runAsNobody(command + ["--lock-timeout", "0.2"], input: "boxwood-dump 1\n")
            #expect(result.status == 1, "\(command): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("permission denied"), "\(command): \(result.stderr)")
            #expect(result.stderr.contains("read-only commands"), "\(command): \(result.stderr)")
        }
        // Reading works without write access (no shared header, nothing written)…
        let stat = try CLI.runAsNobody(["stat", db])
        #expect(stat.status == 0, "\(stat.stderr)")
        #expect(try CLI.runAsNobody(["dump", db]).output == "boxwood-dump 1\ntable 1 binary\n01\t02\n")
        #expect(try CLI.runAsNobody(["check", db]).status == 0)
        // …but following other processes' commits needs the shared header.
        let watch = try CLI.runAsNobody(["watch", db, "--count", "1"])
        #expect(watch.status == 1)
        #expect(watch.stderr.contains("not writable by this user"), "\(watch.stderr)")
    }
}
