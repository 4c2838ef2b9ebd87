import BoxwoodStore
import Foundation
import Testing

/// `boxwood watch` as a child process following the commits of this (test) process.
@Suite struct WatchTests {
    private let table = CLIFixture.table

    private func commit(_ box: ValueBox, _ body: () throws -> Void) throws {
        try box.begin()
        try body()
        try box.commit()
    }

    private func changeLines(_ output: String) -> [Substring] {
        output.split(separator: "\n").filter { $0.hasPrefix("version ") }
    }

    @Test func printsTwoChangesThenExits() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let box = try CLIFixture.openDatabaseWithOneEntry(db)
        defer { try? box.close() }

        // The watcher starts while this process holds the write lock in an open transaction: it is a reader
        // and is not held up.
        try box.begin()
        try box.set(table, key: ValueBoxKey([2]), value: MemoryBuffer([2, 2]))
        try box.set(table, key: ValueBoxKey([3]), value: MemoryBuffer([3]))
        let watch = try RunningCLI(["watch", db, "--count", "2", "--interval", "0.02"])
        #expect(watch.waitForOutput { $0.contains("\n") }, "no start line: \(watch.errors)")
        #expect(watch.output == "watching \(db): version 1, 1 table, 1 entry (Ctrl-C to stop)\n")
        try box.commit()
        #expect(watch.waitForOutput { changeLines($0).count == 1 && $0.contains("changed:") }, "\(watch.output) \(watch.errors)")

        try commit(box) {
            try box.remove(table, key: ValueBoxKey([1]))
            try box.set(ValueBoxTable(id: 7, keyType: .int64), key: ValueBoxKey(int64: 5), value: MemoryBuffer([9]))
        }
        try #require(watch.waitForExit(), "watch did not exit after two changes: \(watch.output)")
        #expect(watch.process.terminationStatus == 0, "\(watch.errors)")
        #expect(watch.process.terminationReason == .exit)
        let lines = watch.output.split(separator: "\n").map(String.init)
        #expect(changeLines(watch.output).count == 2)
        #expect(lines.count == 1 + 3 + 4, "\(watch.output)")
        #expect(lines[1].hasPrefix("version 2 (+1 commit) at "))
        #expect(lines[2] == "  table 1\tbinary\tentries 3 (+2)\tbytes 7 (+5)")
        #expect(lines[3] == "  changed: table 1 +2 entries, +5 bytes")
        #expect(lines[4].hasPrefix("version 3 (+1 commit) at "))
        #expect(lines[5] == "  table 1\tbinary\tentries 2 (-1)\tbytes 5 (-2)")
        #expect(lines[6] == "  table 7\tint64\tentries 1 (+1)\tbytes 9 (+9)")
        #expect(lines[7] == "  changed: table 1 -1 entry, -2 bytes; table 7 new +1 entry, +9 bytes")
        #expect(watch.errors.isEmpty, "\(watch.errors)")
    }

    @Test func severalCommitsBetweenTwoLooksAreOneChangeAndJSONLines() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let box = try CLIFixture.openDatabaseWithOneEntry(db)
        defer { try? box.close() }
        let watch = try RunningCLI(["watch", db, "--count", "1", "--interval", "3", "--json"])
        #expect(watch.waitForOutput { $0.contains("\n") }, "no start line: \(watch.errors)")
        // Three commits well within one interval.
        for k in 2...4 { try commit(box) { try box.set(table, key: ValueBoxKey([UInt8(k)]), value: MemoryBuffer([])) } }
        try #require(watch.waitForExit(), "\(watch.output)")
        #expect(watch.process.terminationStatus == 0, "\(watch.errors)")
        let lines = watch.output.split(separator: "\n")
        #expect(lines.count == 2)
        let start = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(start["event"] as? String == "start")
        #expect(start["version"] as? Int == 1)
        let change = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(change["event"] as? String == "change")
        #expect(change["version"] as? Int == 4)
        #expect(change["previous_version"] as? Int == 1)
        #expect(change["commits"] as? Int == 3)
        let tables = try #require(change["tables"] as? [[String: Any]])
        #expect(tables.first?["entries"] as? Int == 4)
        let changes = try #require(change["changes"] as? [[String: Any]])
        #expect(changes.count == 1)
        #expect(changes.first?["kind"] as? String == "changed")
        #expect(changes.first?["entries_delta"] as? Int == 3)
    }

    @Test func interruptExitsZero() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        #expect(try CLI.run(["load", db], input: "boxwood-dump 1\ntable 1 binary\n01\t02\n").status == 0)
        let watch = try RunningCLI(["watch", db])
        #expect(watch.waitForOutput { $0.contains("watching") }, "\(watch.errors)")
        // Watching, it holds no file lock on the database (iOS would kill a suspended process holding one).
        if FileManager.default.fileExists(atPath: "/proc/locks") {
            let held = try locksOnDatabaseFiles(db)
            #expect(held.isEmpty, "\(held)")
        }
        watch.process.interrupt()
        try #require(watch.waitForExit(), "watch did not stop on SIGINT")
        #expect(watch.process.terminationReason == .exit)
        #expect(watch.process.terminationStatus == 0)
        #expect(changeLines(watch.output).isEmpty)

        let terminated = try RunningCLI(["watch", db, "--json"])
        #expect(terminated.waitForOutput { $0.contains("start") })
        terminated.process.terminate()
        try #require(terminated.waitForExit(), "watch did not stop on SIGTERM")
        #expect(terminated.process.terminationStatus == 0)
    }

    @Test func usageAndMissingDatabase() throws {
        let dir = try TempDir()
        for args in [["watch"], ["watch", dir.path("db"), "--interval", "0"], ["watch", dir.path("db"), "--interval", "-1"],
                     ["watch", dir.path("db"), "--count", "0"]] {
            let result = try CLI.run(args)
            #expect(result.status == 2, "\(args)")
        }
        let missing = try CLI.run(["watch", dir.path("db")])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("not a Boxwood database"))
        #expect(!FileManager.default.fileExists(atPath: dir.path("db")))
    }
}

/// /proc/locks lines (flock, POSIX and OFD locks) on the files of the database at `db`.
func locksOnDatabaseFiles(_ db: String) throws -> [String] {
    var inodes: Set<String> = []
    for name in ["data", "wal", "header"] {
        if let inode = (try? FileManager.default.attributesOfItem(atPath: db + "/" + name))?[.systemFileNumber] as? Int {
            inodes.insert(String(inode))
        }
    }
    return try String(contentsOfFile: "/proc/locks", encoding: .utf8).split(separator: "\n").filter { line in
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        return fields.count > 5 && fields[5].split(separator: ":").last.map { inodes.contains(String($0)) } == true
    }.map(String.init)
}
