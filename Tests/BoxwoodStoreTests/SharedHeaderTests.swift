import BoxwoodStore
import Foundation
import Testing

/// The shared header is volatile: whatever state it is found in — missing, random bytes, stale (from an
/// earlier moment or another database), left half-published or flagged by a writer that died — open and the
/// next writer rebuild it from `data` and `wal`, and every commit survives.
@Suite struct SharedHeaderTests {
    let table = ValueBoxTable(id: 7, keyType: .int64)

    private func commit(_ box: ValueBox, _ range: Range<Int>) throws {
        for i in range {
            try box.begin()
            try box.set(table, key: ValueBoxKey(int64: Int64(i)), value: MemoryBuffer([UInt8](repeating: UInt8(i & 0xFF), count: 40)))
            try box.commit()
        }
    }

    private func expectContents(_ box: ValueBox, count: Int, _ comment: Comment) throws {
        #expect(box.transactionStateVersion == UInt64(count), comment)
        #expect(try box.count(table) == count, comment)
        for i in [0, count / 2, count - 1] where count > 0 {
            #expect(try box.get(table, key: ValueBoxKey(int64: Int64(i)))?.length == 40, comment)
        }
        #expect(try box.check().problems == [], comment)
    }

    private func options(readOnly: Bool = false) -> ValueBoxOptions {
        var options = ValueBoxOptions(readOnly: readOnly)
        options.lockTimeout = 2
        return options
    }

    @Test(arguments: ["missing", "random", "zeros", "stale", "foreign", "half-published", "wrong-version"])
    func aBadHeaderIsRebuiltOnOpen(_ damage: String) throws {
        for readOnlyFirst in [false, true] {
            let path = temporaryDatabasePath("header-\(damage)")
            defer { removeItem(path) }
            let headerPath = path + "/header"
            let box = try ValueBox(path: path, options: options())
            try commit(box, 0..<5)
            let early = try readFile(headerPath)
            try commit(box, 5..<12)
            try box.close()
            var rng = SplitMix64(seed: 77)
            switch damage {
            case "missing":
                removeItem(headerPath)
            case "random":
                try writeFile(headerPath, rng.bytes(8192))
            case "zeros":
                try writeFile(headerPath, [UInt8](repeating: 0, count: 100))
            case "stale":
                try writeFile(headerPath, early)
            case "foreign":
                let other = temporaryDatabasePath("header-other")
                defer { removeItem(other) }
                let otherBox = try ValueBox(path: other)
                try commit(otherBox, 0..<3)
                try otherBox.close()
                try writeFile(headerPath, try readFile(other + "/header"))
            case "half-published":
                var bytes = try readFile(headerPath)
                bytes[16] |= 1   // the seqlock word left odd by a writer that died while publishing
                try writeFile(headerPath, bytes)
            default:
                var bytes = try readFile(headerPath)
                bytes[8] = 99
                try writeFile(headerPath, bytes)
            }
            if readOnlyFirst {
                let reader = try ValueBox(path: path, options: options(readOnly: true))
                try expectContents(reader, count: 12, "\(damage), read-only open first")
                try reader.close()
            }
            let reopened = try ValueBox(path: path, options: options())
            try expectContents(reopened, count: 12, "\(damage)")
            try commit(reopened, 12..<14)
            let second = try ValueBox(path: path, options: options())
            try expectContents(second, count: 14, "\(damage), second box")
            try second.close()
            try reopened.close()
        }
    }

