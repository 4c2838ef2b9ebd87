import BoxwoodStore
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `boxwood readers`: lists this process (with the generation its snapshot pins) and a `boxwood watch` process as
/// alive readers; once the watcher is SIGKILLed its slot shows as dead, and `--clear-stale` frees that slot only.
@Suite("boxwood readers")
struct ReadersCommandTests {
    struct Row: Equatable {
        var pid: Int
        var pinned: Int?
        var age: Int?
        var alive: Bool
    }

    func readers(_ args: [String]) throws -> (rows: [Row], cleared: Int) {
        let result = try CLI.run(["readers"] + args + ["--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any] ?? [:]
        let rows = (object["readers"] as? [[String: Any]] ?? []).map { r in
            Row(pid: r["pid"] as? Int ?? -1, pinned: r["pinned_generation"] as? Int, age: r["age_seconds"] as? Int, alive: r["alive"] as? Bool ?? false)
        }
        return (rows, object["cleared"] as? Int ?? -1)
    }

    @Test func readersListsPinsAndClearsDeadSlots() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let box = try CLIFixture.openDatabaseWithOneEntry(db)
        defer { try? box.close() }
        try box.checkpoint()
        try box.beginRead()
        let me = Int(getpid())
        let watch = try RunningCLI(["watch", db, "--interval", "0.05"])
        #expect(watch.waitForOutput { $0.contains("\n") }, "watch did not start: \(watch.errors)")
        let watcher = Int(watch.process.processIdentifier)

        let before = try readers([db]).rows
        let mine = before.filter { $0.pid == me }
        #expect(mine.count == 1, "\(before)")
        #expect(mine.first?.alive == true)
        #expect(mine.first?.pinned != nil, "this process holds a read snapshot: \(before)")
        #expect((mine.first?.age ?? -1) >= 0 && (mine.first?.age ?? 1_000) < 600)
        #expect(before.contains { $0.pid == watcher && $0.alive }, "\(before)")
        let text = try CLI.run(["readers", db])
        #expect(text.status == 0)
        #expect(text.output.contains("pid \(watcher)"), "\(text.output)")
        #expect(text.output.hasSuffix("2 readers\n"), "\(text.output)")

        kill(watch.process.processIdentifier, SIGKILL)
        #expect(watch.waitForExit())
        let after = try readers([db]).rows
        #expect(after.contains { $0.pid == watcher && !$0.alive }, "the killed watcher's slot shows as dead: \(after)")
        let cleared = try readers([db, "--clear-stale"])
        #expect(cleared.cleared == 1)
        #expect(!cleared.rows.contains { $0.pid == watcher }, "\(cleared.rows)")
        #expect(cleared.rows.filter { $0.pid == me } == mine.map { Row(pid: $0.pid, pinned: $0.pinned, age: cleared.rows.first { $0.pid == me }?.age, alive: true) })
        box.endRead()
        #expect(try readers([db]).rows.first { $0.pid == me }?.pinned == nil, "the pin ends with the snapshot")

        // Not a database: exit 2; missing: exit 1; nothing created.
        #expect(try CLI.run(["readers", dir.path("missing")]).status == 1)
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir.path("file")))
        #expect(try CLI.run(["readers", dir.path("file")]).status == 2)
        #expect(!FileManager.default.fileExists(atPath: dir.path("missing")))
    }
}
