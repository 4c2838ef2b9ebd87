@testable import BoxwoodStore
import Foundation
import Testing

/// `boxwood get`, `put`, `del`, `tables` and `--version`: one value at a time, with the exit codes scripts test
/// (0 ok, 1 missing, 2 bad input, 3 damaged, 4 locked).
@Suite("boxwood get, put, del, tables") struct SingleValueTests {
    /// A database with a binary table 1 (`01` → `01`, `'a'` → `'A'`) and an int64 table 2 (`7` → `07`).
    private func sampleDatabase(_ dir: TempDir) throws -> String {
        let db = dir.path("db")
        let load = try CLI.run(["load", db], input: "boxwood-dump 1\ntable 1 binary\n01\t01\n61\t41\ntable 2 int64\n7\t07\n")
        #expect(load.status == 0, "\(load.stderr)")
        return db
    }

    /// The database's dump text (to show that a refused command wrote nothing).
    private func dump(_ db: String) throws -> String {
        let result = try CLI.run(["dump", db])
        #expect(result.status == 0, "\(result.stderr)")
        return result.output
    }

    @Test func utf8KeyRoundTrip() throws {
        let dir = try TempDir()
        let db = try sampleDatabase(dir)
        let put = try CLI.run(["put", db, "1", "hello", "wörld"])
        #expect(put.status == 0, "\(put.stderr)")
        #expect(put.output.isEmpty)
        let get = try CLI.run(["get", db, "1", "hello"])
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdout == Data("wörld".utf8))
        let hex = try CLI.run(["get", db, "1", "hello", "--hex-output"])
        #expect(hex.output == DumpBuilder.hex(Array("wörld".utf8)) + "\n")
        // The same key given in hex, and a key written by `load`.
        #expect(try CLI.run(["get", db, "1", "--hex", DumpBuilder.hex(Array("hello".utf8))]).stdout == Data("wörld".utf8))
        #expect(try CLI.run(["get", db, "1", "a"]).stdout == Data("A".utf8))
        // Replacing, and an empty value.
        #expect(try CLI.run(["put", db, "1", "hello", ""]).status == 0)
        let empty = try CLI.run(["get", db, "1", "hello"])
        #expect(empty.status == 0)
        #expect(empty.stdout.isEmpty)
        #expect(try CLI.run(["get", db, "1", "hello", "--hex-output"]).output == "\n")
    }

    @Test func hexKeyAndHexValue() throws {
        let dir = try TempDir()
        let db = try sampleDatabase(dir)
        let put = try CLI.run(["put", db, "1", "--hex", "00FF", "--hex-value", "0001ff"])
        #expect(put.status == 0, "\(put.stderr)")
        let get = try CLI.run(["get", db, "1", "--hex", "00ff"])
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdout == Data([0, 1, 0xFF]))
        #expect(try dump(db).contains("\n00ff\t0001ff\n"))
        // Hex from stdin: the trailing newline of `echo` is ignored.
        #expect(try CLI.run(["put", db, "1", "--hex", "", "--hex-value"], input: "abcd\n").status == 0)
        #expect(try CLI.run(["get", db, "1", "--hex", ""]).stdout == Data([0xAB, 0xCD]))
    }

    @Test func int64Keys() throws {
        let dir = try TempDir()
        let db = try sampleDatabase(dir)
        for key in [Int64.min, -42, 0, 7, Int64.max] {
            let put = try CLI.run(["put", db, "2", "--int64", "--", String(key), "v\(key)"])
            #expect(put.status == 0, "\(key): \(put.stderr)")
        }
        for key in [Int64.min, -42, 0, 7, Int64.max] {
            let get = try CLI.run(["get", "--int64", db, "2", "--", String(key)])
            #expect(get.status == 0, "\(key): \(get.stderr)")
            #expect(get.output == "v\(key)")
        }
        #expect(try dump(db).hasSuffix("table 2 int64\n\(Int64.min)\t\(DumpBuilder.hex(Array("v\(Int64.min)".utf8)))\n"
            + "-42\t\(DumpBuilder.hex(Array("v-42".utf8)))\n0\t7630\n7\t7637\n\(Int64.max)\t\(DumpBuilder.hex(Array("v\(Int64.max)".utf8)))\n"))
        #expect(try CLI.run(["del", db, "2", "--int64", "--", "-42"]).status == 0)
        #expect(try CLI.run(["get", db, "2", "--int64", "--", "-42"]).status == 1)
    }

    @Test func valueFromStdin() throws {
        let dir = try TempDir()
        let db = try sampleDatabase(dir)
        // 1 MiB of every byte value, NULs included, not a multiple of any read size.
        var value = [UInt8](repeating: 0, count: (1 << 20) + 13)
        var x: UInt32 = 12_345
        for i in value.indices {
            x = x &* 1_103_515_245 &+ 12_345
            value[i] = i % 7 == 0 ? 0 : UInt8(truncatingIfNeeded: x >> 16)
        }
        let put = try CLI.run(["put", db, "1", "big"], stdin: Data(value))
        #expect(put.status == 0, "\(put.stderr)")
        let get = try CLI.run(["get", db, "1", "big"])
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdout == Data(value))
        // `-` is stdin too; an empty stdin is an empty value.
        #expect(try CLI.run(["put", db, "1", "dash", "-"], stdin: Data([0, 10, 0])).status == 0)
        #expect(try CLI.run(["get", db, "1", "dash"]).stdout == Data([0, 10, 0]))
        #expect(try CLI.run(["put", db, "1", "nothing"]).status == 0)
        let nothing = try CLI.run(["get", db, "1", "nothing"])
        #expect(nothing.status == 0)
        #expect(nothing.stdout.isEmpty)
    }

    @Test func missingKeyOrTable() throws {
        let dir = try TempDir()
        let db = try sampleDatabase(dir)
        for command in [["get", db, "1", "nope"], ["get", db, "1", "nope", "--hex-output"], ["get", db, "9", "a"],
                        ["get", db, "2", "--int64", "8"]] {
            let result = try CLI.run(command)
            #expect(result.status == 1, "\(command): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(command)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(command): \(result.stderr)")
        }
        #expect(try CLI.run(["get", db, "9", "a"]).stderr.contains("no table 9"))
        #expect(try CLI.run(["get", db, "1", "nope"]).stderr.contains("has no key 'nope'"))
    }

    @Test func deletePresentAndMissing() throws {
        let dir = try TempDir()
        let db = try sampleDatabase(dir)
        let del = try CLI.run(["del", db, "1", "a"])
        #expect(del.status == 0, "\(del.stderr)")
        #expect(del.output.isEmpty)
        #expect(try CLI.run(["get", db, "1", "a"]).status == 1)
        let again = try CLI.run(["del", db, "1", "a"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("has no key 'a'"), "\(again.stderr)")
        let noTable = try CLI.run(["del", db, "9", "a"])
        #expect(noTable.status == 1)
        #expect(noTable.stderr.contains("no table 9"), "\(noTable.stderr)")
        #expect(try CLI.run(["del", db, "2", "--int64", "7"]).status == 0)
        // Removing the last key keeps the (empty) table.
        #expect(try dump(db) == "boxwood-dump 1\ntable 1 binary\n01\t01\ntable 2 int64\n")
    }

    @Test func putCreatesTablesOnlyWhenAsked() throws {
        let dir = try TempDir()
        let db = try sampleDatabase(dir)
        let before = try dump(db)
        let refused = try CLI.run(["put", db, "5", "k", "v"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("no table 5") && refused.stderr.contains("--create"), "\(refused.stderr)")
        #expect(try dump(db) == before)
        #expect(try CLI.run(["put", db, "5", "k", "v", "--create"]).status == 0)
        #expect(try CLI.run(["put", db, "6", "--int64", "--create", "--", "-1", "v"]).status == 0)
        #expect(try CLI.run(["put", db, "7", "--hex", "0a", "v", "--create"]).status == 0)
        let tables = try CLI.run(["tables", db])
        #expect(tables.status == 0, "\(tables.stderr)")
        #expect(tables.output == "1\tbinary\t2\t4\n2\tint64\t1\t9\n5\tbinary\t1\t2\n6\tint64\t1\t9\n7\tbinary\t1\t2\n")
        // --create on a table that exists writes to it.
        #expect(try CLI.run(["put", db, "5", "k", "w", "--create"]).status == 0)
        #expect(try CLI.run(["get", db, "5", "k"]).output == "w")
    }

    @Test func badInputIsExit2AndWritesNothing() throws {
        let dir = try TempDir()
        let db = try sampleDatabase(dir)
        let before = try dump(db)
        let longKey = String(repeating: "k", count: 5_000)
        let cases: [([String], String)] = [
            (["--hex", "0g"], "invalid hex digit 'g'"),
            (["--hex", "abc"], "odd number of hex digits"),
            (["--int64", "99999999999999999999"], "bad int64 key"),
            (["--int64", "12x"], "bad int64 key"),
            ([longKey], "key too large: 5000 bytes (limit \(ValueBox.maxKeySize))"),
            (["--hex", String(repeating: "ab", count: 5_000)], "key too large: 5000 bytes"),
            (["--hex", "--int64", "1"], "--hex and --int64"),
        ]
        for (key, message) in cases {
            for command in [["get", db, "1"], ["put", db, "1"], ["del", db, "1"]] {
                let args = command + key + (command[0] == "put" ? ["v", "--create"] : [])
                let result = try CLI.run(args)
                #expect(result.exitedNormally)
                #expect(result.status == 2, "\(command[0]) \(key.prefix(2)): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains(message), "\(command[0]) \(key.prefix(2)): \(result.stderr)")
                #expect(result.stdout.isEmpty)
            }
        }
        // The key form against the table's key type: the engine's keyTypeMismatch.
        for args in [["put", db, "1", "--int64", "5", "v"], ["put", db, "2", "5", "v"], ["put", db, "2", "5", "v", "--create"],
                     ["get", db, "1", "--int64", "1"], ["get", db, "2", "--hex", "0000000000000007"], ["del", db, "1", "--int64", "1"],
                     ["del", db, "2", "a"]] {
            let result = try CLI.run(args)
            #expect(result.status == 2, "\(args): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("has key type"), "\(args): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        // Negative table ids belong to the engine (after `--`, or taken for an option: a usage error).
        for args in [["put", db, "--create", "--", "-3", "k", "v"], ["get", db, "--", "-3", "k"], ["del", db, "--", "-1", "k"]] {
            let result = try CLI.run(args)
            #expect(result.status == 2, "\(args): \(result.stderr)")
            #expect(result.stderr.contains("table id \(args[args.count - (args[0] == "put" ? 3 : 2)]) is reserved"), "\(args): \(result.stderr)")
        }
        #expect(try CLI.run(["put", db, "-3", "k", "v"]).status == 2)
        // A bad hex value, and a table id that is not a number.
        let badValue = try CLI.run(["put", db, "1", "k", "12z4", "--hex-value"])
        #expect(badValue.status == 2)
        #expect(badValue.stderr.contains("bad hex value: invalid hex digit 'z'"), "\(badValue.stderr)")
        #expect(try CLI.run(["put", db, "1", "k", "--hex-value"], input: "123\n").status == 2)
        #expect(try CLI.run(["put", db, "one", "k", "v"]).status == 2)
        #expect(try dump(db) == before)
        #expect(try CLI.run(["tables", db]).output == "1\tbinary\t2\t4\n2\tint64\t1\t9\n")
    }

    @Test func missingDatabaseIsExit1AndCreatesNothing() throws {
        let dir = try TempDir()
        let missing = dir.path("missing")
        for args in [["get", missing, "1", "k"], ["put", missing, "1", "k", "v"], ["put", missing, "1", "k", "v", "--create"],
                     ["del", missing, "1", "k"], ["tables", missing], ["tables", missing, "--json"]] {
            let result = try CLI.run(args)
            #expect(result.status == 1, "\(args): \(result.status) \(result.stderr)")
            let report = args.contains("--json") ? result.output : result.stderr
            #expect(report.contains("not a Boxwood database: no such directory"), "\(args): \(report)")
            if !args.contains("--json") { #expect(result.stdout.isEmpty) }
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func tablesJSONMatchesTheText() throws {
        let dir = try TempDir()
        let db = try sampleDatabase(dir)
        #expect(try CLI.run(["put", db, "8", "--create", "--int64", "3", "xyz"]).status == 0)
        let json = try CLI.run(["tables", db, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        let tables = try #require(object["tables"] as? [[String: Any]])
        #expect(tables.map { $0["id"] as? Int } == [1, 2, 8])
        #expect(tables.map { $0["key_type"] as? String } == ["binary", "int64", "int64"])
        #expect(tables.map { $0["entries"] as? Int } == [2, 1, 1])
        #expect(tables.map { $0["bytes"] as? Int } == [4, 9, 11])
        let text = try CLI.run(["tables", db])
        let rows = text.output.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(rows.count == tables.count)
        for (row, table) in zip(rows, tables) {
            #expect(row == ["\(table["id"] ?? "")", "\(table["key_type"] ?? "")", "\(table["entries"] ?? "")", "\(table["bytes"] ?? "")"])
        }
        // A database with no tables.
        let empty = dir.path("empty")
        #expect(try CLI.run(["load", empty], input: "boxwood-dump 1\n").status == 0)
        #expect(try CLI.run(["tables", empty]).output == "")
        #expect(try CLI.run(["tables", empty, "--json"]).output == "{\"tables\": []}\n")
    }

    @Test func versionNamesTheFormats() throws {
        let result = try CLI.run(["--version"])
        #expect(result.status == 0, "\(result.stderr)")
        let line = result.output.trimmingCharacters(in: .newlines)
        #expect(line.hasPrefix("boxwood "), "\(line)")
        #expect(line.contains("(data format \(BoxwoodFormat.dataVersion), wal format \(BoxwoodFormat.walVersion), "), "\(line)")
        #expect(line.hasSuffix("debug)") || line.hasSuffix("release)"), "\(line)")
        #expect(BoxwoodFormat.dataVersion == MetaPage.formatVersion && BoxwoodFormat.walVersion == WriteAheadLog.version)
    }

    @Test func statShowsToolAndFileFormatVersions() throws {
        let dir = try TempDir()
        let db = try sampleDatabase(dir)
        let json = try CLI.run(["stat", db, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(object["format_version"] as? Int == Int(BoxwoodFormat.dataVersion))
        #expect(object["tool_format_version"] as? Int == Int(BoxwoodFormat.dataVersion))
        let text = try CLI.run(["stat", db])
        #expect(text.output.contains("file format version:       \(BoxwoodFormat.dataVersion)\n"), "\(text.output)")
        #expect(text.output.contains("tool format version:       \(BoxwoodFormat.dataVersion)\n"), "\(text.output)")
    }

    @Test func newerFormatVersionNamesTheVersions() throws {
        let dir = try TempDir()
        let db = try sampleDatabase(dir)
        // Both meta pages claim the next format version (with valid checksums).
        var data = try Data(contentsOf: URL(fileURLWithPath: db + "/data"))
        data.withUnsafeMutableBytes { raw in
            for slot in 0..<2 {
                let page = raw.baseAddress! + slot * PageLayout.pageSize
                store32(page, 40, BoxwoodFormat.dataVersion + 1)
                sealPage(page, pageNumber: UInt64(slot))
            }
        }
        try data.write(to: URL(fileURLWithPath: db + "/data"))
        for args in [["get", db, "1", "a"], ["put", db, "1", "a", "b"], ["del", db, "1", "a"], ["tables", db], ["stat", db, "--json"]] {
            let result = try CLI.run(args)
            #expect(result.status == 1, "\(args): \(result.status)")
            let report = args.contains("--json") ? result.output : result.stderr
            #expect(report.contains("data format version \(BoxwoodFormat.dataVersion + 1) is newer than this build supports "
                + "(version \(BoxwoodFormat.dataVersion)); use a newer boxwood"), "\(args): \(report)")
            if !args.contains("--json") { #expect(result.stdout.isEmpty) }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: db + "/data")) == data)
    }

    @Test func damagedIsExit3() throws {
        let dir = try TempDir()
        let db = try sampleDatabase(dir)
        // Both meta pages fail their checksums.
        var data = try Data(contentsOf: URL(fileURLWithPath: db + "/data"))
        for slot in 0..<2 { data[slot * PageLayout.pageSize + 60] ^= 0xFF }
        try data.write(to: URL(fileURLWithPath: db + "/data"))
        for args in [["get", db, "1", "a"], ["put", db, "1", "a", "b"], ["del", db, "1", "a"], ["tables", db]] {
            let result = try CLI.run(args)
            #expect(result.status == 3, "\(args): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("checksum mismatch"), "\(args): \(result.stderr)")
        }
    }

    @Test func heldWriteLockIsExit4() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let box = try CLIFixture.openDatabaseWithOneEntry(db)
        defer { try? box.close() }
        try box.begin()
        for args in [["put", db, "1", "k", "v", "--lock-timeout", "0.2"], ["del", db, "1", "--hex", "01", "--lock-timeout", "0.2"]] {
            let result = try CLI.run(args)
            #expect(result.status == 4, "\(args): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("write lock"), "\(args): \(result.stderr)")
        }
        // Readers go on.
        #expect(try CLI.run(["get", db, "1", "--hex", "01"]).stdout == Data([1]))
        box.abort()
    }
}
