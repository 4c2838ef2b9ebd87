import Foundation
import Testing
@testable import BoxwoodStore

/// The shared header is a hint: a stale one (an older moment of this database, same checkpoint generation) or a
/// foreign one (another database's, same generation) never changes what an open reads, and a published WAL end
/// beyond the log is never a size to allocate.
@Suite struct HeaderHintTests {
    let table = ValueBoxTable(id: 4, keyType: .int64)

    private func options(readOnly: Bool = false) -> ValueBoxOptions {
        var options = ValueBoxOptions(readOnly: readOnly)
        options.checkpointWALBytes = 1 << 30
        options.lockTimeout = 2
        return options
    }

    private func commit(_ box: ValueBox, _ range: Range<Int>) throws {
        for i in range {
            try box.begin()
            try box.set(table, key: ValueBoxKey(int64: Int64(i)), value: MemoryBuffer([UInt8(i & 0xFF)]))
            try box.commit()
        }
    }

    @Test func aStaleHeaderOfTheSameGenerationDoesNotHideLaterCommits() throws {
        let path = temporaryDatabasePath("hint-stale")
        defer { removeItem(path) }
        let writer = try ValueBox(path: path, options: options())
        try commit(writer, 0..<3)
        let stale = try readFile(path + "/header")
        try commit(writer, 3..<8)
        // Before: a read-only open showed version 3 and `check` said ok.
        try writeFile(path + "/header", stale)
        let reader = try ValueBox(path: path, options: options(readOnly: true))
        #expect(reader.transactionStateVersion == 8)
        #expect(try reader.count(table) == 8)
        #expect(try reader.check().problems == [])
        try reader.close()
        try writer.close()
    }

    @Test func aForeignHeaderOfTheSameGenerationDoesNotHideTheLog() throws {
        let path = temporaryDatabasePath("hint-foreign")
        let other = temporaryDatabasePath("hint-foreign-other")
        defer { removeItem(path); removeItem(other) }
        let writer = try ValueBox(path: path, options: options())
        try commit(writer, 0..<6)
        let otherBox = try ValueBox(path: other, options: options())
        #expect(otherBox.meta.generation == writer.meta.generation)
        // Before: the other database's header (version 0, another salt) hid all six commits.
        try writeFile(path + "/header", try readFile(other + "/header"))
        let reader = try ValueBox(path: path, options: options(readOnly: true))
        #expect(reader.transactionStateVersion == 6)
        #expect(try reader.count(table) == 6)
        try reader.close()
        try otherBox.close()
        try writer.close()
    }

    @Test(arguments: [UInt64(1) << 44, UInt64.max - 7])
    func aPublishedWALEndBeyondTheLogIsNotTrusted(_ end: UInt64) throws {
        let path = temporaryDatabasePath("hint-wal-end")
        defer { removeItem(path) }
        let writer = try ValueBox(path: path, options: options())
        let reader = try ValueBox(path: path, options: options())
        try commit(writer, 0..<4)
        #expect(try reader.count(table) == 4)
        try commit(writer, 4..<5)
        // Before: 16 TiB allocated (SIGABRT), or a trap converting the distance to Int.
        let header = try #require(writer.header)
        var published = try #require(header.read()).state
        published.walEnd = end
        header.publish(published)
        #expect(try reader.count(table) == 5)
        #expect(reader.transactionStateVersion == 5)
        try commit(writer, 5..<6)
        #expect(try reader.count(table) == 6)
        try reader.close()
        try writer.close()
    }

    /// A writable value box never installs a published state without its log: with `wal` deleted under a live
    /// writer it reads the files under the writer lock (which creates the log) instead.
    @Test func aWritableOpenWithoutTheLogWaitsForTheWriterLock() throws {
        let path = temporaryDatabasePath("hint-no-wal")
        defer { removeItem(path) }
        let writer = try ValueBox(path: path, options: options())
        try commit(writer, 0..<3)
        try writer.checkpoint()
        try writer.begin()
        removeItem(path + "/" + ValueBox.walFileName)
        var quick = options()
        quick.lockTimeout = 0.2
        // Before: it opened from the published snapshot without a log, and its first commit trapped.
        #expect(throws: BoxwoodError.self) { _ = try ValueBox(path: path, options: quick) }
        writer.abort()
        let second = try ValueBox(path: path, options: options())
        try commit(second, 3..<4)
        #expect(try second.count(table) == 4)
        try second.close()
        try? writer.close()
    }
}
