import Foundation
import Testing
@_spi(EngineTables) @testable import BoxwoodStore

// Salvage (`ValueBox.salvage`, `boxwood recover`): a populated database — binary, int64 and engine tables, inline,
// LZ4 and overflow values, trees of three levels, two checkpoints and commits only in the WAL — is damaged with a
// seeded generator, salvaged, and the destination compared with a model of what was written: every entry whose
// leaf page is intact comes back with its latest value, nothing comes back that the model does not hold at its
// latest value, and the lost pages are reported exactly.
//
//     BOXWOOD_SEED=<seed> .build/debug/BoxwoodPackageTests.xctest --testing-library swift-testing --filter salvage

/// A table of the model: key type and entries (keys in their public form).
private struct ModelTable {
    var keyType: ValueBoxKeyType
    var entries: [[UInt8]: [UInt8]] = [:]
}

private typealias Model = [Int32: ModelTable]

/// One logged change, to replay the WAL-only commits on the model.
private struct Change {
    let table: Int32
    let keyType: ValueBoxKeyType
    let key: [UInt8]
    let value: [UInt8]?
}

/// Where things are in the source's pages (read from the checkpointed state).
private struct Layout {
    /// Leaf page → (table, public keys).
    var leaves: [UInt64: (Int32, [[UInt8]])] = [:]
    /// Branch pages per table, with their depth (0: the root).
    var branches: [Int32: [(UInt64, Int)]] = [:]
    /// Overflow chains: (table, key, pages).
    var chains: [(Int32, [UInt8], [UInt64])] = []
    var catalogRoot: UInt64 = 0
    var metaSlotOfNewest: UInt64 = 0
    /// Children of each branch page.
    var children: [UInt64: [UInt64]] = [:]
}

/// A source database and everything the tests know about it.
private struct Fixture {
    let directory: String
    let source: String
    /// The state at the first checkpoint, at the second, and after the WAL-only commits.
    let modelA: Model
    let modelB: Model
    let modelC: Model
    let walChanges: [[Change]]
    let layout: Layout
    let masterClientId: Int64

    static let binary: Int32 = 1
    static let int64: Int32 = 2
    static let engine: Int32 = -7
    static let empty: Int32 = 4
    static let late: Int32 = 9  // created after the first checkpoint

    func remove() { removeItem(directory) }
}

