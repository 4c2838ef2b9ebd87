import BoxwoodStore

/// The table id of the key set the main workloads use.
let mainTableID: Int32 = 1

/// What one engine's main database should hold: the current version of each key's value (0: removed).
final class MainTable {
    let directory: String
    var versions: [UInt32]

    init(directory: String, keys: Int) {
        self.directory = directory
        versions = [UInt32](repeating: 1, count: keys)
    }
}

/// Runs workloads on engines. It owns what every engine shares (the keys, the value pools, the seed) and each
/// engine's main database, which `load-random` builds (or the first workload needing it builds, untimed).
///
/// Every workload plans its operations before the clock starts (random choices, expected versions), times the whole
/// loop, and then checks what the engine returned or stored. Write workloads are timed from the first operation to
/// the end of `close`, so deferred work (checkpoints, syncs, sorting) counts; read workloads run after an untimed
/// warm-up scan and are timed without open and close.
final class Bench {
    let sizes: BenchSizes
    let root: String
    let seed: UInt64
    let keys: KeySet
    /// Values of the main key set and of small Postbox records.
    let randomValues: ValuePool
    /// Values of the value-size workloads and of Postbox messages.
    let textValues: ValuePool
    private var mainTables: [EngineKind: MainTable] = [:]
    /// Boxwood's `txn-1000-set` rate in this run, once measured (`sync-catchup` sets its rate beside it).
    private var boxwoodTxnSetRate: Double?

    init(sizes: BenchSizes, root: String, seed: UInt64) {
        self.sizes = sizes
        self.root = root
        self.seed = seed
        keys = KeySet(count: sizes.keys, seed: seed)
        randomValues = ValuePool(.random, seed: SplitMix64.mix(seed ^ 0x5641_4C55_4553))
        textValues = ValuePool(.text, seed: SplitMix64.mix(seed ^ 0x5445_5854))
    }

    /// Runs one workload on one engine; empty when the workload does not apply to the engine.
    func run(_ workload: WorkloadID, on engine: EngineKind) throws(BenchError) -> [Measurement] {
        if workload == .fullText { return try fullText(on: engine) }
        if workload == .externalCommit { return engine == .boxwood ? [try externalCommitLatency()] : [] }
        if workload == .idleViews { return engine == .boxwood ? [try idleViewWakeups()] : [] }
        if workload == .extensionMemory { return engine == .boxwood ? [try extensionMemory()] : [] }
        if workload == .syncCatchUp { return engine == .boxwood ? [try syncCatchUp(txnSetRate: boxwoodTxnSetRate)] : [] }
        if workload == .randomSets, engine == .boxwood {
            let measurement = try runOnDatabase(workload, BoxwoodEngine.self)
            boxwoodTxnSetRate = measurement.first?.opsPerSecond
            return measurement
        }
        switch engine {
        case .boxwood: return try runOnDatabase(workload, BoxwoodEngine.self)
        case .boxwoodEncrypted: return try runOnDatabase(workload, EncryptedBoxwoodEngine.self)
        case .sqlite: return try runOnDatabase(workload, SQLiteEngine.self)
        case .lmdb: return try runOnDatabase(workload, LMDBEngine.self)
        case .mmap: return try runOnAny(workload, MmapEngine.self)
        }
    }

    private func runOnDatabase<E: DatabaseEngine>(_ workload: WorkloadID, _ engine: E.Type) throws(BenchError) -> [Measurement] {
        switch workload {
        case .randomSets: return [try randomSets(engine)]
        case .randomRemoves: return [try randomRemoves(engine)]
        case .compact: return [try compaction(engine)]
        case .postbox: return [try postboxTransactions(engine)]
        case .reopen, .reopen1M, .reopen8M, .reopen64M: return [try uncleanReopen(engine, workload)]
        case .latencySingleNormal, .latencySingleFull, .latencyTransactions: return [try commitLatency(engine, workload)]
        default: return try runOnAny(workload, engine)
        }
    }

