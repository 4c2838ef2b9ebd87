import Foundation
import Testing
@testable import BoxwoodStore
#if canImport(Glibc)
import Glibc
#endif

/// A FIFO (or any non-regular file) where a database file belongs is refused with a typed error at once — before,
/// a FIFO named `data`, `wal` or `header` blocked `open()` forever (issue 22, "Hangs").
@Suite("special files", .timeLimit(.minutes(1)))
struct SpecialFileTests {
    @Test("a FIFO as data, wal or header: notABoxwoodDatabase, read-write and read-only, no hang", arguments: ["data", "wal", "header"])
    func fifoInPlaceOfAFile(name: String) throws {
        let path = temporaryDatabasePath("fifo-\(name)")
        defer { removeItem(path) }
        let box = try ValueBox(path: path)
        try box.begin()
        try box.set(ValueBoxTable(id: 1, keyType: .binary), key: bkey([1]), value: mbuf([1]))
        try box.commit()
        try box.close()
        #expect(unlink(path + "/" + name) == 0)
        #expect(mkfifo(path + "/" + name, 0o600) == 0)
        for readOnly in [false, true] {
            var options = ValueBoxOptions()
            options.readOnly = readOnly
            if readOnly && name == "wal" {
                // A read-only open loads the snapshot the header publishes; with the log empty it never opens the
                // WAL, so it opens (and must not hang); a read that needs the log gets the typed error.
                let reader = try ValueBox(path: path, options: options)
                #expect(try reader.get(ValueBoxTable(id: 1, keyType: .binary), key: bkey([1]))?.makeArray() == [1])
                try reader.close()
                continue
            }
            #expect {
                _ = try ValueBox(path: path, options: options)
            } throws: { error in
                guard case let .notABoxwoodDatabase(failed, reason)? = error as? BoxwoodError else { return false }
                return failed.hasSuffix("/" + name) && reason.contains("not a regular file")
            }
        }
    }
}
