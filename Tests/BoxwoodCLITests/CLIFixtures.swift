import BoxwoodStore
import Foundation

/// Databases that the CLI tests prepare in this process before they run `boxwood` on them.
enum CLIFixture {
    /// The binary table ``openDatabaseWithOneEntry(_:)`` writes.
    static let table = ValueBoxTable(id: 1, keyType: .binary)

    /// Creates a database at `db` holding one committed entry (key [1] → value [1] in ``table``) and returns its
    /// box, still open: the caller closes it.
    static func openDatabaseWithOneEntry(_ db: String) throws -> ValueBox {
        let box = try ValueBox(path: db)
        do {
            try box.begin()
            try box.set(table, key: ValueBoxKey([1]), value: MemoryBuffer([1]))
            try box.commit()
        } catch {
            try? box.close()
            throw error
        }
        return box
    }

    /// Sets the writer state in the shared header of the database at `db` (offset 72) to 1 while no process
    /// holds the write lock: what a writer that stopped in the middle of a write leaves behind.
    static func markWriterStoppedMidWrite(_ db: String) throws {
        let header = try FileHandle(forUpdating: URL(fileURLWithPath: db + "/header"))
        try header.seek(toOffset: 72)
        try header.write(contentsOf: Data([1, 0, 0, 0, 0, 0, 0, 0]))
        try header.close()
    }
}
