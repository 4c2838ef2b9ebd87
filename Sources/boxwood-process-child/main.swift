// boxwood-process-child <mode> <dbPath> [arguments…]
//
// One of several real processes sharing a database in the multi-process tests (Tests/BoxwoodCrashTests/
// MultiProcessTests.swift). Modes:
//
//     counter <db> <process> <txns> <counters> <seed>
//         Each transaction increments one of <counters> shared counters (table 1) and appends an entry
//         (table 2, key process << 32 | i) holding the version it committed. Checks that the versions it
//         commits strictly increase and that its own list is intact. Prints `V <version>` per commit
//         (buffered) and `DONE <commits>`.
//     transfer <db> <process> <txns> <accounts> <seed> <stopFile>
//         Each transaction moves a random amount between two of <accounts> balances (table 3); the sum never
//         changes. After <txns> transactions it goes on until <stopFile> exists. Prints `DONE <commits>`.
//     reader <db> <accounts> <sum> <snapshots> <stopFile>
//         <snapshots> times, then creates <stopFile>: a read snapshot that sums every balance and checks it
//         equals <sum>; every
//         16th snapshot stays open for 40 more scans (10 ms or more), which must read exactly the same balances while the
//         writers commit and checkpoint. Prints `DONE <snapshots> <distinct versions seen>`; exits 1 on a
//         violation.
//     master <db>
//         Becomes the master client; prints `MASTER <sessionClientId>`.
//     hold-writer <db>
//         Begins a transaction (taking the writer lock), writes, prints `LOCKED`, then sleeps until killed.
//     hold-reader <db>
//         Opens a read snapshot, prints `PINNED <generation>`, then sleeps until killed.
//
// Errors go to stderr as `E <description>` with exit status 3. BOXWOOD_CHILD_CHECKPOINT_BYTES (default 48 KiB)
// and BOXWOOD_CHILD_DURABILITY (default normal) override the options, for throughput measurements.

import BoxwoodCrashWorkload
import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let counters = ValueBoxTable(id: 1, keyType: .int64)
let lists = ValueBoxTable(id: 2, keyType: .int64)
let accounts = ValueBoxTable(id: 3, keyType: .int64)


func fail(_ message: String, status: Int32 = 3) -> Never {
    emit(2, "E \(message)\n")
    exit(status)
}

func int64(_ buffer: ReadBuffer?) -> Int64 {
    guard let buffer, buffer.length == 8 else { return 0 }
    return buffer.memory.loadUnaligned(as: Int64.self)
}

func buffer(_ value: Int64) -> MemoryBuffer {
    withUnsafeBytes(of: value) { MemoryBuffer(Array($0)) }
}