    /// What a writer killed in the middle of a commit leaves: the header of the previous commit with the flag
    /// that says the files ran ahead of it, and its record in the WAL torn or complete. The next writer
    /// rebuilds from the files: a torn record is cut off, a complete one is kept (it was never acknowledged,
    /// so either is allowed; the files decide, exactly as after a crash).
    @Test(arguments: [true, false])
    func aWriterThatDiedMidCommitIsRepairedByTheNext(torn: Bool) throws {
        let path = temporaryDatabasePath("header-died")
        let copy = temporaryDatabasePath("header-died-copy")
        defer { removeItem(path); removeItem(copy) }
        let box = try ValueBox(path: path, options: options())
        try commit(box, 0..<6)
        var header = try readFile(path + "/header")
        let walSize = Int(try box.statistics().walBytes)
        try commit(box, 6..<7)
        try copyDatabaseFiles(from: path, to: copy)
        try box.close()
        header[72] = 1
        try writeFile(copy + "/header", header)
        if torn {
            let wal = try readFile(copy + "/wal")
            try writeFile(copy + "/wal", Array(wal[..<(walSize + 50)]))
        }
        let reader = try ValueBox(path: copy, options: options(readOnly: true))
        let survivors = torn ? 6 : 7
        // A reader is not disturbed by the flag, and trusts the header only as far as the files agree: a complete
        // record after what it publishes is read (the repairing writer keeps it too); a torn one is not.
        #expect(reader.transactionStateVersion == UInt64(survivors) && reader.snapshotVersion == UInt64(survivors))
        let writer = try ValueBox(path: copy, options: options())
        #expect(reader.transactionStateVersion == UInt64(survivors))
        try writer.begin()
        #expect(writer.snapshotVersion == UInt64(survivors))
        writer.abort()
        try commit(writer, 7..<9)
        #expect(writer.transactionStateVersion == UInt64(survivors + 2))
        #expect(try reader.count(table) == (torn ? 8 : 9))
        #expect(try reader.check().problems == [])
        try reader.close()
        try writer.close()
        let reopened = try ValueBox(path: copy, options: options())
        #expect(reopened.transactionStateVersion == UInt64(survivors + 2))
        #expect(try reopened.count(table) == (torn ? 8 : 9))
        #expect(try reopened.check().problems == [])
        try reopened.close()
    }

    @Test func readSnapshotsStayPutWhileAnotherBoxCommitsAndCheckpoints() throws {
        let path = temporaryDatabasePath("header-snapshot")
        defer { removeItem(path) }
        let writer = try ValueBox(path: path, options: options())
        try commit(writer, 0..<50)
        // Checkpointed first, so that the reader's snapshot lives in pages of the data file (which a later
        // checkpoint could reuse), not only in memory replayed from the WAL.
        try writer.checkpoint()
        let reader = try ValueBox(path: path, options: options(readOnly: true))
        try reader.beginRead()
        #expect(try reader.count(table) == 50)
        func snapshotBytes() throws -> [UInt8] {
            var bytes: [UInt8] = []
            try reader.scanInt64(table) { key, value in
                bytes += withUnsafeBytes(of: key) { Array($0) } + Array(UnsafeRawBufferPointer(start: value.memory, count: value.length))
                return true
            }
            return bytes
        }
        let expected = try snapshotBytes()
        #expect(throws: BoxwoodError.transactionAlreadyActive) { try reader.begin() }
        for round in 0..<8 {
            try writer.begin()
            for i in 0..<200 {
                try writer.set(table, key: ValueBoxKey(int64: Int64(i)), value: MemoryBuffer([UInt8](repeating: UInt8(round), count: 300)))
            }
            try writer.commit()
            try writer.checkpoint()
            // The pinned snapshot still reads the state of its start, byte for byte.
            #expect(try reader.count(table) == 50)
            #expect(try snapshotBytes() == expected)
            #expect(try reader.get(table, key: ValueBoxKey(int64: 10))?.length == 40)
            #expect(reader.snapshotVersion == 50)
            #expect(reader.transactionStateVersion == UInt64(51 + round))
            #expect(try writer.statistics().checkpointGeneration > UInt64(round + 1))
        }
        reader.endRead()
        #expect(try reader.count(table) == 200)
        #expect(try reader.get(table, key: ValueBoxKey(int64: 10))?.length == 300)
        #expect(try reader.check().problems == [])
        try reader.close()
        try writer.close()
    }
}