private func randomBytes(_ rng: inout SplitMix64, _ count: Int) -> [UInt8] {
    (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
}

/// Builds the fixture: phase A (populate, checkpoint), phase B (changes and a new table, checkpoint), phase C (commits
/// left in the WAL: the source is a copy of the files taken before the box closes, as a killed process leaves them).
private func makeFixture(_ rng: inout SplitMix64) throws -> Fixture {
    let directory = temporaryDatabasePath("salvage")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let live = directory + "/live"
    var options = ValueBoxOptions()
    options.checkpointWALBytes = 1 << 40
    options.checkpointMemoryBytes = 1 << 40
    let box = try ValueBox(path: live, options: options)
    var model: Model = [:]
    func descriptor(_ id: Int32, _ keyType: ValueBoxKeyType) -> ValueBoxTable {
        id < 0 ? ValueBoxTable(engineTableId: id, keyType: keyType) : ValueBoxTable(id: id, keyType: keyType)
    }
    func set(_ id: Int32, _ keyType: ValueBoxKeyType, _ k: [UInt8], _ v: [UInt8]) throws {
        try v.withUnsafeBytes { try box.set(descriptor(id, keyType), key: ValueBoxKey(k), bytes: $0) }
        model[id, default: ModelTable(keyType: keyType)].entries[k] = v
    }
    func remove(_ id: Int32, _ keyType: ValueBoxKeyType, _ k: [UInt8]) throws {
        try box.remove(descriptor(id, keyType), key: ValueBoxKey(k))
        model[id]?.entries[k] = nil
    }
    let prefix = [UInt8](repeating: 0x42, count: 120)
    func binaryKey(_ i: Int) -> [UInt8] { prefix + withUnsafeBytes(of: UInt32(i * 7).bigEndian) { Array($0) } }
    func intKey(_ i: Int) -> [UInt8] { ValueBoxKey(int64: Int64(i) * 1000 - 2_000_000).byteArray }
    func value(_ i: Int) -> [UInt8] {
        if i % 60 == 0 { return randomBytes(&rng, 2000 + rng.below(7000)) }  // overflow, incompressible
        if i % 45 == 0 { return [UInt8](repeating: UInt8(i & 0xFF), count: 700) }  // LZ4, inline
        return randomBytes(&rng, 10 + rng.below(110))
    }

    // Phase A.
    try box.begin()
    for i in 0..<3000 { try set(Fixture.binary, .binary, binaryKey(i), value(i)) }
    for i in 0..<4000 { try set(Fixture.int64, .int64, intKey(i), value(i + 1)) }
    for i in 0..<500 { try set(Fixture.engine, .binary, [UInt8(i >> 8), UInt8(i & 0xFF), 1], value(i + 2)) }
    try box.set(descriptor(Fixture.empty, .binary), key: ValueBoxKey([0]), bytes: UnsafeRawBufferPointer(start: nil, count: 0))
    try box.remove(descriptor(Fixture.empty, .binary), key: ValueBoxKey([0]))
    model[Fixture.empty] = ModelTable(keyType: .binary)
    try box.becomeMasterClient()
    try box.commit()
    try box.checkpoint()
    let modelA = model

    // Phase B.
    try box.begin()
    for _ in 0..<30 { let i = rng.below(3000); try set(Fixture.binary, .binary, binaryKey(i), value(i + 3)) }
    for _ in 0..<20 { try remove(Fixture.binary, .binary, binaryKey(rng.below(3000))) }
    for _ in 0..<40 { let i = rng.below(4000); try set(Fixture.int64, .int64, intKey(i), value(i + 5)) }
    for _ in 0..<20 { try remove(Fixture.int64, .int64, intKey(rng.below(4000))) }
    for i in 4000..<4050 { try set(Fixture.int64, .int64, intKey(i), value(i)) }
    for i in 0..<300 { try set(Fixture.late, .int64, ValueBoxKey(int64: Int64(i)).byteArray, value(i + 7)) }
    try box.commit()
    try box.checkpoint()
    let modelB = model

    // The layout of the checkpointed pages, read from a copy (opening the copy must not touch the source).
    let inspect = directory + "/inspect"
    try copyDatabaseFiles(from: live, to: inspect)
    let layout = try readLayout(inspect)
    removeItem(inspect)

    // Phase C: commits only in the WAL.
    var walChanges: [[Change]] = []
    for _ in 0..<6 {
        try box.begin()
        var changes: [Change] = []
        for j in 0..<7 {
            let (id, keyType): (Int32, ValueBoxKeyType) = [(Fixture.binary, .binary), (Fixture.int64, .int64), (Fixture.late, .int64)][rng.below(3)]
            let k = id == Fixture.binary ? binaryKey(rng.below(3000)) : id == Fixture.int64 ? intKey(rng.below(4050)) : ValueBoxKey(int64: Int64(rng.below(300))).byteArray
            if j < 5 {
                let v = randomBytes(&rng, 1 + rng.below(60))
                try set(id, keyType, k, v)
                changes.append(Change(table: id, keyType: keyType, key: k, value: v))
            } else {
                try remove(id, keyType, k)
                changes.append(Change(table: id, keyType: keyType, key: k, value: nil))
            }
        }
        try box.commit()
        walChanges.append(changes)
    }
    let source = directory + "/source"
    try copyDatabaseFiles(from: live, to: source)
    let masterClientId = box.masterClientId
    try box.close()
    removeItem(live)
    return Fixture(directory: directory, source: source, modelA: modelA, modelB: modelB, modelC: model,
                   walChanges: walChanges, layout: layout, masterClientId: masterClientId)
}

/// Reads where every table's pages are in the checkpointed database at `path` (whose WAL is empty).
private func readLayout(_ path: String) throws -> Layout {
    let box = try ValueBox(path: path, options: ValueBoxOptions(readOnly: true))
    defer { try? box.close() }
    var layout = Layout()
    layout.catalogRoot = box.meta.catalogRoot
    layout.metaSlotOfNewest = box.meta.slot
    let pager: Pager = box.pager
    for (id, state) in box.state.tables where state.root != 0 {
        var stack: [(UInt64, Int)] = [(state.root, 0)]
        while let (page, depth) = stack.popLast() {
            let p = try pager.diskPage(page)
            if PageType.raw(of: p) == PageType.branch.rawValue {
                layout.branches[id, default: []].append((page, depth))
                let branch = BranchPage(p)
                let children = (0...branch.count).map { branch.child($0) }
                layout.children[page] = children
                for c in children { stack.append((c, depth + 1)) }
                continue
            }
            let leaf = LeafPage(p)
            var keys: [[UInt8]] = []
            for i in 0..<leaf.count {
                let (k, n) = leaf.key(i)
                var bytes = Array(UnsafeRawBufferPointer(start: k, count: n))
                if state.keyType == .int64 { bytes[0] ^= 0x80 }
                keys.append(bytes)
                let off = leaf.slot(i)
                if var next = LeafValue.overflowReference(p, off) {
                    var chain: [UInt64] = []
                    let head = try pager.diskPage(next)
                    if PageType.raw(of: head) == PageType.extent.rawValue {
                        // An extent: all its pages, the head (which carries the checksum of all) first.
                        chain = (0..<ExtentPage.pageCount(forStored: ExtentPage.storedLength(head))).map { next + UInt64($0) }
                        next = 0
                    }
                    while next != 0 {
                        chain.append(next)
                        next = OverflowPage(try pager.diskPage(next))!.next
                    }
                    layout.chains.append((id, bytes, chain))
                }
            }
            layout.leaves[page] = (id, keys)
        }
    }
    return layout
}

/// Every table of the database at `path` as a model.
private func readModel(_ path: String) throws -> Model {
    let box = try ValueBox(path: path, options: ValueBoxOptions(readOnly: true))
    defer { try? box.close() }
    var model: Model = [:]
    for table in try box.allTables() {
        let descriptor = table.id < 0 ? ValueBoxTable(engineTableId: table.id, keyType: table.keyType) : table
        var entries: [[UInt8]: [UInt8]] = [:]
        for (k, v) in try box.allEntries(descriptor) { entries[k] = v }
        model[table.id] = ModelTable(keyType: table.keyType, entries: entries)
    }
    return model
}

/// Applies the WAL-only commits to `model`.
private func applying(_ changes: [[Change]], to model: Model) -> Model {
    var model = model
    for commit in changes {
        for change in commit {
            if let value = change.value {
                model[change.table, default: ModelTable(keyType: change.keyType)].entries[change.key] = value
            } else {
                model[change.table]?.entries[change.key] = nil
            }
        }
    }
    return model
}

/// Compares two models; records one issue per table that differs.
private func expectSame(_ actual: Model, _ expected: Model, ignoringEmptyTables: Bool = false, _ context: String,
                        sourceLocation: SourceLocation = #_sourceLocation) {
    let ids = Set(actual.keys).union(expected.keys)
    for id in ids.sorted() {
        let a = actual[id], e = expected[id]
        if ignoringEmptyTables && (a?.entries.isEmpty ?? true) && (e?.entries.isEmpty ?? true) { continue }
        guard let a, let e else {
            Issue.record("\(context): table \(id) is \(a == nil ? "missing" : "unexpected")", sourceLocation: sourceLocation)
            continue
        }
        #expect(a.keyType == e.keyType, "\(context): table \(id) key type", sourceLocation: sourceLocation)
        if a.entries != e.entries {
            let missing = e.entries.keys.filter { a.entries[$0] == nil }.count
            let extra = a.entries.keys.filter { e.entries[$0] == nil }.count
            let different = a.entries.keys.filter { e.entries[$0] != nil && e.entries[$0] != a.entries[$0] }.count
            Issue.record("\(context): table \(id): \(missing) missing, \(extra) extra, \(different) with another value",
                         sourceLocation: sourceLocation)
        }
    }
}

/// Overwrites `bytes` at `offset` of a file.
private func patch(_ path: String, offset: Int, _ bytes: [UInt8]) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seek(toOffset: UInt64(offset))
    handle.write(Data(bytes))
}

