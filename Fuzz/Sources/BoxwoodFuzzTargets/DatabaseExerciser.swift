@_spi(Fuzzing) import BoxwoodStore
import BoxwoodStoreTesting
import Foundation

/// What the database targets do with a forged database directory: open it read-only and read-write, `check` it,
/// read every entry of every table, optionally write and compact, close (which checkpoints), and — when the
/// read-write session found the database sound — reopen it and require it to be unchanged and still sound.
///
/// Errors thrown by the engine are the expected outcome for damaged files and end that step quietly. A crash,
/// a sanitizer report, or a broken invariant (a `precondition` here) is a finding.
enum DatabaseExerciser {
    struct Steps {
        var readOnly = true
        var write = false
        var compact = false
    }

    /// The options every open uses: a short lock timeout (nothing else holds the lock; a wait would be a bug).
    static var options: ValueBoxOptions {
        var options = ValueBoxOptions()
        options.lockTimeout = 2
        return options
    }

    /// Set `BOXWOOD_FUZZ_TRACE=1` to have each step's outcome printed to standard error (to see how deep an
    /// input gets; off while fuzzing).
    static let tracing = ProcessInfo.processInfo.environment["BOXWOOD_FUZZ_TRACE"] == "1"

    static func trace(_ message: @autoclosure () -> String) {
        if tracing { FileHandle.standardError.write(Data("  \(message())\n".utf8)) }
    }

    static func run(_ path: String, steps: Steps) {
        if steps.readOnly {
            var readOnly = options
            readOnly.readOnly = true
            do throws(BoxwoodError) {
                let box = try ValueBox(path: path, options: readOnly, fileSystem: ScratchFiles.fileSystem)
                let report = try box.check()
                let contents = try readEverything(box)
                trace("read-only: check \(report.isOK ? "ok" : "\(report.problems.prefix(2))"), anomalies \(contents.anomalies.count)")
                try box.close()
            } catch {
                trace("read-only: \(error)")
            }
        }
        let box: ValueBox
        do throws(BoxwoodError) {
            box = try ValueBox(path: path, options: options, fileSystem: ScratchFiles.fileSystem)
        } catch {
            trace("read-write open: \(error)")
            return
        }
        var sound = false
        var digest: UInt64 = 0
        do throws(BoxwoodError) {
            let report = try box.check()
            var contents = try readEverything(box)
            sound = report.isOK
            trace("read-write: check \(report.isOK ? "ok" : "\(report.problems.prefix(2))"), anomalies \(contents.anomalies.count)")
            if sound { precondition(contents.anomalies.isEmpty, "reads of a database that passed check disagree: \(contents.anomalies)") }
            if steps.write {
                try writeSomething(box)
                try box.checkpoint()
                let after = try box.check()
                if sound { precondition(after.isOK, "a write and a checkpoint made a sound database fail check: \(after.problems.prefix(3))") }
                contents = try readEverything(box)
                if sound { precondition(contents.anomalies.isEmpty, "reads after a write disagree: \(contents.anomalies)") }
            }
            digest = contents.value
            if steps.compact {
                _ = try box.compact()
                let after = try readEverything(box)
                let report = try box.check()
                if sound {
                    precondition(after.value == digest, "compaction changed the contents of a sound database")
                    precondition(report.isOK, "compaction made a sound database fail check: \(report.problems.prefix(3))")
                }
            }
        } catch {
            trace("read-write: \(error)")
            sound = false
        }
        do throws(BoxwoodError) {
            try box.close()
        } catch {
            trace("close: \(error)")
            sound = false
        }
        trace(sound ? "read-write: sound, reopening" : "read-write: not sound")
        guard sound else { return }
        // A sound database stays sound and unchanged across a close (which checkpoints) and an open.
        let reopened: ValueBox
        do throws(BoxwoodError) {
            reopened = try ValueBox(path: path, options: options, fileSystem: ScratchFiles.fileSystem)
        } catch {
            preconditionFailure("a database that passed check and closed cleanly does not reopen: \(error)")
        }
        do throws(BoxwoodError) {
            let report = try reopened.check()
            precondition(report.isOK, "a database that passed check fails it after close and reopen: \(report.problems.prefix(3))")
            let again = try readEverything(reopened)
            precondition(again.value == digest, "close and reopen changed the contents of a sound database")
            precondition(again.anomalies.isEmpty, "reads after reopening disagree: \(again.anomalies)")
            try reopened.close()
        } catch {
            preconditionFailure("a database that passed check and closed cleanly fails after reopening: \(error)")
        }
    }

