import BoxwoodStore
import BoxwoodFullText
import Foundation
import Testing

/// `boxwood recover DB DEST`: salvages a database into a new one, reports what was lost, and never writes to DB.
@Suite struct RecoverTests {
    /// A database with 3,000 entries in table 1 (8-byte keys), an empty table 2 and a full-text index (engine
    /// tables); returns the `dump` of it.
    private func makeDatabase(_ db: String) throws -> String {
        let box = try ValueBox(path: db)
        try box.begin()
        let table = ValueBoxTable(id: 1, keyType: .binary)
        for i in 0..<3_000 {
            let key = withUnsafeBytes(of: UInt64(i).bigEndian) { Array($0) }
            try box.set(table, key: ValueBoxKey(key), value: MemoryBuffer([UInt8](repeating: UInt8(i & 0x7F), count: 40 + i % 90)))
        }
        try box.set(ValueBoxTable(id: 2, keyType: .int64), key: ValueBoxKey(int64: 1), value: MemoryBuffer([1]))
        try box.remove(ValueBoxTable(id: 2, keyType: .int64), key: ValueBoxKey(int64: 1))
        try box.fullTextSet(ValueBoxFullTextTable(id: 0), collectionId: "c", itemId: "greeting", contents: "hello boxwood world", tags: "")
        try box.commit()
        try box.close()
        let dump = try CLI.run(["dump", db])
        #expect(dump.status == 0, "\(dump.stderr)")
        return dump.output
    }

    /// The keys (hex) of a leaf page of table 1 in `data`: a leaf whose first key is 8 bytes (catalog keys are 4).
    private func leafOfTable1(_ data: Data) -> (page: Int, keys: [String])? {
        let bytes = [UInt8](data)
        func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
        for page in 2..<(bytes.count / 4096) {
            let base = page * 4096
            guard bytes[base + 8] == 3, u16(base + 10) >= 10, u16(base + u16(base + 32)) == 8 else { continue }
            let keys = (0..<u16(base + 10)).map { i -> String in
                let cell = base + u16(base + 32 + 2 * i)
                return DumpBuilder.hex(Array(bytes[(cell + 7)..<(cell + 7 + u16(cell))]))
            }
            return (page, keys)
        }
        return nil
    }

    @Test func undamagedDatabaseRecoversToTheSameDump() throws {
        let dir = try TempDir()
        let db = dir.path("db"), dest = dir.path("dest")
        let dump = try makeDatabase(db)
        let files = try FileManager.default.contentsOfDirectory(atPath: db).sorted()
        let recover = try CLI.run(["recover", db, dest])
        #expect(recover.status == 0, "\(recover.output)\(recover.stderr)")
        #expect(recover.output.contains("complete: nothing was lost"), "\(recover.output)")
        #expect(try CLI.run(["check", dest]).status == 0)
        #expect(try CLI.run(["dump", dest]).output == dump)
        #expect(try FileManager.default.contentsOfDirectory(atPath: db).sorted() == files)

        // DEST exists now: refused with 2, nothing written.
        let again = try CLI.run(["recover", db, dest])
        #expect(again.status == 2, "\(again.stderr)")
        #expect(again.stderr.contains("exists"), "\(again.stderr)")
        #expect(try CLI.run(["dump", dest]).output == dump)
    }

    @Test func damagedLeafIsReportedAndTheRestRecovered() throws {
        let dir = try TempDir()
        let db = dir.path("db"), dest = dir.path("dest")
        let dump = try makeDatabase(db)
        var data = try Data(contentsOf: URL(fileURLWithPath: db + "/data"))
        let (page, keys) = try #require(leafOfTable1(data))
        data[page * 4096 + 2000] ^= 0x5A
        try data.write(to: URL(fileURLWithPath: db + "/data"))

        let recover = try CLI.run(["recover", db, dest, "--json"])
        #expect(recover.status == 1, "\(recover.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: recover.stdout) as? [String: Any])
        #expect(json["complete"] as? Bool == false)
        let tables = try #require(json["tables"] as? [[String: Any]])
        let table1 = try #require(tables.first { ($0["id"] as? NSNumber)?.intValue == 1 })
        #expect((table1["pages_lost"] as? [NSNumber])?.map(\.intValue) == [page])
        #expect((table1["entries"] as? NSNumber)?.intValue == 3_000 - keys.count)
        #expect((table1["entries_expected"] as? NSNumber)?.intValue == 3_000)
        #expect(tables.contains { ($0["id"] as? NSNumber)?.intValue ?? 0 < 0 }, "the full-text index's engine tables")

        #expect(try CLI.run(["check", dest]).status == 0)
        // The dump of the source without the damaged leaf's entries (in table 1 only: an engine table may hold the
        // same key bytes).
        let lost = Set(keys)
        var inTable1 = false
        let expected = dump.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            if line.hasPrefix("table ") { inTable1 = line == "table 1 binary"; return true }
            guard inTable1, let tab = line.firstIndex(of: "\t") else { return true }
            return !lost.contains(String(line[..<tab]))
        }.joined(separator: "\n")
        #expect(try CLI.run(["dump", dest]).output == expected)

        let text = try CLI.run(["recover", db, dir.path("dest2")])
        #expect(text.status == 1)
        #expect(text.output.contains("LOST 1 page (\(page))"), "\(text.output)")
        #expect(text.stderr.contains("some entries were lost"), "\(text.stderr)")
    }

    @Test func notADatabaseFailsCleanly() throws {
        let dir = try TempDir()
        let result = try CLI.run(["recover", dir.path("missing"), dir.path("dest")])
        #expect(result.status == 1)
        #expect(result.stderr.contains("not a Boxwood database"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("dest")))
    }
}