    private func runOnAny<E: BenchEngine>(_ workload: WorkloadID, _ engine: E.Type) throws(BenchError) -> [Measurement] {
        switch workload {
        case .loadSorted: return [try load(engine, sorted: true)]
        case .loadRandom: return [try load(engine, sorted: false)]
        case .getRandom: return [try randomGets(engine)]
        case .scan: return [try scans(engine)]
        case .singleNormal, .singleFull: return [try singleOperations(engine, workload)]
        case .value100, .value4K, .value64K: return try valueSizes(engine, workload)
        case .randomSets, .randomRemoves, .compact, .postbox, .reopen, .reopen1M, .reopen8M, .reopen64M, .fullText, .externalCommit, .idleViews,
             .extensionMemory, .syncCatchUp, .latencySingleNormal, .latencySingleFull, .latencyTransactions: return []
        }
    }

    /// The generator of a workload's choices: the same for every engine.
    func generator(for workload: WorkloadID) -> SplitMix64 {
        SplitMix64(seed: SplitMix64.mix(seed ^ UInt64(WorkloadID.allCases.firstIndex(of: workload)! + 1) << 48))
    }

    // MARK: Loading

    private func load<E: BenchEngine>(_: E.Type, sorted: Bool) throws(BenchError) -> Measurement {
        let workload = sorted ? WorkloadID.loadSorted : .loadRandom
        let table = MainTable(directory: root + "/" + E.kind.rawValue + (sorted ? "-sorted" : "-main"), keys: keys.count)
        removeTree(table.directory)
        let seconds = try fill(E.self, table, sorted: sorted)
        let bytes = diskUsage(table.directory)
        try verify(E.self, table, after: workload, checkScans: true)
        if sorted {
            removeTree(table.directory)
        } else {
            mainTables[E.kind] = table
        }
        return Measurement(row: workload.rawValue, engine: E.kind, ops: keys.count, seconds: seconds,
                           bytesOnDisk: bytes, rawBytes: rawBytes(table), note: E.spaceNote(directory: table.directory))
    }

    /// Puts every key (version 1) into a fresh database, in key order or in random order; returns the seconds from
    /// the first put to the end of close.
    private func fill<E: BenchEngine>(_: E.Type, _ table: MainTable, sorted: Bool) throws(BenchError) -> Double {
        let keys = self.keys
        let values = randomValues
        let length = sizes.valueLength
        let order = keys.sortedOrder
        let engine = try E(directory: table.directory, durability: .normal)
        let watch = Stopwatch()
        try inBatches(engine, count: keys.count, batch: sizes.loadBatch) { (n) throws(BenchError) in
            let index = sorted ? Int(order[n]) : n
            try engine.put(mainTableID, key: keys.key(index), value: values.value(index, version: 1, length: length))
        }
        try engine.close()
        return watch.seconds
    }

    /// The engine's main database, loaded (untimed) when `load-random` did not run.
    func mainTable<E: BenchEngine>(_: E.Type) throws(BenchError) -> MainTable {
        if let table = mainTables[E.kind] { return table }
        let table = MainTable(directory: root + "/" + E.kind.rawValue + "-main", keys: keys.count)
        _ = try fill(E.self, table, sorted: false)
        try verify(E.self, table, after: .loadRandom, checkScans: true)
        mainTables[E.kind] = table
        return table
    }

    // MARK: Reads

    private func randomGets<E: BenchEngine>(_: E.Type) throws(BenchError) -> Measurement {
        let keys = self.keys
        let table = try mainTable(E.self)
        var rng = generator(for: .getRandom)
        let picks = (0..<sizes.gets).map { _ in Int32(rng.below(keys.count)) }
        let expectedHits = picks.reduce(0) { $0 + (table.versions[Int($1)] != 0 ? 1 : 0) }
        let engine = try E(directory: table.directory, durability: .normal)
        try warmUp(engine, count: keys.count)
        let sink = ReadSink()
        var hits = 0
        let watch = Stopwatch()
        try inBatches(engine, count: picks.count, batch: sizes.readBatch) { (n) throws(BenchError) in
            if try engine.get(mainTableID, key: keys.key(Int(picks[n])), { sink.consume($0) }) != nil { hits += 1 }
        }
        let seconds = watch.seconds
        try engine.close()
        guard hits == expectedHits else {
            throw .verification(engine: E.kind, workload: WorkloadID.getRandom.rawValue, detail: "\(hits) of \(picks.count) gets found a value, expected \(expectedHits)")
        }
        return Measurement(row: WorkloadID.getRandom.rawValue, engine: E.kind, ops: picks.count, seconds: seconds, checksum: sink.checksum)
    }

