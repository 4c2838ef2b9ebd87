import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The physical limit, not a database: each table is one flat file of records sorted by key, read through `mmap`
/// (binary search over an index of key prefixes and offsets; the value is handed out in place and copied by the
/// caller like every engine's).
///
/// A store without table files is being loaded: puts are collected in memory and `close` writes each table once, in
/// key order, with one `fdatasync` (none under `.off`); batches cost nothing. A store with table files is read-only
/// but for an append log: puts go to the file `log` with one `write` per batch and an `fdatasync` per batch under
/// `.full` (at close under `.normal`), the least a durable commit can cost, and reads see them through an in-memory
/// map. Removes, in-place updates and crash recovery are not modelled, so the workloads needing them skip this engine.
final class MmapEngine: BenchEngine {
    static let kind = EngineKind.mmap
    static let logFileName = "log"

    let directory: String
    let durability: Durability
    /// The mapped tables; empty while loading.
    private var files: [Int32: SortedFile] = [:]
    /// The tables being loaded; empty once the store has table files.
    private var builders: [Int32: SortedFileBuilder] = [:]
    /// Created by the first put into a store that has table files (or found at open).
    private var log: AppendLog?

    init(directory: String, durability: Durability) throws(BenchError) {
        try makeDirectory(directory)
        self.directory = directory
        self.durability = durability
        for name in directoryEntries(directory) where name.hasPrefix("t") {
            if let id = Int32(name.dropFirst()) { files[id] = try SortedFile(path: directory + "/" + name) }
        }
        let logPath = directory + "/" + MmapEngine.logFileName
        if fileSize(logPath) != nil { log = try AppendLog(path: logPath) }
    }

    private var isLoading: Bool { files.isEmpty }

    func close() throws(BenchError) {
        for (id, builder) in builders {
            try builder.write(to: directory + "/t\(id)", sync: durability != .off)
        }
        builders = [:]
        try log?.flush(sync: durability != .off)
        log = nil
        files = [:]
    }

    func beginBatch() throws(BenchError) {}

    func commitBatch() throws(BenchError) {
        try log?.flush(sync: durability == .full)
    }

    func put(_ table: Int32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(BenchError) {
        if isLoading {
            if builders[table] == nil { builders[table] = SortedFileBuilder() }
            builders[table]!.add(key: key, value: value)
        } else {
            if log == nil { log = try AppendLog(path: directory + "/" + MmapEngine.logFileName) }
            log!.add(table, key: key, value: value)
        }
    }

    func get<R>(_ table: Int32, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) throws(BenchError) -> R? {
        if isLoading { throw .unsupported(engine: .mmap, operation: "reads before close wrote the sorted files") }
        if let log, let appended = log.value(table, key: key) { return appended.withUnsafeBytes(body) }
        guard let file = files[table], let position = file.find(key) else { return nil }
        return body(file.value(at: position))
    }

    func scan(_ table: Int32, after key: UnsafeRawBufferPointer, count: Int,
              _ visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) throws(BenchError) -> Int {
        if isLoading { throw .unsupported(engine: .mmap, operation: "reads before close wrote the sorted files") }
        if log != nil { throw .unsupported(engine: .mmap, operation: "scans over appended records") }
        guard let file = files[table] else { return 0 }
        let start = file.firstGreater(than: key)
        let end = min(file.count, start + count)
        for position in start..<end { visit(file.key(at: position), file.value(at: position)) }
        return end - start
    }
}

/// A table file mapped read-only: the records (key bytes, then value bytes) back to back in key order, then an
/// index entry per record (UInt64 key prefix, UInt64 offset, UInt32 key length, UInt32 value length), then a
/// footer (UInt64 record count, UInt64 index offset). Integers are little-endian. The key prefix (the first 8 key
/// bytes, zero-padded, as a big-endian number) orders keys whenever prefixes differ, so a binary search touches only
/// the index.
final class SortedFile {
    static let indexEntrySize = 24
    static let footerSize = 16

    let count: Int
    private let base: UnsafeRawPointer
    private let length: Int
    private let index: UnsafeRawPointer