    /// Reads every entry of every table (keys and values, ascending), counts, a descending range and point
    /// lookups; returns a digest of the contents and the inconsistencies the reads saw (which a database that
    /// passes `check` must not have).
    static func readEverything(_ box: ValueBox) throws(BoxwoodError) -> Digest {
        var digest = Digest()
        for table in try box.allTables().sorted(by: { $0.id < $1.id }) {
            digest.add(UInt64(bitPattern: Int64(table.id)))
            var firstKeys: [ValueBoxKey] = []
            var entries = 0
            try box.scan(table, values: { key, value in
                digest.add(key)
                digest.add(value.bytes)
                entries += 1
                if firstKeys.count < 4 { firstKeys.append(key) }
                return true
            })
            let counted = try box.count(table)
            if counted != entries { digest.anomalies.append("count(\(table.id)) is \(counted) but a scan found \(entries) entries") }
            for key in firstKeys {
                if try box.get(table, key: key) == nil { digest.anomalies.append("key \(key) of table \(table.id) found by a scan is missing from get") }
                _ = try box.exists(table, key: key)
            }
            // Descending, bounded.
            let int64 = table.keyType == .int64
            let high = int64 ? ValueBoxKey(int64: .max) : ValueBoxKey([UInt8](repeating: 0xff, count: 16))
            let low = int64 ? ValueBoxKey(int64: .min) : ValueBoxKey(length: 0)
            try box.range(table, start: high, end: low, keys: { _ in true }, limit: 8)
            if let first = firstKeys.first {
                _ = try box.count(table, start: first, end: high)
            }
        }
        _ = try box.statistics()
        return digest
    }

    /// A small transaction on every table: an insert, an overwrite, a large value, a remove and a range remove.
    static func writeSomething(_ box: ValueBox) throws(BoxwoodError) {
        let tables = try box.allTables()
        try box.begin()
        do throws(BoxwoodError) {
            for table in tables.prefix(8) {
                let key = table.keyType == .int64 ? ValueBoxKey(int64: 0x7fff_0000) : ValueBoxKey([0xfe, 0x01])
                try box.set(table, key: key, value: MemoryBuffer([1, 2, 3]))
                try box.set(table, key: key, value: MemoryBuffer([UInt8](repeating: 7, count: 3000)))
                var first: ValueBoxKey?
                try box.scan(table, keys: { first = $0; return false })
                if let first { try box.remove(table, key: first, secure: true) }
                if table.keyType == .int64 {
                    try box.removeRange(table, start: ValueBoxKey(int64: 10), end: ValueBoxKey(int64: 20))
                } else {
                    try box.removeRange(table, start: ValueBoxKey([0x10]), end: ValueBoxKey([0x20]))
                }
            }
            try box.set(ValueBoxTable(id: 77, keyType: .binary), key: ValueBoxKey([1]), value: MemoryBuffer([UInt8](repeating: 9, count: 5000)))
            try box.commit()
        } catch {
            if box.isInTransaction { box.abort() }
            throw error
        }
    }

    /// A running XXH64 chain over everything added.
    struct Digest {
        private(set) var value: UInt64 = 0
        /// Disagreements between reads (count vs scan, scan vs get).
        var anomalies: [String] = []

        mutating func add(_ bytes: UnsafeRawBufferPointer) {
            value = FuzzingSupport.xxh64(bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 8)!, bytes.count, seed: value &+ UInt64(bytes.count))
        }

        mutating func add(_ key: ValueBoxKey) { key.withUnsafeBytes { add($0) } }

        mutating func add(_ word: UInt64) {
            var word = word
            withUnsafeBytes(of: &word) { add($0) }
        }
    }
}

/// Where the database targets' files live, and small file helpers over the engine's own file layer.
///
/// Two backings, chosen by `BOXWOOD_FUZZ_FILES`:
/// - `memory` (the default): a fresh in-memory ``SimulatedDisk`` for every input, handed to the engine as its file
///   system. No system calls and no page faults on file pages: the database targets run about twice as fast, which
///   is what reaching 10^7 executions takes on a small machine. The engine's code above the file layer is the same.
/// - `disk`: files in one directory per process (`/dev/shm` when it exists: no disk I/O), through the POSIX layer
///   every app uses. The corpus regression test replays every input this way, so both paths see every input.
enum ScratchFiles {
    enum Backing: String {
        case memory, disk
    }