    private func scans<E: BenchEngine>(_: E.Type) throws(BenchError) -> Measurement {
        let keys = self.keys
        let table = try mainTable(E.self)
        var rng = generator(for: .scan)
        let length = sizes.scanLength
        let starts = (0..<sizes.scans).map { _ in Int32(rng.below(keys.count)) }
        let expectedEntries = starts.reduce(0) { $0 + expectedScan(table, after: Int($1), count: length).count }
        let engine = try E(directory: table.directory, durability: .normal)
        try warmUp(engine, count: keys.count)
        let sink = ReadSink()
        var entries = 0
        let watch = Stopwatch()
        try inBatches(engine, count: starts.count, batch: sizes.readBatch / length) { (n) throws(BenchError) in
            entries += try engine.scan(mainTableID, after: keys.key(Int(starts[n])), count: length) { key, value in
                sink.consume(key)
                sink.consume(value)
            }
        }
        let seconds = watch.seconds
        try engine.close()
        guard entries == expectedEntries else {
            throw .verification(engine: E.kind, workload: WorkloadID.scan.rawValue, detail: "scans returned \(entries) entries, expected \(expectedEntries)")
        }
        return Measurement(row: WorkloadID.scan.rawValue, engine: E.kind, ops: starts.count, seconds: seconds, checksum: sink.checksum)
    }

    /// Reads every entry of a table once, untimed, so that the timed reads find the data in memory as in a warm app.
    private func warmUp<E: BenchEngine>(_ engine: E, count: Int) throws(BenchError) {
        let sink = ReadSink()
        try engine.beginBatch()
        _ = try engine.scan(mainTableID, after: UnsafeRawBufferPointer(start: nil, count: 0), count: count) { _, value in
            sink.consume(value)
        }
        try engine.commitBatch()
    }

    // MARK: Writes

    private func randomSets<E: DatabaseEngine>(_: E.Type) throws(BenchError) -> Measurement {
        let table = try mainTable(E.self)
        var rng = generator(for: .randomSets)
        let writes = plannedOverwrites(table, count: sizes.sets, &rng)
        let seconds = try timedWrites(E.self, table, writes, batch: sizes.transactionBatch, durability: .normal)
        let bytes = diskUsage(table.directory)
        try verify(E.self, table, after: .randomSets, checkScans: true)
        return Measurement(row: WorkloadID.randomSets.rawValue, engine: E.kind, ops: writes.count, seconds: seconds,
                           bytesOnDisk: bytes, rawBytes: rawBytes(table))
    }

    private func randomRemoves<E: DatabaseEngine>(_: E.Type) throws(BenchError) -> Measurement {
        let keys = self.keys
        let table = try mainTable(E.self)
        var rng = generator(for: .randomRemoves)
        // Distinct live keys: a partial Fisher-Yates shuffle of the live indices.
        var live = (0..<keys.count).filter { table.versions[$0] != 0 }
        let count = min(sizes.removes, live.count)
        for n in 0..<count { live.swapAt(n, n + rng.below(live.count - n)) }
        let victims = live[0..<count].map { Int32($0) }
        for index in victims { table.versions[Int(index)] = 0 }
        let engine = try E(directory: table.directory, durability: .normal)
        let watch = Stopwatch()
        try inBatches(engine, count: victims.count, batch: sizes.transactionBatch) { (n) throws(BenchError) in
            try engine.remove(mainTableID, key: keys.key(Int(victims[n])))
        }
        try engine.close()
        let seconds = watch.seconds
        let bytes = diskUsage(table.directory)
        try verify(E.self, table, after: .randomRemoves, checkScans: true)
        return Measurement(row: WorkloadID.randomRemoves.rawValue, engine: E.kind, ops: victims.count, seconds: seconds,
                           bytesOnDisk: bytes, rawBytes: rawBytes(table))
    }