func openBox(_ path: String, checkpointBytes: UInt64 = 48 << 10) -> ValueBox {
    var options = ValueBoxOptions(durability: .normal)
    // Small thresholds: checkpoints (and readers reloading from a new meta) happen often.
    options.checkpointWALBytes = checkpointBytes
    if let bytes = getenv("BOXWOOD_CHILD_CHECKPOINT_BYTES").flatMap({ UInt64(String(cString: $0)) }) { options.checkpointWALBytes = bytes }
    if let mode = getenv("BOXWOOD_CHILD_DURABILITY").flatMap({ Durability(rawValue: String(cString: $0)) }) { options.durability = mode }
    options.lockTimeout = 60
    do { return try ValueBox(path: path, options: options) } catch { fail("open: \(error)") }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { fail("usage: boxwood-process-child <mode> <db> …", status: 2) }
let mode = arguments[1]
let path = arguments[2]

func argument(_ index: Int) -> Int {
    guard arguments.count > index, let value = Int(arguments[index]) else { fail("missing argument \(index)", status: 2) }
    return value
}

do {
    switch mode {
    case "counter":
        let process = argument(3), txns = argument(4), counterCount = argument(5)
        var rng = SplitMix64(seed: UInt64(argument(6)))
        let box = openBox(path)
        var lastVersion: UInt64 = 0
        var out = ""
        for i in 0..<txns {
            try box.begin()
            if box.snapshotVersion < lastVersion { fail("snapshot version \(box.snapshotVersion) went back below \(lastVersion)") }
            let counter = ValueBoxKey(int64: Int64(rng.below(counterCount)))
            let value = int64(try box.get(counters, key: counter))
            try box.set(counters, key: counter, value: buffer(value + 1))
            let version = box.snapshotVersion + 1
            try box.set(lists, key: ValueBoxKey(int64: Int64(process) << 32 | Int64(i)), value: buffer(Int64(version)))
            try box.commit()
            if box.snapshotVersion != version { fail("committed version \(box.snapshotVersion), expected \(version)") }
            if version <= lastVersion { fail("versions not increasing: \(version) after \(lastVersion)") }
            lastVersion = version
            out += "V \(version)\n"
            if i % 97 == 0 {
                // Reads outside a transaction see this process's own list complete.
                let own = try box.count(lists, start: ValueBoxKey(int64: Int64(process) << 32 - 1), end: ValueBoxKey(int64: Int64(process + 1) << 32))
                if own != i + 1 { fail("own list has \(own) entries after \(i + 1) commits") }
            }
        }
        emit(1, out)
        try box.close()
        emit(1, "DONE \(txns)\n")

    case "transfer":
        let txns = argument(4), accountCount = argument(5)
        var rng = SplitMix64(seed: UInt64(argument(6)))
        guard arguments.count > 7 else { fail("missing stop file", status: 2) }
        let stopFile = arguments[7]
        // A checkpoint every ~80 transfers: a reader's long snapshot spans several of them.
        let box = openBox(path, checkpointBytes: 8 << 10)
        var done = 0
        while done < txns || access(stopFile, F_OK) != 0 {
            done += 1
            let from = ValueBoxKey(int64: Int64(rng.below(accountCount)))
            let to = ValueBoxKey(int64: Int64(rng.below(accountCount)))
            let amount = Int64(rng.below(100))
            try box.begin()
            let a = int64(try box.get(accounts, key: from))
            try box.set(accounts, key: from, value: buffer(a - amount))
            let b = int64(try box.get(accounts, key: to))
            try box.set(accounts, key: to, value: buffer(b + amount))
            try box.commit()
        }
        try box.close()
        emit(1, "DONE \(done)\n")

    case "reader":
        let accountCount = argument(3), sum = argument(4), wanted = argument(5)
        guard arguments.count > 6 else { fail("missing stop file", status: 2) }
        let stopFile = arguments[6]
        let box = openBox(path)
        var snapshots = 0
        var versions = Set<UInt64>()
        func balances() throws -> [Int64] {
            var values: [Int64] = []
            try box.scanInt64(accounts) { _, value in
                values.append(int64(value))
                return true
            }
            return values
        }
        while snapshots < wanted {
            try box.beginRead()
            let first = try balances()
            let version = box.snapshotVersion
            if first.count != accountCount { fail("snapshot at version \(version) holds \(first.count) accounts, expected \(accountCount)", status: 1) }
            let total = first.reduce(0, +)
            if total != Int64(sum) { fail("snapshot at version \(version): balances sum to \(total), expected \(sum)", status: 1) }
            if snapshots % 16 == 0 {
                for scan in 0..<40 {
                    usleep(250)
                    let again = try balances()
                    if again != first { fail("snapshot at version \(version) changed at re-scan \(scan) (now version \(box.transactionStateVersion))", status: 1) }
                }
            }
            box.endRead()
            snapshots += 1
            versions.insert(version)
        }
        try box.close()
        let created = open(stopFile, O_CREAT | O_WRONLY, 0o644)
        if created < 0 { fail("cannot create \(stopFile)") }
        close(created)
        emit(1, "DONE \(snapshots) \(versions.count)\n")

    case "compactor":
        // Compacts the database again and again (a few milliseconds apart) until the stop file appears.
        guard arguments.count > 3 else { fail("missing stop file", status: 2) }
        let stopFile = arguments[3]
        let box = openBox(path)
        var compactions = 0
        while access(stopFile, F_OK) != 0 {
            let result = try box.compact()
            if result.bytesAfter > result.bytesBefore { fail("compaction grew the file: \(result)") }
            compactions += 1
            usleep(5_000)
        }
        if try !box.check().isOK { fail("check failed after \(compactions) compactions") }
        try box.close()
        emit(1, "DONE \(compactions)\n")

    case "master":
        let box = openBox(path)
        try box.becomeMasterClient()
        if !box.isMasterClient { fail("not master after becomeMasterClient") }
        try box.close()
        emit(1, "MASTER \(box.sessionClientId)\n")

    case "hold-writer":
        let box = openBox(path)
        try box.begin()
        try box.set(counters, key: ValueBoxKey(int64: -1), value: buffer(-1))
        emit(1, "LOCKED\n")
        while true { sleep(60) }

    case "hold-reader":
        let box = openBox(path)
        try box.beginRead()
        _ = try box.count(lists)
        emit(1, "PINNED \(try box.statistics().checkpointGeneration)\n")
        while true { sleep(60) }

    default:
        fail("unknown mode \(mode)", status: 2)
    }
} catch {
    fail("\(error)")
}
exit(0)