private func flipByte(_ path: String, page: UInt64, _ rng: inout SplitMix64) throws {
    let offset = Int(page) * PageLayout.pageSize + rng.below(PageLayout.pageSize)
    let original = try readFile(path)[offset]
    try patch(path, offset: offset, [original ^ UInt8(1 + rng.below(255))])
}

private func zeroPage(_ path: String, page: UInt64) throws {
    try patch(path, offset: Int(page) * PageLayout.pageSize, [UInt8](repeating: 0, count: PageLayout.pageSize))
}

private func seed(_ name: String) -> UInt64 {
    let seed = crashTestSeed()
    print("salvage \(name) seed: \(seed) (replay with BOXWOOD_SEED=\(seed))")
    return seed
}

private func salvaged(_ fixture: Fixture, _ name: String) throws -> (SalvageReport, String) {
    let destination = fixture.directory + "/" + name
    let report = try ValueBox.salvage(from: fixture.source, to: destination)
    let check = try ValueBox(path: destination, options: ValueBoxOptions(readOnly: true))
    let problems = try check.check().problems
    #expect(problems.isEmpty, "\(name): the salvaged database does not check: \(problems.prefix(5))")
    try check.close()
    return (report, destination)
}

@Suite("salvage", .serialized) struct SalvageTests {
    @Test func undamagedDatabaseSalvagesToAnIdenticalDump() throws {
        var rng = SplitMix64(seed: seed("undamaged"))
        let fixture = try makeFixture(&rng)
        defer { fixture.remove() }
        let before = try FileManager.default.contentsOfDirectory(atPath: fixture.source).sorted()
        let data = try readFile(fixture.source + "/data"), wal = try readFile(fixture.source + "/wal")
        let (report, destination) = try salvaged(fixture, "out")
        // The source is only read: no file added (no header, no lock), none changed.
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.source).sorted() == before)
        #expect(try readFile(fixture.source + "/data") == data)
        #expect(try readFile(fixture.source + "/wal") == wal)

        expectSame(try readModel(destination), fixture.modelC, "undamaged")
        #expect(report.isComplete, "\(report)")
        #expect(report.catalogComplete && report.freelistUsable && !report.usedOlderCheckpoint)
        #expect(report.wal.commitsReplayed == fixture.walChanges.count)
        #expect(report.wal.bytesNotReplayed == 0 && !report.wal.commitsLost)
        #expect(report.tables.map(\.id) == fixture.modelC.keys.sorted())
        for table in report.tables {
            #expect(table.entries == fixture.modelC[table.id]?.entries.count, "table \(table.id)")
            #expect(table.entriesExpected == fixture.modelB[table.id]?.entries.count, "table \(table.id)")
            #expect(table.entriesFromPages == fixture.modelB[table.id]?.entries.count, "table \(table.id)")
            #expect(table.pagesLost.isEmpty && table.entriesLost == 0 && table.entriesFromOrphanPages == 0)
        }
        #expect(report.unattributedLeafPages.isEmpty && report.unattributedDamagedPages.isEmpty)
        let box = try ValueBox(path: destination, options: ValueBoxOptions(readOnly: true))
        #expect(box.masterClientId == fixture.masterClientId)
        try box.close()
        // Nothing left beside the destination (the temporary directory was renamed).
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.directory).sorted() == ["out", "source"])
    }

    @Test func damagedLeafPagesCostOnlyTheirEntries() throws {
        var rng = SplitMix64(seed: seed("leaves"))
        let fixture = try makeFixture(&rng)
        defer { fixture.remove() }
        let leaves = fixture.layout.leaves.keys.sorted()
        var damaged = Set<UInt64>()
        while damaged.count < 6 { damaged.insert(leaves[rng.below(leaves.count)]) }
        for page in damaged { try flipByte(fixture.source + "/data", page: page, &rng) }

        let (report, destination) = try salvaged(fixture, "out")
        var expected = fixture.modelB
        var lostPages: [Int32: [UInt64]] = [:]
        for page in damaged {
            let (table, keys) = fixture.layout.leaves[page]!
            for k in keys { expected[table]?.entries[k] = nil }
            lostPages[table, default: []].append(page)
        }
        expected = applying(fixture.walChanges, to: expected)
        expectSame(try readModel(destination), expected, "leaves \(damaged.sorted())")
        #expect(!report.isComplete)
        #expect(report.wal.commitsReplayed == fixture.walChanges.count)
        for table in report.tables {
            #expect(table.pagesLost == (lostPages[table.id] ?? []).sorted(), "table \(table.id)")
            #expect(table.entriesLost == 0, "table \(table.id)")
            #expect(table.entriesFromOrphanPages == 0, "table \(table.id)")
        }
        #expect(report.unattributedLeafPages.isEmpty && report.unattributedDamagedPages.isEmpty)
    }

    /// A branch page of the binary table (three levels: the root or one below it) or of the int64 table (two: its
    /// root), and one leaf below it, lost with it.
    @Test(arguments: [Fixture.binary, Fixture.int64])
    func damagedBranchPageLosesNothingButItself(id: Int32) throws {
        var rng = SplitMix64(seed: seed("branch \(id)"))
        let fixture = try makeFixture(&rng)
        defer { fixture.remove() }
        let branches = fixture.layout.branches[id]!
        if id == Fixture.binary { #expect(branches.contains { $0.1 >= 1 }, "table \(id) has fewer than three levels") }
        let (branch, _) = branches[rng.below(branches.count)]
        var below = fixture.layout.children[branch]!
        while let child = below.first, fixture.layout.children[child] != nil { below = fixture.layout.children[child]! }
        let leaf = below[rng.below(below.count)]
        try zeroPage(fixture.source + "/data", page: branch)
        try flipByte(fixture.source + "/data", page: leaf, &rng)

        let (report, destination) = try salvaged(fixture, "out")
        var expected = fixture.modelB
        for k in fixture.layout.leaves[leaf]!.1 { expected[id]?.entries[k] = nil }
        expected = applying(fixture.walChanges, to: expected)
        expectSame(try readModel(destination), expected, "branch \(branch), leaf \(leaf)")
        let table = try #require(report.tables.first { $0.id == id })
        #expect(table.pagesLost == [branch, leaf].sorted())
        #expect(table.entriesFromOrphanPages > 0)
        #expect(!table.orphanLeafPages.isEmpty && !table.orphanLeafPages.contains(leaf))
        for other in report.tables where other.id != id { #expect(other.isComplete && other.entriesFromOrphanPages == 0) }
        #expect(report.unattributedLeafPages.isEmpty && report.unattributedDamagedPages.isEmpty, "\(report.unattributedLeafPages) \(report.notes.prefix(5))")
        #expect(report.catalogComplete && report.freelistUsable)
    }

    @Test func damagedOverflowChainLosesOnlyItsEntry() throws {
        var rng = SplitMix64(seed: seed("overflow"))
        let fixture = try makeFixture(&rng)
        defer { fixture.remove() }
        let (id, key, chain) = fixture.layout.chains[rng.below(fixture.layout.chains.count)]
        let page = chain[rng.below(chain.count)]
        // A damaged byte anywhere in an extent fails the checksum its head carries: the head is the page lost.
        let isExtent = try readFile(fixture.source + "/data")[Int(chain[0]) * PageLayout.pageSize + PageLayout.typeOffset] == PageType.extent.rawValue
        let lost = isExtent ? chain[0] : page
        try flipByte(fixture.source + "/data", page: page, &rng)

        let (report, destination) = try salvaged(fixture, "out")
        var expected = fixture.modelB
        expected[id]?.entries[key] = nil
        expected = applying(fixture.walChanges, to: expected)
        expectSame(try readModel(destination), expected, "overflow page \(page)")
        let table = try #require(report.tables.first { $0.id == id })
        #expect(table.entriesLost == 1)
        #expect(table.pagesLost == [lost], "extent: \(isExtent)")
        #expect(!report.isComplete)
    }

    @Test func zeroedOlderMetaPageLosesNothing() throws {
        var rng = SplitMix64(seed: seed("older meta"))
        let fixture = try makeFixture(&rng)
        defer { fixture.remove() }
        try zeroPage(fixture.source + "/data", page: 1 - fixture.layout.metaSlotOfNewest)
        let (report, destination) = try salvaged(fixture, "out")
        expectSame(try readModel(destination), fixture.modelC, "older meta zeroed")
        #expect(report.metaSlots[Int(1 - fixture.layout.metaSlotOfNewest)] == .missing)
        #expect(report.isComplete && !report.usedOlderCheckpoint)
        #expect(report.wal.commitsReplayed == fixture.walChanges.count)
    }

    @Test func zeroedNewestMetaPageFallsBackToThePreviousCheckpoint() throws {
        var rng = SplitMix64(seed: seed("newest meta"))
        let fixture = try makeFixture(&rng)
        defer { fixture.remove() }
        try zeroPage(fixture.source + "/data", page: fixture.layout.metaSlotOfNewest)
        let (report, destination) = try salvaged(fixture, "out")
        // The previous checkpoint, whole and consistent; nothing of the newer one mixed in.
        expectSame(try readModel(destination), fixture.modelA, "newest meta zeroed")
        #expect(report.usedOlderCheckpoint && !report.isComplete)
        #expect(report.wal.commitsReplayed == 0 && report.wal.commitsLost)
    }

    @Test func bothMetaPagesZeroedRecoverNothingAndSaySo() throws {
        var rng = SplitMix64(seed: seed("both metas"))
        let fixture = try makeFixture(&rng)
        defer { fixture.remove() }
        try zeroPage(fixture.source + "/data", page: 0)
        try zeroPage(fixture.source + "/data", page: 1)
        let (report, destination) = try salvaged(fixture, "out")
        #expect(report.checkpointGeneration == nil && report.metaSlots == [.missing, .missing])
        #expect(report.recoveredNothing && !report.isComplete)
        #expect(Set(report.unattributedLeafPages).isSuperset(of: fixture.layout.leaves.keys))
        #expect(report.wal.commitsReplayed == 0 && report.wal.commitsLost)
        #expect(try readModel(destination).values.allSatisfy { $0.entries.isEmpty })
    }

    @Test func damagedCatalogRootIsRecoveredThroughThePreviousCheckpoint() throws {
        var rng = SplitMix64(seed: seed("catalog"))
        let fixture = try makeFixture(&rng)
        defer { fixture.remove() }
        try flipByte(fixture.source + "/data", page: fixture.layout.catalogRoot, &rng)
        let (report, destination) = try salvaged(fixture, "out")
        #expect(!report.catalogComplete && report.catalogPagesLost == [fixture.layout.catalogRoot])
        // Tables that existed at the previous checkpoint are found through it; the table created since is not
        // (its leaves are reported), except for what the WAL sets in it.
        var expected = fixture.modelB
        expected[Fixture.late] = nil
        expected = applying(fixture.walChanges, to: expected)
        expectSame(try readModel(destination), expected, ignoringEmptyTables: true, "catalog root damaged")
        for id in [Fixture.binary, Fixture.int64, Fixture.engine] {
            #expect(report.tables.first { $0.id == id }?.attribution == .previousCatalog, "table \(id)")
        }
        let lateLeaves = fixture.layout.leaves.filter { $0.value.0 == Fixture.late }.map(\.key).sorted()
        #expect(report.unattributedLeafPages == lateLeaves)
        #expect(report.unattributedEntries == fixture.modelB[Fixture.late]!.entries.count)
        #expect(!report.isComplete)
    }

    @Test func walDamageKeepsTheIntactPrefix() throws {
        var rng = SplitMix64(seed: seed("wal"))
        let fixture = try makeFixture(&rng)
        defer { fixture.remove() }
        // Damage the payload of the fourth record: three commits replay, and the intact ones after it are lost.
        let walPath = fixture.source + "/wal"
        var offset = WriteAheadLog.headerSize
        let salt = try WriteAheadLog(file: try PosixFileSystem.shared.open(walPath, create: false, readOnly: true)).readHeader()
        guard case let .valid(walSalt, _) = salt else { Issue.record("no WAL header"); return }
        var bytes = try readFile(walPath)
        for _ in 0..<3 {
            var header = Array(bytes[offset..<(offset + 32)])
            let length = try header.withUnsafeMutableBytes { h in
                try #require(WALRecordHeader.open(h.baseAddress!, offset: UInt64(offset), salt: walSalt)).payloadLength
            }
            offset += 32 + length
        }
        bytes[offset + 40] ^= 0x10
        try writeFile(walPath, bytes)
        let (report, destination) = try salvaged(fixture, "out")
        expectSame(try readModel(destination), applying(Array(fixture.walChanges.prefix(3)), to: fixture.modelB), "wal damaged")
        #expect(report.wal.commitsReplayed == 3)
        #expect(report.wal.commitsLost && report.wal.bytesNotReplayed == UInt64(bytes.count - offset))
        #expect(!report.isComplete)
    }

    @Test func existingDestinationIsRefusedAndNothingIsWritten() throws {
        var rng = SplitMix64(seed: 1)
        let fixture = try makeFixture(&rng)
        defer { fixture.remove() }
        let destination = fixture.directory + "/taken"
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
        let error = expectError("destinationExists") { _ = try ValueBox.salvage(from: fixture.source, to: destination) }
        #expect(error == .destinationExists(path: destination))
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.directory).sorted() == ["source", "taken"])
        expectError("io") { _ = try ValueBox.salvage(from: fixture.source, to: fixture.source + "/inside") }
        #expect(!FileManager.default.fileExists(atPath: fixture.source + "/inside"))
    }

    @Test func sourceThatIsNotADatabaseIsATypedError() throws {
        let directory = temporaryDatabasePath("salvage-foreign")
        defer { removeItem(directory) }
        try FileManager.default.createDirectory(atPath: directory + "/db", withIntermediateDirectories: true)
        var rng = SplitMix64(seed: 2)
        try writeFile(directory + "/db/data", randomBytes(&rng, 8 * PageLayout.pageSize))
        for source in [directory + "/db", directory + "/missing", directory + "/db/data"] {
            expectError("notABoxwoodDatabase") { _ = try ValueBox.salvage(from: source, to: directory + "/out") }
        }
        try FileManager.default.createDirectory(atPath: directory + "/empty", withIntermediateDirectories: false)
        expectError("notABoxwoodDatabase") { _ = try ValueBox.salvage(from: directory + "/empty", to: directory + "/out") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["db", "empty"])
    }
}