    /// Compacts the database the set and remove workloads churned; the size after it is the row's size.
    private func compaction<E: DatabaseEngine>(_: E.Type) throws(BenchError) -> Measurement {
        let table = try mainTable(E.self)
        let live = table.versions.reduce(0) { $0 + ($1 != 0 ? 1 : 0) }
        let engine = try E(directory: table.directory, durability: .normal)
        let watch = Stopwatch()
        try engine.compactAndClose()
        let seconds = watch.seconds
        let bytes = diskUsage(table.directory)
        try verify(E.self, table, after: .compact, checkScans: true)
        return Measurement(row: WorkloadID.compact.rawValue, engine: E.kind, ops: live, seconds: seconds,
                           bytesOnDisk: bytes, rawBytes: rawBytes(table))
    }

    private func singleOperations<E: BenchEngine>(_: E.Type, _ workload: WorkloadID) throws(BenchError) -> Measurement {
        let table = try mainTable(E.self)
        let full = workload == .singleFull
        var rng = generator(for: workload)
        let writes = plannedOverwrites(table, count: full ? sizes.singleFull : sizes.singleNormal, &rng)
        let seconds = try timedWrites(E.self, table, writes, batch: 1, durability: full ? .full : .normal)
        let bytes = diskUsage(table.directory)
        try verify(E.self, table, after: workload, checkScans: false)
        return Measurement(row: workload.rawValue, engine: E.kind, ops: writes.count, seconds: seconds,
                           bytesOnDisk: bytes, rawBytes: rawBytes(table))
    }

    /// Random keys to overwrite with their next version; the model is updated.
    func plannedOverwrites(_ table: MainTable, count: Int, _ rng: inout SplitMix64) -> [(index: Int32, version: UInt32)] {
        (0..<count).map { _ in
            let index = rng.below(keys.count)
            table.versions[index] += 1
            return (Int32(index), table.versions[index])
        }
    }

    /// Puts the planned writes in batches; returns the seconds from the first put to the end of close.
    private func timedWrites<E: BenchEngine>(_: E.Type, _ table: MainTable, _ writes: [(index: Int32, version: UInt32)],
                                             batch: Int, durability: Durability) throws(BenchError) -> Double {
        let keys = self.keys
        let values = randomValues
        let length = sizes.valueLength
        let engine = try E(directory: table.directory, durability: durability)
        let watch = Stopwatch()
        try inBatches(engine, count: writes.count, batch: batch) { (n) throws(BenchError) in
            let index = Int(writes[n].index)
            try engine.put(mainTableID, key: keys.key(index), value: values.value(index, version: writes[n].version, length: length))
        }
        try engine.close()
        return watch.seconds
    }

    // MARK: Value sizes

    /// Puts `valueCount` text values of the workload's length into a fresh database, then reads them back at random.
    private func valueSizes<E: BenchEngine>(_: E.Type, _ workload: WorkloadID) throws(BenchError) -> [Measurement] {
        let directory = root + "/" + E.kind.rawValue + "-" + workload.rawValue
        let count = sizes.valueCount(workload)
        let length = workload.valueLength
        let keys = self.keys
        let values = textValues
        let writer = try E(directory: directory, durability: .normal)
        let putWatch = Stopwatch()
        try inBatches(writer, count: count, batch: sizes.valueBatch(workload)) { (n) throws(BenchError) in
            try writer.put(mainTableID, key: keys.key(n), value: values.value(n, version: 1, length: length))
        }
        try writer.close()
        let putSeconds = putWatch.seconds
        let bytes = diskUsage(directory)

        var rng = generator(for: workload)
        let picks = (0..<count).map { _ in Int32(rng.below(count)) }
        let reader = try E(directory: directory, durability: .normal)
        try reader.beginBatch()
        for _ in 0..<min(count, 100) {
            let n = rng.below(count)
            let expected = values.value(n, version: 1, length: length)
            guard try reader.get(mainTableID, key: keys.key(n), { bytesEqual($0, expected) }) == true else {
                throw .verification(engine: E.kind, workload: workload.rawValue, detail: "value \(n) is missing or wrong")
            }
        }
        try reader.commitBatch()
        try warmUp(reader, count: count)
        let sink = ReadSink()
        var hits = 0
        let getWatch = Stopwatch()
        try inBatches(reader, count: picks.count, batch: sizes.readBatch) { (n) throws(BenchError) in
            if try reader.get(mainTableID, key: keys.key(Int(picks[n])), { sink.consume($0) }) != nil { hits += 1 }
        }
        let getSeconds = getWatch.seconds
        try reader.close()
        removeTree(directory)
        guard hits == picks.count else {
            throw .verification(engine: E.kind, workload: workload.rawValue, detail: "\(picks.count - hits) of \(picks.count) gets found nothing")
        }
        return [
            Measurement(row: workload.rawValue + "-put", engine: E.kind, ops: count, seconds: putSeconds,
                        bytesOnDisk: bytes, rawBytes: count * (8 + length)),
            Measurement(row: workload.rawValue + "-get", engine: E.kind, ops: picks.count, seconds: getSeconds, checksum: sink.checksum),
        ]
    }

