import ArgumentParser
import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `boxwood workload [--data-dir ./workload-data] [--keys N] [--seed N]`: a storage workload on an embedded database
/// in `<data-dir>/db` (the data directory is deleted and recreated first), printing each phase's operation
/// count, seconds and operations per second: bulk load, random gets, random updates, range scans, removes,
/// checkpoint, close + reopen, `check`, and the file sizes.
struct Workload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a storage workload on a fresh database and print what it did."
    )

    @Option(help: "Directory for the workload database (deleted and recreated).") var dataDir = "./workload-data"
    @Option(help: "Number of keys to load.") var keys = 200_000
    @Option(help: "Random seed (the same seed gives the same workload).") var seed: UInt64 = 1

    static let batch = 1_000
    static let valueSize = 100
    static let scanLength = 100
    /// The file that marks a directory as made by the workload (and so safe to delete).
    static let marker = ".boxwood-workload"

    func validate() throws {
        if keys < 1 { throw ValidationError("--keys must be at least 1") }
        if dataDir.isEmpty { throw ValidationError("--data-dir must not be empty") }
    }

    func run() throws {
        let dbPath = dataDir + "/db"
        try recreateScratchDirectory(dataDir, marker: Workload.marker, command: "boxwood workload")
        print("boxwood workload: \(keys) keys, \(Workload.valueSize)-byte values, \(Workload.batch)-op transactions, seed \(seed)")
        print("database: \(dbPath)")
        print("")
        print(pad("phase", 22) + lpad("ops", 10) + lpad("seconds", 10) + lpad("ops/s", 12) + "  notes")
        flushStdout()

        var rng = SplitMix64(seed: seed)
        let table = ValueBoxTable(id: 1, keyType: .binary)
        var box = try engine(dbPath) { () throws(BoxwoodError) in try ValueBox(path: dbPath) }
        var value = [UInt8](repeating: 0, count: Workload.valueSize)

        // Keys are 16 random bytes; remember them to read them back.
        var allKeys: [ValueBoxKey] = []
        allKeys.reserveCapacity(keys)
        for _ in 0..<keys {
            var k = ValueBoxKey(length: 16)
            k.setUInt64(0, value: rng.next())
            k.setUInt64(8, value: rng.next())
            allKeys.append(k)
        }

        // 1. Bulk load.
        var t = Clock.now()
        try engine(dbPath) { () throws(BoxwoodError) in
            var i = 0
            while i < keys {
                try box.begin()
                let end = min(i + Workload.batch, keys)
                while i < end {
                    value.withUnsafeMutableBytes { rng.fill($0) }
                    try box.set(table, key: allKeys[i], array: value)
                    i += 1
                }
                try box.commit()
            }
        }
        report("bulk load (set)", keys, Clock.since(t), "\((keys + Workload.batch - 1) / Workload.batch) transactions")

        // 2. Random gets.
        let gets = keys
        t = Clock.now()
        var hits = 0
        try engine(dbPath) { () throws(BoxwoodError) in
            for _ in 0..<gets {
                let k = allKeys[Int(rng.next() % UInt64(keys))]
                if try box.withValue(table, key: k, { $0.count }) != nil { hits += 1 }
            }
        }
        report("random get", gets, Clock.since(t), "\(hits) hits")

        // 3. Random updates.
        let updates = max(keys / 2, 1)
        t = Clock.now()
        try engine(dbPath) { () throws(BoxwoodError) in
            var i = 0
            while i < updates {
                try box.begin()
                let end = min(i + Workload.batch, updates)
                while i < end {
                    value.withUnsafeMutableBytes { rng.fill($0) }
                    let k = allKeys[Int(rng.next() % UInt64(keys))]
                    try box.set(table, key: k, array: value)
                    i += 1
                }
                try box.commit()
            }
        }
        report("random set (update)", updates, Clock.since(t), "\((updates + Workload.batch - 1) / Workload.batch) transactions")

        // 4. Range scans of 100 keys from a random start.
        let scans = max(keys / 20, 1)
        var scanned = 0
        // Greater than every 16-byte key: the scans run from a random key towards the end of the table.
        let upperBound = ValueBoxKey([UInt8](repeating: 0xFF, count: 17))
        t = Clock.now()
        try engine(dbPath) { () throws(BoxwoodError) in
            for _ in 0..<scans {
                let start = allKeys[Int(rng.next() % UInt64(keys))]
                try box.range(table, start: start, end: upperBound, values: { _, _ in
                    scanned += 1
                    return true
                }, limit: Workload.scanLength)
            }
        }
        report("range scan (100 keys)", scans, Clock.since(t), "\(scanned) entries read")

        // 5. Removes.
        let removes = max(keys / 10, 1)
        t = Clock.now()
        try engine(dbPath) { () throws(BoxwoodError) in
            var i = 0
            while i < removes {
                try box.begin()
                let end = min(i + Workload.batch, removes)
                while i < end {
                    try box.remove(table, key: allKeys[i])
                    i += 1
                }
                try box.commit()
            }
        }
        let remaining = try engine(dbPath) { () throws(BoxwoodError) in try box.count(table) }
        report("remove", removes, Clock.since(t), "\(remaining) entries left")

        // 6. Checkpoint.
        let walBefore = fileSize(dbPath + "/wal")
        t = Clock.now()
        try engine(dbPath) { () throws(BoxwoodError) in try box.checkpoint() }
        report("checkpoint", 1, Clock.since(t), "WAL \(bytes(walBefore)) -> \(bytes(fileSize(dbPath + "/wal")))")

        // 7. Close and reopen.
        t = Clock.now()
        try engine(dbPath) { () throws(BoxwoodError) in try box.close() }
        let closeTime = Clock.since(t)
        t = Clock.now()
        box = try engine(dbPath) { () throws(BoxwoodError) in try ValueBox(path: dbPath) }
        let reopenTime = Clock.since(t)
        report("close", 1, closeTime, "")
        report("reopen", 1, reopenTime, "\(try engine(dbPath) { () throws(BoxwoodError) in try box.count(table) }) entries")

        // 8. Check.
        t = Clock.now()
        let check = try engine(dbPath) { () throws(BoxwoodError) in try box.check() }
        report("check", check.pagesChecked, Clock.since(t),
               check.isOK ? "ok (\(check.entriesChecked) entries, \(check.pagesChecked) pages)" : "\(check.problems.count) problem(s)")
        let stats = try engine(dbPath) { () throws(BoxwoodError) in try box.statistics() }
        try engine(dbPath) { () throws(BoxwoodError) in try box.close() }

        print("")
        print("files: data \(bytes(fileSize(dbPath + "/data"))), wal \(bytes(fileSize(dbPath + "/wal")))")
        print("pages: \(stats.pagesTotal) total, \(stats.pagesFree) free, \(stats.pageSize) bytes each; "
            + "TransactionStateVersion \(stats.transactionStateVersion)")
        if !check.isOK {
            throw CommandFailure(status: ExitStatus.damaged, "check found " + check.problems.joined(separator: "; "), place: dbPath)
        }
    }

    private func report(_ phase: String, _ ops: Int, _ seconds: Double, _ notes: String) {
        let rate = ops > 1 && seconds > 0 ? fixed(Double(ops) / seconds, 0) : "-"
        print(pad(phase, 22) + lpad("\(ops)", 10) + lpad(fixed(seconds, 3), 10) + lpad(rate, 12) + "  " + notes)
        flushStdout()
    }
}

