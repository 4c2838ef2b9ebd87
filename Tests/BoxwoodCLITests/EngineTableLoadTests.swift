import BoxwoodStore
import Foundation
import Testing
import BoxwoodFullText

/// `boxwood load` and tables the engine keeps for itself, and the note a later command prints after a writer
/// stopped mid-write (issue 22: hostile input never crashes, hangs or silently loses data).
@Suite struct EngineTableLoadTests {
    /// A dump naming a negative table id wrote into the engine's own tables (a full-text index's data) as if
    /// they were the caller's. Now it is malformed input at that line: exit 2, a message, nothing after the last
    /// commit applied.
    @Test func loadRefusesNegativeTableIds() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        for id in ["-1", "-7", "-2147483648"] {
            let load = try CLI.run(["load", db, "--batch", "1"], input: "boxwood-dump 1\ntable 1 binary\n01\t02\ntable \(id) binary\n03\t04\n")
            #expect(load.status == 2, "table \(id): \(load.stderr)")
            #expect(load.stderr.hasPrefix("boxwood: table \(id) is reserved"), "\(load.stderr)")
            #expect(load.stderr.hasSuffix("(stdin line 4)\n"), "\(load.stderr)")
            #expect(load.stderr.contains("--engine-tables"), "\(load.stderr)")
            #expect(load.output == "committed 1\n")
            let dump = try CLI.run(["dump", db])
            #expect(dump.output == "boxwood-dump 1\ntable 1 binary\n01\t02\n", "\(dump.stderr)")
        }
    }

    /// A database with a full-text index dumps its engine tables; loading them needs `--engine-tables`, which
    /// copies them verbatim: the loaded index answers queries and dumps identically.
    @Test func engineTablesFlagCopiesAFullTextIndexVerbatim() throws {
        let dir = try TempDir()
        let first = dir.path("first")
        let second = dir.path("second")
        let index = ValueBoxFullTextTable(id: 0)
        do {
            let box = try ValueBox(path: first)
            try box.begin()
            try box.set(ValueBoxTable(id: 3, keyType: .binary), key: ValueBoxKey([1]), value: MemoryBuffer([2]))
            try box.fullTextSet(index, collectionId: "c", itemId: "greeting", contents: "hello boxwood world", tags: "")
            try box.commit()
            try box.close()
        }
        let dump1 = try CLI.run(["dump", first])
        #expect(dump1.status == 0, "\(dump1.stderr)")
        #expect(dump1.output.contains("table -1 binary\n"))
        let oneEngineTable = try CLI.run(["dump", first, "--table=-1"])
        #expect(oneEngineTable.status == 0, "\(oneEngineTable.stderr)")
        #expect(oneEngineTable.output.hasPrefix("boxwood-dump 1\ntable -1 binary\n"))

        let refused = try CLI.run(["load", second], stdin: dump1.stdout)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("is reserved"), "\(refused.stderr)")

        let load = try CLI.run(["load", second, "--engine-tables"], stdin: dump1.stdout)
        #expect(load.status == 0, "\(load.stderr)")
        #expect(try CLI.run(["dump", second]).stdout == dump1.stdout)
        let box = try ValueBox(path: second, options: ValueBoxOptions(readOnly: true))
        var found: [String] = []
        try box.fullTextMatch(index, collectionId: nil, query: "boxwood", tags: nil) { _, item in found.append(item); return true }
        #expect(found == ["greeting"])
        try box.close()
    }

    /// After a writer stopped with the header's writer state set and no lock held, the note said "it crashed or
    /// was killed" — also when the writer had only failed to write its close checkpoint on a full disk (it
    /// reported ENOSPC itself). The header cannot tell these apart, so the note now names a failed write too.
    @Test func theNoteAfterAStoppedWriterNamesAFailedWrite() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        #expect(try CLI.run(["load", db], input: "boxwood-dump 1\ntable 1 binary\n01\t02\n").status == 0)
        try CLIFixture.markWriterStoppedMidWrite(db)

        let stat = try CLI.run(["stat", db])
        #expect(stat.status == 0, "\(stat.stderr)")
        #expect(stat.stderr.contains("the last writer stopped in the middle of a write"), "\(stat.stderr)")
        #expect(stat.stderr.contains("or a write failed"), "\(stat.stderr)")
        #expect(stat.stderr.contains("safe to continue"))
        let load = try CLI.run(["load", db], input: "boxwood-dump 1\ntable 1 binary\n03\t04\n")
        #expect(load.status == 0, "\(load.stderr)")
        #expect(load.stderr.contains("or a write failed"), "\(load.stderr)")
        #expect(load.stderr.contains("recovering from the WAL"), "\(load.stderr)")
        #expect(try CLI.run(["stat", db]).stderr.isEmpty)
    }
}
