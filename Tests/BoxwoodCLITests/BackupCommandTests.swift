import BoxwoodStore
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `boxwood backup`: the copy checks clean and dumps like the source; an existing destination is exit 2 and left
/// alone; a missing source is exit 1 with nothing written; a `boxwood backup` SIGKILLed mid-copy never leaves
/// anything under DEST, and the next backup to the same DEST succeeds.
@Suite("boxwood backup")
struct BackupCommandTests {
    /// A closed database: `entries` entries with `valueSize`-byte incompressible values in table 1, one in table 2.
    static func makeDatabase(_ path: String, entries: Int, valueSize: Int) throws {
        let box = try ValueBox(path: path)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let table = ValueBoxTable(id: 1, keyType: .int64)
        for start in stride(from: 0, to: entries, by: 1_000) {
            try box.begin()
            for i in start..<min(entries, start + 1_000) {
                let value = (0..<valueSize).map { _ in
                    state = state &* 6364136223846793005 &+ 1442695040888963407
                    return UInt8(truncatingIfNeeded: state >> 33)
                }
                try box.set(table, key: ValueBoxKey(int64: Int64(i)), value: MemoryBuffer(value))
            }
            try box.commit()
        }
        try box.begin()
        try box.set(ValueBoxTable(id: 2, keyType: .binary), key: ValueBoxKey(Array("only-in-the-wal".utf8)), value: MemoryBuffer([1, 2, 3]))
        try box.commit()
        try box.close()
    }

    @Test("backup copies, refuses an existing destination, fails cleanly on a missing source")
    func backupCommand() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        try Self.makeDatabase(db, entries: 3_000, valueSize: 100)
        let result = try CLI.run(["backup", db, dir.path("copy"), "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        #expect(json?["entries"] as? Int == 3_001)
        #expect(json?["tables"] as? Int == 2)
        #expect(try CLI.run(["check", dir.path("copy")]).status == 0)
        let sourceDump = try CLI.run(["dump", db])
        let copyDump = try CLI.run(["dump", dir.path("copy")])
        #expect(sourceDump.status == 0 && copyDump.status == 0)
        #expect(sourceDump.stdout == copyDump.stdout)

        let again = try CLI.run(["backup", db, dir.path("copy")])
        #expect(again.status == 2)
        #expect(again.stdout.isEmpty)
        #expect(again.stderr.contains("already exists"), "\(again.stderr)")
        #expect(try CLI.run(["dump", dir.path("copy")]).stdout == copyDump.stdout, "the existing copy is untouched")

        let missing = try CLI.run(["backup", dir.path("nothing-here"), dir.path("copy2")])
        #expect(missing.status == 1)
        #expect(!FileManager.default.fileExists(atPath: dir.path("copy2")))
        #expect(!FileManager.default.fileExists(atPath: dir.path("nothing-here")))
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()
        #expect(names == ["copy", "db"])
    }

    @Test("a backup killed mid-copy leaves nothing under DEST; the next one succeeds")
    func killedBackup() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        try Self.makeDatabase(db, entries: 30_000, valueSize: 1_000)
        let dest = dir.path("copy")
        var killedMidCopy = 0
        for attempt in 0..<3 {
            let running = try RunningCLI(["backup", db, dest])
            // Wait for the partial directory's data file to exist, then kill.
            let deadline = Date().addingTimeInterval(30)
            var partialSeen = false
            while Date() < deadline && running.process.isRunning {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.url.path)) ?? []
                if let partial = names.first(where: { $0.hasPrefix("copy.partial-") }),
                   FileManager.default.fileExists(atPath: dir.path(partial) + "/data") {
                    partialSeen = true
                    break
                }
                usleep(1_000)
            }
            kill(running.process.processIdentifier, SIGKILL)
            #expect(running.waitForExit())
            if running.process.terminationReason == .uncaughtSignal {
                #expect(partialSeen)
                #expect(!FileManager.default.fileExists(atPath: dest), "attempt \(attempt): a killed backup left \(dest)")
                killedMidCopy += 1
            } else {
                // It finished before the kill: the copy is whole.
                #expect(try CLI.run(["check", dest]).status == 0)
                try FileManager.default.removeItem(atPath: dest)
            }
        }
        #expect(killedMidCopy > 0, "no backup was killed before it finished")
        let result = try CLI.run(["backup", db, dest])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try CLI.run(["check", dest]).status == 0)
        #expect(try CLI.run(["dump", dest]).stdout == (try CLI.run(["dump", db])).stdout)
    }

    /// A destination directory `nobody` may not write to (permissions do not apply to root, so the tool runs as
    /// `nobody` through `setpriv`; skipped where that is not possible): exit 1, permission denied, nothing written.
    @Test(.enabled(if: CLI.setpriv != nil)) func readOnlyDestination() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        try Self.makeDatabase(db, entries: 500, valueSize: 50)
        for name in try FileManager.default.contentsOfDirectory(atPath: db) {
            try FileManager.default.setAttributes([.ownerAccountName: "nobody", .posixPermissions: 0o600], ofItemAtPath: db + "/" + name)
        }
        try FileManager.default.setAttributes([.ownerAccountName: "nobody", .posixPermissions: 0o700], ofItemAtPath: db)
        let locked = dir.path("locked")
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: locked)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.url.path)
        let result = try CLI.runAsNobody(["backup", db, locked + "/copy"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("permission denied"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: locked).isEmpty)
        // The same user can back up to a directory it may write to.
        let writable = dir.path("writable")
        try FileManager.default.createDirectory(atPath: writable, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.ownerAccountName: "nobody", .posixPermissions: 0o700], ofItemAtPath: writable)
        let ok = try CLI.runAsNobody(["backup", db, writable + "/copy"])
        #expect(ok.status == 0, "\(ok.stderr)")
    }

    /// A full disk: the destination is a 1 MiB tmpfs (skipped with a message where mounting is not allowed). The
    /// backup of a larger database fails with exit 1 naming the full disk, leaves nothing on the tmpfs, and the
    /// source dumps as before.
    @Test func fullDiskDestination() throws {
        let dir = try TempDir()
        let mountPoint = dir.path("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        let mount = try CLI.run(["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint], executable: URL(fileURLWithPath: "/bin/mount"))
        guard mount.status == 0 else {
            print("skipped: cannot mount a tmpfs here (\(mount.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))")
            return
        }
        defer { _ = try? CLI.run([mountPoint], executable: URL(fileURLWithPath: "/bin/umount")) }
        let db = dir.path("db")
        try Self.makeDatabase(db, entries: 4_000, valueSize: 1_000)
        let before = try CLI.run(["dump", db]).stdout
        let result = try CLI.run(["backup", db, mountPoint + "/copy"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("disk is full"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint).isEmpty, "nothing is left on the full disk")
        #expect(try CLI.run(["dump", db]).stdout == before)
        #expect(try CLI.run(["check", db]).status == 0)
    }
}