    // MARK: Verification

    /// Reopens the main database and checks a sample against the model: gets of random keys (present with their
    /// current value, or absent when removed) and, when `checkScans`, short scans (every live key in order, none
    /// extra, current values).
    func verify<E: BenchEngine>(_: E.Type, _ table: MainTable, after workload: WorkloadID, checkScans: Bool) throws(BenchError) {
        func failure(_ detail: String) -> BenchError { .verification(engine: E.kind, workload: workload.rawValue, detail: detail) }
        let length = sizes.valueLength
        let engine = try E(directory: table.directory, durability: .normal)
        var rng = SplitMix64(seed: SplitMix64.mix(seed ^ 0x5645_5249_4659))
        try engine.beginBatch()
        for _ in 0..<200 {
            let index = rng.below(keys.count)
            let version = table.versions[index]
            let expected = randomValues.value(index, version: version, length: length)
            let matches = try engine.get(mainTableID, key: keys.key(index)) { bytesEqual($0, expected) }
            if version == 0 && matches != nil { throw failure("removed key #\(index) is present") }
            if version != 0 && matches == nil { throw failure("key #\(index) is missing") }
            if version != 0 && matches == false { throw failure("key #\(index) has a wrong value") }
        }
        if checkScans {
            for _ in 0..<5 {
                let start = rng.below(keys.count)
                let expected = expectedScan(table, after: start, count: 50)
                var position = 0
                var matches = true
                let visited = try engine.scan(mainTableID, after: keys.key(start), count: 50) { key, value in
                    if position < expected.count {
                        let index = expected[position]
                        matches = matches && bytesEqual(key, keys.key(index))
                            && bytesEqual(value, randomValues.value(index, version: table.versions[index], length: length))
                    }
                    position += 1
                }
                guard matches && visited == expected.count else {
                    throw failure("a scan after key #\(start) returned \(visited) entries (\(matches ? "" : "some wrong, ")expected \(expected.count))")
                }
            }
        }
        try engine.commitBatch()
        try engine.close()
    }

    /// The indices of the first `count` live keys after key `index`, in key order.
    private func expectedScan(_ table: MainTable, after index: Int, count: Int) -> [Int] {
        var result: [Int] = []
        var position = Int(keys.rank[index]) + 1
        while result.count < count && position < keys.count {
            let candidate = Int(keys.sortedOrder[position])
            if table.versions[candidate] != 0 { result.append(candidate) }
            position += 1
        }
        return result
    }

    /// The key and value bytes the main table holds.
    private func rawBytes(_ table: MainTable) -> Int {
        table.versions.reduce(0) { $0 + ($1 != 0 ? 1 : 0) } * (8 + sizes.valueLength)
    }
}

/// Runs `body(0..<count)` in batches of `batch` operations, each a transaction of `engine`.
@inline(__always)
func inBatches<E: BenchEngine>(_ engine: E, count: Int, batch: Int, _ body: (Int) throws(BenchError) -> Void) throws(BenchError) {
    var n = 0
    while n < count {
        try engine.beginBatch()
        let end = min(n + batch, count)
        while n < end {
            try body(n)
            n += 1
        }
        try engine.commitBatch()
    }
}
