import BoxwoodStore
import Foundation
import Testing

/// End-to-end tests of the `boxwood` executable (built by `swift build` before `swift test`).
@Suite struct CLITests {
    @Test func loadThenDumpReproducesTheInputByteForByte() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let sample = DumpBuilder.sample()
        let load = try CLI.run(["load", db], input: sample.text)
        #expect(load.status == 0, "\(load.stderr)")
        let lines = load.output.split(separator: "\n")
        #expect(lines.last == "committed \(sample.entries)")
        #expect(lines.allSatisfy { $0.hasPrefix("committed ") })
        #expect(lines.count == (sample.entries + 999) / 1000)

        let dump = try CLI.run(["dump", db])
        #expect(dump.status == 0, "\(dump.stderr)")
        #expect(dump.output == sample.text)
    }

    @Test func dumpLoadDumpIsIdentical() throws {
        let dir = try TempDir()
        let first = dir.path("first")
        let second = dir.path("second")
        let sample = DumpBuilder.sample()
        #expect(try CLI.run(["load", first, "--batch", "50", "--durability", "full"], input: sample.text).status == 0)
        let dump1 = try CLI.run(["dump", first])
        #expect(dump1.status == 0)

        let load2 = try CLI.run(["load", second, "--batch", "7", "--durability", "off"], stdin: dump1.stdout)
        #expect(load2.status == 0, "\(load2.stderr)")
        #expect(load2.output.split(separator: "\n").count == (sample.entries + 6) / 7)
        let dump2 = try CLI.run(["dump", second])
        #expect(dump2.status == 0)
        #expect(dump2.stdout == dump1.stdout)
    }

    @Test func emptiedTableSurvivesDumpAndLoad() throws {
        let dir = try TempDir()
        let first = dir.path("first")
        let second = dir.path("second")
        do {
            let box = try ValueBox(path: first)
            let kept = ValueBoxTable(id: 4, keyType: .int64)
            let emptied = ValueBoxTable(id: 2, keyType: .binary)
            try box.begin()
            try box.set(kept, key: ValueBoxKey(int64: -3), value: MemoryBuffer([1, 2, 3]))
            try box.set(emptied, key: ValueBoxKey([9, 9]), value: MemoryBuffer([7]))
            try box.commit()
            try box.begin()
            try box.removeAllFromTable(emptied)
            try box.commit()
            try box.close()
        }
        let dump1 = try CLI.run(["dump", first])
        #expect(dump1.status == 0, "\(dump1.stderr)")
        #expect(dump1.output == "boxwood-dump 1\ntable 2 binary\ntable 4 int64\n-3\t010203\n")
        #expect(try CLI.run(["load", second], stdin: dump1.stdout).status == 0)
        #expect(try CLI.run(["dump", second]).stdout == dump1.stdout)
    }

    @Test func laterDuplicateKeyWins() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let load = try CLI.run(["load", db], input: "boxwood-dump 1\ntable 1 int64\n5\taa\n5\tbb\n")
        #expect(load.status == 0)
        #expect(try CLI.run(["dump", db]).output == "boxwood-dump 1\ntable 1 int64\n5\tbb\n")
    }

    @Test func dumpOfOneTable() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let sample = DumpBuilder.sample()
        #expect(try CLI.run(["load", db], input: sample.text).status == 0)
        let dump = try CLI.run(["dump", db, "--table=0"])
        #expect(dump.status == 0)
        let expected = sample.text.components(separatedBy: "table 1 binary\n")[0]
        #expect(dump.output == expected)
        let missing = try CLI.run(["dump", db, "--table", "99"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no table 99"))
    }

    @Test func statJSON() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let sample = DumpBuilder.sample()
        #expect(try CLI.run(["load", db, "--batch", "100"], input: sample.text).status == 0)
        let stat = try CLI.run(["stat", db, "--json"])
        #expect(stat.status == 0, "\(stat.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: stat.stdout) as? [String: Any])
        for key in ["format_version", "page_size", "pages_total", "pages_free", "wal_bytes", "transaction_state_version", "tables"] {
            #expect(json[key] != nil, "missing \(key)")
        }
        #expect((json["format_version"] as? Int) == Int(ValueBox.formatVersion))
        #expect((json["page_size"] as? Int) == 4096)
        let pagesTotal = try #require(json["pages_total"] as? Int)
        let pagesFree = try #require(json["pages_free"] as? Int)
        #expect(pagesTotal > 2 && pagesFree >= 0 && pagesFree < pagesTotal)
        #expect((json["wal_bytes"] as? Int).map { $0 >= 0 } == true)
        #expect((json["transaction_state_version"] as? Int) == (sample.entries + 99) / 100)

        let tables = try #require(json["tables"] as? [[String: Any]])
        #expect(tables.map { $0["id"] as? Int } == [0, 1, 3])
        #expect(tables.map { $0["key_type"] as? String } == ["int64", "binary", "binary"])
        let entries = tables.map { $0["entries"] as? Int ?? -1 }
        #expect(entries[0] + entries[1] == sample.entries)
        #expect(entries[2] == 0)
        #expect((tables[1]["bytes"] as? Int).map { $0 > 10_240 + 1_280 } == true)
        #expect((tables[2]["bytes"] as? Int) == 0)

        let text = try CLI.run(["stat", db])
        #expect(text.status == 0)
        #expect(text.output.contains("transaction state version"))
        #expect(text.output.contains("pages used"))
    }

    @Test func checkReportsOK() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        #expect(try CLI.run(["load", db], input: DumpBuilder.sample().text).status == 0)
        let check = try CLI.run(["check", db])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.output == "ok\n")

        let json = try CLI.run(["check", db, "--json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(object["ok"] as? Bool == true)
        #expect((object["problems"] as? [Any])?.isEmpty == true)
        #expect((object["entries_checked"] as? Int).map { $0 > 0 } == true)
        #expect((object["pages_checked"] as? Int).map { $0 > 0 } == true)
    }

    /// Malformed line 6 (after three entries, with `--batch 2`): exit 2, the message names line 6, and
    /// only the first two entries (the committed batch) are in the database.
    @Test(arguments: [
        ("zz\t00", "hex"),
        ("012\t00", "odd"),
        ("04\t0g", "hex"),
        ("04\t012", "odd"),
        ("0400", "tab"),
        ("", "tab"),
        ("table x binary", "table id"),
        ("table 2 text", "key type"),
        ("table 2", "table line"),
        ("<1281-byte key>\t00", "too large"),
    ])
    func malformedLineAbortsAfterLastCommit(badLine: String, mentions: String) throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let line = badLine.replacingOccurrences(of: "<1281-byte key>", with: String(repeating: "ab", count: 1_281))
        let input = "boxwood-dump 1\ntable 1 binary\n01\taa\n02\tbb\n03\tcc\n\(line)\n04\tdd\n"
        let load = try CLI.run(["load", db, "--batch", "2"], input: input)
        #expect(load.exitedNormally)
        #expect(load.status == 2)
        #expect(load.stderr.contains("line 6"), "\(load.stderr)")
        #expect(load.stderr.contains(mentions), "\(load.stderr)")
        #expect(load.output == "committed 2\n")
        let dump = try CLI.run(["dump", db])
        #expect(dump.output == "boxwood-dump 1\ntable 1 binary\n01\taa\n02\tbb\n")
    }

    @Test func badIntegerKeyAndEntryBeforeTable() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let input = "boxwood-dump 1\ntable 5 int64\n-1\t\n1\t\n2\t\n3\t\n99999999999999999999\t00\n"
        let load = try CLI.run(["load", db, "--batch", "2"], input: input)
        #expect(load.status == 2)
        #expect(load.stderr.contains("line 7"), "\(load.stderr)")
        #expect(load.output == "committed 2\ncommitted 4\n")
        #expect(try CLI.run(["dump", db]).output == "boxwood-dump 1\ntable 5 int64\n-1\t\n1\t\n2\t\n3\t\n")

        let other = dir.path("other")
        let early = try CLI.run(["load", other], input: "boxwood-dump 1\n01\t02\n")
        #expect(early.status == 2)
        #expect(early.stderr.contains("line 2"))
        #expect(early.stderr.contains("before any"))
        #expect(try CLI.run(["dump", other]).output == "boxwood-dump 1\n")
    }

    @Test func badHeaderCreatesNothing() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        for input in ["", "boxwood-dump 2\n", "table 1 binary\n01\t02\n"] {
            let load = try CLI.run(["load", db], input: input)
            #expect(load.status == 2)
            #expect(load.stderr.contains("line 1"))
            #expect(load.output.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: db))
    }

    @Test func statOnNonDatabasePaths() throws {
        let dir = try TempDir()
        let file = dir.path("file")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: file))
        let emptyDir = dir.path("empty")
        try FileManager.default.createDirectory(atPath: emptyDir, withIntermediateDirectories: false)
        let garbage = dir.path("garbage")
        try FileManager.default.createDirectory(atPath: garbage, withIntermediateDirectories: false)
        try Data(repeating: 0x5A, count: 20_000).write(to: URL(fileURLWithPath: garbage + "/data"))

        for path in [file, emptyDir, garbage, dir.path("missing")] {
            for command in [["stat", path], ["stat", path, "--json"], ["dump", path], ["check", path]] {
                let result = try CLI.run(command)
                #expect(result.exitedNormally, "\(command)")
                // Missing: not found (1). Something else: not a database, bad input (2).
                #expect(result.status == (path == dir.path("missing") ? 1 : 2), "\(command): \(result.status)")
                let report = command.contains("--json") ? result.output : result.stderr
                #expect(report.contains("not a Boxwood database"), "\(command): \(report)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("missing")))
    }

    /// Damage to any non-meta page is reported (`check` exits 3, damaged; a message on stderr), never a crash.
    @Test func damagedPagesFailCleanly() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        var text = "boxwood-dump 1\ntable 1 binary\n"
        for i in 0..<2_000 { text += DumpBuilder.hex(withUnsafeBytes(of: UInt32(i).bigEndian) { Array($0) }) + "\t" + String(repeating: "5a", count: 150) + "\n" }
        #expect(try CLI.run(["load", db], input: text).status == 0)
        let original = try Data(contentsOf: URL(fileURLWithPath: db + "/data"))
        let pages = original.count / 4096
        #expect(pages > 10)
        for page in stride(from: 2, to: pages, by: max(1, pages / 12)) {
            var damaged = original
            damaged[page * 4096 + 100] ^= 0x55
            damaged[page * 4096 + 101] ^= 0x66
            try damaged.write(to: URL(fileURLWithPath: db + "/data"))
            for command in ["check", "dump", "stat"] {
                let result = try CLI.run([command, db])
                #expect(result.exitedNormally, "page \(page), \(command)")
                if command == "check" {
                    #expect(result.status == 3, "page \(page): check exited \(result.status)")
                    #expect(!result.stderr.isEmpty)
                }
                if result.status != 0 { #expect(!result.stderr.isEmpty, "page \(page), \(command)") }
            }
        }
    }

    @Test func busyWriterSaysRetryAndReadersGoOn() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let box = try CLIFixture.openDatabaseWithOneEntry(db)
        defer { try? box.close() }
        let table = CLIFixture.table
        // This process now holds the writer lock: readers in other processes are not blocked...
        try box.begin()
        try box.set(table, key: ValueBoxKey([2]), value: MemoryBuffer([2]))
        let stat = try CLI.run(["stat", db])
        #expect(stat.status == 0, "\(stat.stderr)")
        let dump = try CLI.run(["dump", db])
        #expect(dump.status == 0)
        #expect(dump.stdout.count > 20)
        // ...and a writer waits, then gives up with a clear message.
        let load = try CLI.run(["load", db, "--lock-timeout", "0.3"], input: "boxwood-dump 1\n")
        #expect(load.status == 4)
        #expect(load.stderr.contains("write lock"), "\(load.stderr)")
        #expect(load.stderr.contains("retry"))
        try box.commit()
    }

    @Test func compactShrinksTheFileAndKeepsTheDump() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let box = try ValueBox(path: db)
        let table = ValueBoxTable(id: 3, keyType: .int64)
        try box.begin()
        for k in 0..<5_000 { try box.set(table, key: ValueBoxKey(int64: Int64(k)), value: MemoryBuffer([UInt8](repeating: UInt8(k & 0x7F), count: 150))) }
        try box.commit()
        try box.checkpoint()
        try box.begin()
        for k in stride(from: 0, to: 5_000, by: 2) { try box.remove(table, key: ValueBoxKey(int64: Int64(k))) }
        try box.commit()
        try box.close()
        let before = try CLI.run(["dump", db])
        let compact = try CLI.run(["compact", db, "--json"])
        #expect(compact.status == 0, "\(compact.stderr)")
        let json = try JSONSerialization.jsonObject(with: compact.stdout) as? [String: Any]
        let bytesBefore = (json?["bytes_before"] as? NSNumber)?.intValue ?? 0
        let bytesAfter = (json?["bytes_after"] as? NSNumber)?.intValue ?? 0
        #expect(bytesAfter > 0 && bytesAfter < bytesBefore, "\(compact.output)")
        #expect((json?["entries"] as? NSNumber)?.intValue == 2_500)
        let size = (try FileManager.default.attributesOfItem(atPath: db + "/data")[.size] as? NSNumber)?.intValue
        #expect(size == bytesAfter)
        #expect(try CLI.run(["dump", db]).stdout == before.stdout)
        #expect(try CLI.run(["check", db]).status == 0)
        let text = try CLI.run(["compact", db])
        #expect(text.status == 0)
        #expect(text.output.hasPrefix("compacted \(db): "), "\(text.output)")
        let missing = try CLI.run(["compact", dir.path("nothing-here")])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("not a Boxwood database"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("nothing-here")))
    }

    @Test func usageErrorsExitWith2() throws {
        let dir = try TempDir()
        for args in [["load"], ["load", dir.path("db"), "--batch", "0"], ["load", dir.path("db"), "--durability", "sometimes"],
                     ["nonsense"], ["stat"], ["dump", dir.path("db"), "--table", "x"]] {
            let result = try CLI.run(args)
            #expect(result.exitedNormally)
            #expect(result.status == 2, "\(args): \(result.status)")
            #expect(!result.stderr.isEmpty)
        }
        let help = try CLI.run(["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("load"))
    }

    @Test func smallWorkloadRuns() throws {
        let dir = try TempDir()
        let data = dir.path("demo")
        let demo = try CLI.run(["workload", "--data-dir", data, "--keys", "3000", "--seed", "7"])
        #expect(demo.status == 0, "\(demo.stderr)")
        for phase in ["bulk load", "random get", "random set", "range scan", "remove", "checkpoint", "reopen", "check", "files:"] {
            #expect(demo.output.contains(phase), "missing \(phase)")
        }
        #expect(demo.output.contains("ok ("))
        #expect(try CLI.run(["check", data + "/db"]).output == "ok\n")
        // A second run replaces the previous demo's directory.
        #expect(try CLI.run(["workload", "--data-dir", data, "--keys", "100"]).status == 0)

        // A directory the demo did not create is never deleted.
        let precious = dir.path("precious")
        try FileManager.default.createDirectory(atPath: precious, withIntermediateDirectories: false)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: precious + "/file"))
        let refused = try CLI.run(["workload", "--data-dir", precious, "--keys", "100"])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("refusing"))
        #expect(FileManager.default.fileExists(atPath: precious + "/file"))
    }
}
