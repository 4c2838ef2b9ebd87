import Boxwood
import BoxwoodStore
import Foundation
import Testing

/// `boxwood search` and `boxwood history` on the small sync database of ``SyncFixture``.
@Suite struct SyncCommandTests {
    /// Creates the fixture database in a fresh directory.
    private func fixture() async throws -> (TempDir, String) {
        let dir = try TempDir()
        let db = dir.path("sync")
        try await SyncFixture.create(at: db)
        return (dir, db)
    }

    private func date(_ offset: Int32) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(SyncFixture.base + offset)))
    }

    @Test func searchPrintsPeerIdDateAuthorAndTextNewestFirst() async throws {
        let (dir, db) = try await fixture()
        _ = dir
        let result = try CLI.run(["search", db, "fox"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines == [
            "1:2001 Fox group  #10  \(date(410))  0:1999: a fox in the group",
            "2:3001 Boxwood devs  #248  \(date(248))  Alice Smith: fox jumps again\\nsecond line",
            "2:3001 Boxwood devs  #245  \(date(245))  bob: the quick brown fox",
        ], "\(result.output)")

        // Prefix matching, one chat, limit.
        let inChannel = try CLI.run(["search", db, "rel", "--peer", "2:3001", "--limit", "3"])
        #expect(inChannel.status == 0, "\(inChannel.stderr)")
        let channelLines = inChannel.output.split(separator: "\n").map(String.init)
        #expect(channelLines.count == 4)
        #expect(channelLines.first == "2:3001 Boxwood devs  #250  \(date(250))  Alice Smith: release notes 250")
        #expect(channelLines.last?.hasPrefix("… more results") == true)
        // The packed Int64 form names the same chat.
        let packed = try CLI.run(["search", db, "fox", "--peer", "\(SyncFixture.group.toInt64())"])
        #expect(packed.output.split(separator: "\n").count == 1)
        #expect(packed.output.contains("a fox in the group"))

        let none = try CLI.run(["search", db, "zebra"])
        #expect(none.status == 0)
        #expect(none.output == "no messages match \"zebra\"\n")
    }

    @Test func searchJSON() async throws {
        let (dir, db) = try await fixture()
        _ = dir
        let result = try CLI.run(["search", db, "fox", "--json", "--limit", "2"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(object["query"] as? String == "fox")
        #expect(object["truncated"] as? Bool == true)
        let results = try #require(object["results"] as? [[String: Any]])
        #expect(results.count == 2)
        #expect(results[0]["peer"] as? String == "1:2001")
        #expect(results[0]["chat"] as? String == "Fox group")
        #expect(results[0]["author"] as? String == "0:1999")
        #expect(results[0]["author_name"] is NSNull)
        #expect(results[1]["peer_int64"] as? Int64 == SyncFixture.channel.toInt64())
        #expect(results[1]["id"] as? Int == 248)
        #expect(results[1]["date"] as? Int == Int(SyncFixture.base + 248))
        #expect(results[1]["author_name"] as? String == "Alice Smith")
        #expect(results[1]["text"] as? String == "fox jumps again\nsecond line")
        #expect(results[1]["outgoing"] as? Bool == false)
    }

    @Test func historyShowsMessagesNewestFirstWithMarkersAndHoles() async throws {
        let (dir, db) = try await fixture()
        _ = dir
        let result = try CLI.run(["history", db, "2:3001"])
        #expect(result.status == 0, "\(result.stderr)")
        var expected = ["chat 2:3001 \"Boxwood devs\" (channel): 10 messages stored, 1 hole, 1 unsent, 10 unread; dates in UTC",
                        "local#1  \(date(300))  Me Myself: on its way  [unsent]"]
        for id in stride(from: Int32(250), through: 241, by: -1) {
            let author = id % 2 == 0 ? "Alice Smith" : "bob"
            var line = "#\(id)  \(date(id))  \(author): \(SyncFixture.channelText(id).replacingOccurrences(of: "\n", with: "\\n"))"
            if id == 245 { line += "  [pinned]" }
            if id == 248 { line += "  [edited]" }
            expected.append(line)
        }
        expected.append("… hole 1–240 …")
        #expect(result.output.split(separator: "\n").map(String.init) == expected, "\(result.output)")

        // The packed form, and a limit: the newest messages, then how many were left out.
        let limited = try CLI.run(["history", db, "\(SyncFixture.channel.toInt64())", "--limit", "3"])
        #expect(limited.status == 0)
        #expect(limited.output.split(separator: "\n").map(String.init) == Array(expected.prefix(4)) + ["… 8 older messages not shown (raise --limit) …"])

        // A chat without holes, whose author is not stored (shown by id).
        let group = try CLI.run(["history", db, "1:2001"])
        #expect(group.output.split(separator: "\n").map(String.init) == [
            "chat 1:2001 \"Fox group\" (group): 2 messages stored, 0 holes, 1 unread; dates in UTC",
            "#11  \(date(411))  Me Myself: hello group",
            "#10  \(date(410))  0:1999: a fox in the group",
        ], "\(group.output)")
    }

    @Test func historyJSON() async throws {
        let (dir, db) = try await fixture()
        _ = dir
        let result = try CLI.run(["history", db, "2:3001", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(object["peer"] as? String == "2:3001")
        #expect(object["title"] as? String == "Boxwood devs")
        #expect(object["kind"] as? String == "channel")
        #expect(object["messages_stored"] as? Int == 10)
        #expect(object["truncated"] as? Bool == false)
        let rows = try #require(object["rows"] as? [[String: Any]])
        #expect(rows.count == 12)
        #expect(rows.first?["unsent"] as? Bool == true)
        let pinned = try #require(rows.first { $0["id"] as? Int == 245 && $0["type"] as? String == "message" })
        #expect(pinned["pinned"] as? Bool == true)
        #expect(pinned["edited"] as? Bool == false)
        #expect(pinned["author"] as? String == "0:1002")
        #expect(pinned["author_name"] as? String == "bob")
        let edited = try #require(rows.first { $0["id"] as? Int == 248 })
        #expect(edited["edit_version"] as? Int == 1)
        #expect(edited["text"] as? String == "fox jumps again\nsecond line")
        let hole = try #require(rows.last)
        #expect(hole["type"] as? String == "hole")
        #expect(hole["from"] as? Int == 1)
        #expect(hole["to"] as? Int == 240)
    }

    @Test func unknownChatAndBadArgumentsAndNonSyncDatabases() async throws {
        let (dir, db) = try await fixture()
        let missing = try CLI.run(["history", db, "2:9999"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no chat 2:9999"), "\(missing.stderr)")

        for args in [["history", db, "9:1"], ["history", db, "x"], ["history", db, "2:"], ["history", db],
                     ["history", db, "2:3001", "--limit", "0"], ["search", db], ["search", db, "fox", "--peer", "a:b"],
                     ["search", db, "  ", "--limit", "5"], ["search", db, "fox", "--limit", "0"]] {
            let result = try CLI.run(args)
            #expect(result.exitedNormally)
            #expect(result.status == 2, "\(args): \(result.status) \(result.stderr)")
            #expect(!result.stderr.isEmpty)
        }

        // A Boxwood database that the sync layer did not create.
        let plain = dir.path("plain")
        #expect(try CLI.run(["load", plain], input: "boxwood-dump 1\ntable 1 binary\n01\t02\n").status == 0)
        for command in [["search", plain, "fox"], ["history", plain, "2:3001"]] {
            let result = try CLI.run(command)
            #expect(result.status == 2, "not a sync database: bad input")
            #expect(result.stderr.contains("not a sync database"), "\(result.stderr)")
            #expect(result.output.isEmpty)
        }
        // Search and history only read: the database is unchanged.
        #expect(try CLI.run(["dump", plain]).output == "boxwood-dump 1\ntable 1 binary\n01\t02\n")
    }

    /// The sync commands read while a writer holds the write lock (they never wait for it).
    @Test func searchWhileAnotherProcessWrites() async throws {
        let (dir, db) = try await fixture()
        _ = dir
        let box = try ValueBox(path: db)
        defer { try? box.close() }
        try box.begin()
        try box.set(ValueBoxTable(id: 999, keyType: .binary), key: ValueBoxKey([1]), value: MemoryBuffer([1]))
        let search = try CLI.run(["search", db, "fox"])
        #expect(search.status == 0, "\(search.stderr)")
        #expect(search.output.split(separator: "\n").count == 3)
        #expect(try CLI.run(["history", db, "1:2001"]).status == 0)
        try box.commit()
    }
}