    init(path: String) throws(BenchError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io(operation: "fstat", path: path, errno: errno) }
        length = Int(info.st_size)
        guard length >= SortedFile.footerSize, let mapping = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0),
              mapping != MAP_FAILED else {
            throw .io(operation: "mmap", path: path, errno: errno)
        }
        base = UnsafeRawPointer(mapping)
        let footer = base + (length - SortedFile.footerSize)
        count = Int(UInt64(littleEndian: footer.loadUnaligned(as: UInt64.self)))
        let indexOffset = Int(UInt64(littleEndian: footer.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        index = base + indexOffset
        guard indexOffset + count * SortedFile.indexEntrySize + SortedFile.footerSize == length else {
            munmap(UnsafeMutableRawPointer(mutating: base), length)
            throw .io(operation: "read a damaged table file", path: path, errno: EINVAL)
        }
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: base), length) }

    @inline(__always)
    private func entry(_ position: Int) -> UnsafeRawPointer { index + position * SortedFile.indexEntrySize }

    @inline(__always)
    func key(at position: Int) -> UnsafeRawBufferPointer {
        let entry = entry(position)
        let offset = Int(UInt64(littleEndian: entry.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        let keyLength = Int(UInt32(littleEndian: entry.loadUnaligned(fromByteOffset: 16, as: UInt32.self)))
        return UnsafeRawBufferPointer(start: base + offset, count: keyLength)
    }

    @inline(__always)
    func value(at position: Int) -> UnsafeRawBufferPointer {
        let entry = entry(position)
        let offset = Int(UInt64(littleEndian: entry.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        let keyLength = Int(UInt32(littleEndian: entry.loadUnaligned(fromByteOffset: 16, as: UInt32.self)))
        let valueLength = Int(UInt32(littleEndian: entry.loadUnaligned(fromByteOffset: 20, as: UInt32.self)))
        return UnsafeRawBufferPointer(start: base + offset + keyLength, count: valueLength)
    }

    /// The position of `key`, or nil.
    @inline(__always)
    func find(_ key: UnsafeRawBufferPointer) -> Int? {
        let position = firstNotLess(than: key)
        return position < count && compare(position, key, keyPrefix(key)) == 0 ? position : nil
    }

    /// The position of the first key greater than `key` (`count` when there is none).
    func firstGreater(than key: UnsafeRawBufferPointer) -> Int {
        var position = firstNotLess(than: key)
        if position < count && compare(position, key, keyPrefix(key)) == 0 { position += 1 }
        return position
    }

    @inline(__always)
    private func firstNotLess(than key: UnsafeRawBufferPointer) -> Int {
        let prefix = keyPrefix(key)
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if compare(middle, key, prefix) < 0 { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The order of the key at `position` relative to `key` (whose prefix is `prefix`).
    @inline(__always)
    private func compare(_ position: Int, _ key: UnsafeRawBufferPointer, _ prefix: UInt64) -> Int {
        let stored = UInt64(littleEndian: entry(position).loadUnaligned(as: UInt64.self))
        if stored != prefix { return stored < prefix ? -1 : 1 }
        return compareBytes(self.key(at: position), key)
    }
}

/// The first 8 bytes of a key, zero-padded, as a big-endian number. When two keys' prefixes differ, they order
/// the keys as `compareBytes` does (a shorter key pads with zeros, below any byte that differs).
@inline(__always)
func keyPrefix(_ key: UnsafeRawBufferPointer) -> UInt64 {
    if key.count >= 8 { return UInt64(bigEndian: key.baseAddress!.loadUnaligned(as: UInt64.self)) }
    var prefix: UInt64 = 0
    for i in 0..<8 { prefix = prefix << 8 | UInt64(i < key.count ? key[i] : 0) }
    return prefix
}

/// Binary key order: memcmp over the common prefix, then the shorter first.
@inline(__always)
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let common = min(a.count, b.count)
    if common > 0 {
        let order = memcmp(a.baseAddress!, b.baseAddress!, common)
        if order != 0 { return Int(order) }
    }
    return a.count - b.count
}

/// The records of a table being loaded, kept in memory until `write` stores them sorted (last put wins).
final class SortedFileBuilder {
    private var arena = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 16)
    private var capacity = 1 << 20
    private var used = 0
    /// Per record: its offset in the arena and its key and value lengths.
    private var records: [(offset: Int, keyLength: Int, valueLength: Int)] = []

    deinit { arena.deallocate() }

    @inline(__always)
    func add(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let size = key.count + value.count
        if used + size > capacity { grow(to: used + size) }
        if key.count > 0 { (arena + used).copyMemory(from: key.baseAddress!, byteCount: key.count) }
        if value.count > 0 { (arena + used + key.count).copyMemory(from: value.baseAddress!, byteCount: value.count) }
        records.append((used, key.count, value.count))
        used += size
    }

    private func grow(to needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newArena = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newArena.copyMemory(from: arena, byteCount: used)
        arena.deallocate()
        arena = newArena
        capacity = newCapacity
    }

    private func key(_ record: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: arena + records[record].offset, count: records[record].keyLength)
    }

    /// Writes the table file with sequential writes through a 1 MiB buffer, then `fdatasync` when `sync`.
    func write(to path: String, sync: Bool) throws(BenchError) {
        let order = records.indices.sorted { a, b in
            let c = compareBytes(key(a), key(b))
            return c < 0 || (c == 0 && a < b)
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw .io(operation: "create", path: path, errno: errno) }
        defer { close(fd) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var buffered = 0
        func append(_ bytes: UnsafeRawBufferPointer) throws(BenchError) {
            if buffered + bytes.count > 1 << 20 {
                try writeAll(fd, UnsafeRawBufferPointer(start: buffer, count: buffered), path: path)
                buffered = 0
            }
            if bytes.count > 1 << 20 {
                try writeAll(fd, bytes, path: path)
            } else if bytes.count > 0 {
                (buffer + buffered).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
                buffered += bytes.count
            }
        }
        // Records (the last put of each key), then the index, then the footer.
        var kept: [(arenaOffset: Int, fileOffset: Int, keyLength: Int, valueLength: Int)] = []
        kept.reserveCapacity(order.count)
        var fileOffset = 0
        for (n, record) in order.enumerated() {
            if n + 1 < order.count && compareBytes(key(record), key(order[n + 1])) == 0 { continue }
            let r = records[record]
            try append(UnsafeRawBufferPointer(start: arena + r.offset, count: r.keyLength + r.valueLength))
            kept.append((r.offset, fileOffset, r.keyLength, r.valueLength))
            fileOffset += r.keyLength + r.valueLength
        }
        for entry in kept {
            let key = UnsafeRawBufferPointer(start: arena + entry.arenaOffset, count: entry.keyLength)
            var fields = (keyPrefix(key).littleEndian, UInt64(entry.fileOffset).littleEndian,
                          UInt32(entry.keyLength).littleEndian, UInt32(entry.valueLength).littleEndian)
            try withUnsafeBytes(of: &fields) { (raw) throws(BenchError) in try append(raw) }
        }
        var footer = (UInt64(kept.count).littleEndian, UInt64(fileOffset).littleEndian)
        try withUnsafeBytes(of: &footer) { (raw) throws(BenchError) in try append(raw) }
        try writeAll(fd, UnsafeRawBufferPointer(start: buffer, count: buffered), path: path)
        if sync { try syncData(fd, path: path) }
    }
}

/// Records put after a store was loaded: appended to the log file (table id, key length, value length as
/// little-endian UInt32, then key and value), one `write` per batch, and kept in memory by key for reads.
final class AppendLog {
    /// A key of one table.
    private struct Key: Hashable {
        let table: Int32
        let bytes: [UInt8]
    }

    private let path: String
    private let fd: Int32
    private var pending: [UInt8] = []
    private var values: [Key: [UInt8]] = [:]

    /// Opens (creating) the log and reads back the records it holds.
    init(path: String) throws(BenchError) {
        guard let existing = readFile(path) ?? (fileSize(path) == nil ? [] : nil) else {
            throw .io(operation: "read", path: path, errno: errno)
        }
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard fd >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
        self.path = path
        var offset = 0
        while offset + 12 <= existing.count {
            let header = existing[offset..<offset + 12].withUnsafeBytes { raw in
                (Int32(littleEndian: raw.loadUnaligned(as: Int32.self)),
                 Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self))),
                 Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self))))
            }
            let keyStart = offset + 12
            let valueStart = keyStart + header.1
            let end = valueStart + header.2
            guard end <= existing.count else { break }
            values[Key(table: header.0, bytes: Array(existing[keyStart..<valueStart]))] = Array(existing[valueStart..<end])
            offset = end
        }
    }

    deinit { close(fd) }

    func add(_ table: Int32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        withUnsafeBytes(of: (table.littleEndian, UInt32(key.count).littleEndian, UInt32(value.count).littleEndian)) {
            pending.append(contentsOf: $0)
        }
        pending.append(contentsOf: key)
        pending.append(contentsOf: value)
        values[Key(table: table, bytes: Array(key))] = Array(value)
    }

    func value(_ table: Int32, key: UnsafeRawBufferPointer) -> [UInt8]? {
        values.isEmpty ? nil : values[Key(table: table, bytes: Array(key))]
    }

    /// Writes the pending records with one `write`, then `fdatasync` when `sync`.
    func flush(sync: Bool) throws(BenchError) {
        if !pending.isEmpty {
            let failure: BenchError? = pending.withUnsafeBytes { raw in
                do throws(BenchError) { try writeAll(fd, raw, path: path) } catch { return error }
                return nil
            }
            if let failure { throw failure }
            pending.removeAll(keepingCapacity: true)
        }
        if sync { try syncData(fd, path: path) }
    }
}