// MARK: Helpers

/// Monotonic time in seconds.
enum Clock {
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func since(_ start: Double) -> Double { now() - start }
}

/// The size of a file in bytes (-1 when missing).
/// Deletes and recreates a directory a command keeps its scratch database in, then marks it as made by that
/// command. Only a directory holding the marker file (made by an earlier run) or an empty one is deleted: a
/// mistyped `--data-dir` must not wipe unrelated files (exit 2 then).
func recreateScratchDirectory(_ path: String, marker: String, command: String) throws {
    if !isEmptyOrMissingDirectory(path) && fileSize(path + "/" + marker) < 0 {
        throw CommandFailure(status: ExitStatus.badInput, "exists and was not created by `\(command)` (no \(marker) file); refusing to delete it", place: path)
    }
    do {
        try removeTree(path)
        if mkdir(path, 0o755) != 0 { throw BoxwoodError.io(operation: "mkdir", path: path, errno: errno) }
        let fd = open(path + "/" + marker, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        if fd < 0 { throw BoxwoodError.io(operation: "create", path: path + "/" + marker, errno: errno) }
        close(fd)
    } catch let error as BoxwoodError {
        throw CommandFailure(error)
    }
}

func fileSize(_ path: String) -> Int64 {
    var st = stat()
    return stat(path, &st) == 0 ? Int64(st.st_size) : -1
}

/// True when nothing exists at `path` or it is an empty directory.
func isEmptyOrMissingDirectory(_ path: String) -> Bool {
    var st = stat()
    if lstat(path, &st) != 0 { return errno == ENOENT }
    guard (st.st_mode & S_IFMT) == S_IFDIR, let dir = opendir(path) else { return false }
    defer { closedir(dir) }
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
        }
        if name != "." && name != ".." { return false }
    }
    return true
}

/// Deletes a file or a directory tree; nothing happens when `path` does not exist.
func removeTree(_ path: String) throws(BoxwoodError) {
    var st = stat()
    if lstat(path, &st) != 0 {
        if errno == ENOENT { return }
        throw .io(operation: "lstat", path: path, errno: errno)
    }
    if (st.st_mode & S_IFMT) == S_IFDIR {
        guard let dir = opendir(path) else { throw .io(operation: "opendir", path: path, errno: errno) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(dir)
        for name in names { try removeTree(path + "/" + name) }
        if rmdir(path) != 0 { throw .io(operation: "rmdir", path: path, errno: errno) }
    } else if unlink(path) != 0 {
        throw .io(operation: "unlink", path: path, errno: errno)
    }
}

/// A human-readable byte count.
func bytes(_ n: Int64) -> String {
    if n < 0 { return "missing" }
    if n >= 1 << 20 { return fixed(Double(n) / Double(1 << 20), 1) + " MiB" }
    if n >= 1 << 10 { return fixed(Double(n) / Double(1 << 10), 1) + " KiB" }
    return "\(n) B"
}

/// `x` with `decimals` digits after the point.
func fixed(_ x: Double, _ decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let r = (x * scale).rounded() / scale
    if decimals == 0 { return "\(Int64(r))" }
    let whole = Int64(r.rounded(.towardZero))
    var frac = "\(Int64(((r - Double(whole)) * scale).rounded().magnitude))"
    while frac.count < decimals { frac = "0" + frac }
    return "\(whole).\(frac)"
}

/// Left-aligns `s` in `width` columns.
func pad(_ s: String, _ width: Int) -> String { s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count) }

/// Right-aligns `s` in `width` columns.
func lpad(_ s: String, _ width: Int) -> String { s.count >= width ? " " + s : String(repeating: " ", count: width - s.count) + s }