    static let backing: Backing = ProcessInfo.processInfo.environment["BOXWOOD_FUZZ_FILES"].flatMap(Backing.init(rawValue:)) ?? .memory

    /// The file system the engine is opened on for the current input (replaced by `install` with the memory backing).
    nonisolated(unsafe) private(set) static var fileSystem: StorageFileSystem = PosixFileSystem.shared

    nonisolated(unsafe) private static var directory: String?

    /// The database directory every input is installed in (created on first use with the disk backing).
    static func databaseDirectory() -> String {
        if let directory { return directory }
        if backing == .memory {
            directory = "/fuzz/db"
            return "/fuzz/db"
        }
        let fs = PosixFileSystem.shared
        var base = "/tmp"
        if fs.kind(of: "/dev/shm") == .directory { base = "/dev/shm" }
        let root = base + "/boxwood-fuzz-\(UInt64.random(in: 1...UInt64.max))"
        do throws(BoxwoodError) {
            try fs.createDirectory(root)
        } catch {
            preconditionFailure("cannot create the scratch directory \(root): \(error)")
        }
        let path = root + "/db"
        directory = path
        // Removed when the process exits normally (libFuzzer's own exit, a fork-mode job, a replay); a crash leaves
        // it behind with the files that crashed.
        atexit { ScratchFiles.removeScratchDirectory() }
        return path
    }

    /// Removes this process's scratch directory (the database directory and its parent).
    static func removeScratchDirectory() {
        guard backing == .disk, let directory else { return }
        removeDatabase(directory)
        try? FileManager.default.removeItem(atPath: String(directory.dropLast("/db".count)))
    }

    /// Replaces the database directory's files with these (nil: the file is absent).
    static func install(_ path: String, data: [UInt8], wal: [UInt8]?, header: [UInt8]?) {
        if backing == .memory {
            // A new disk: nothing of the last input (files, shared header, locks) survives into this one. 64 MiB of
            // address space per file bounds what a write and a compaction of a 64 KiB input can grow to.
            let disk = SimulatedDisk(seed: 1, fileCapacity: 64 << 20)
            do throws(BoxwoodError) {
                try disk.createDirectory("/fuzz")
                try disk.createDirectory(path)
            } catch {
                preconditionFailure("cannot create \(path) on a simulated disk: \(error)")
            }
            fileSystem = disk
        }
        let fs = fileSystem
        if fs.kind(of: path) == nil {
            do throws(BoxwoodError) { try fs.createDirectory(path) } catch { preconditionFailure("cannot create \(path): \(error)") }
        }
        for name in ["data", "wal", "header", "data.compact"] { try? fs.removeFile(path + "/" + name) }
        write(path + "/data", data)
        if let wal { write(path + "/wal", wal) }
        if let header { write(path + "/header", header) }
    }

    static func write(_ path: String, _ bytes: [UInt8]) {
        do throws(BoxwoodError) {
            let file = try fileSystem.open(path, create: true, readOnly: false)
            defer { file.close() }
            try file.truncate(to: 0)
            if !bytes.isEmpty {
                let failure: BoxwoodError? = bytes.withUnsafeBytes { b in
                    do throws(BoxwoodError) { try file.write(b.baseAddress!, count: b.count, offset: 0) } catch { return error }
                    return nil
                }
                if let failure { throw failure }
            }
        } catch {
            preconditionFailure("cannot write \(path): \(error)")
        }
    }

    /// The bytes of the file at `path`, or nil when there is none.
    static func read(_ path: String) throws(BoxwoodError) -> [UInt8]? {
        guard PosixFileSystem.shared.kind(of: path) == .regular else { return nil }
        let file = try PosixFileSystem.shared.open(path, create: false, readOnly: true)
        defer { file.close() }
        let size = Int(try file.size())
        var bytes = [UInt8](repeating: 0, count: size)
        if size > 0 {
            let failure: BoxwoodError? = bytes.withUnsafeMutableBytes { b in
                do throws(BoxwoodError) { _ = try file.read(into: b.baseAddress!, count: size, offset: 0) } catch { return error }
                return nil
            }
            if let failure { throw failure }
        }
        return bytes
    }

    /// Removes a directory tree made by the seed builders (files one level deep).
    static func removeDatabase(_ path: String) {
        for name in ["data", "wal", "header", "data.compact"] { try? PosixFileSystem.shared.removeFile(path + "/" + name) }
        try? FileManager.default.removeItem(atPath: path)
    }
}
