import Foundation
@testable import BoxwoodStore

/// A fresh, not yet existing path under the temporary directory.
func temporaryDatabasePath(_ tag: String) -> String {
    NSTemporaryDirectory() + "bw-\(tag)-\(UUID().uuidString)"
}

func removeItem(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}

/// Copies the `data` and `wal` files of a database directory (as a crash would leave them: whatever the
/// open box has written so far) into a new directory.
func copyDatabaseFiles(from source: String, to destination: String) throws {
    let fm = FileManager.default
    try fm.createDirectory(atPath: destination, withIntermediateDirectories: true)
    for name in ["data", "wal"] where fm.fileExists(atPath: source + "/" + name) {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source + "/" + name))
        try bytes.write(to: URL(fileURLWithPath: destination + "/" + name))
    }
}

func readFile(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

extension ValueBoxKey {
    /// The key's bytes as an array.
    var byteArray: [UInt8] { withUnsafeBytes { Array($0) } }
}

/// Shorthands.
func bkey(_ bytes: [UInt8]) -> ValueBoxKey { ValueBoxKey(bytes) }
func ikey(_ v: Int64) -> ValueBoxKey { ValueBoxKey(int64: v) }
func mbuf(_ bytes: [UInt8]) -> MemoryBuffer { MemoryBuffer(bytes) }
func mbuf(_ s: String) -> MemoryBuffer { MemoryBuffer(string: s) }

extension ValueBox {
    /// Every (key, value) of a table in ascending order.
    func allEntries(_ table: ValueBoxTable) throws -> [([UInt8], [UInt8])] {
        var out: [([UInt8], [UInt8])] = []
        try scan(table, values: { k, v in out.append((k.byteArray, v.makeArray())); return true })
        return out
    }

    /// The keys of `range(keys:)` as byte arrays.
    func rangeKeys(_ table: ValueBoxTable, _ start: ValueBoxKey, _ end: ValueBoxKey, limit: Int = 0) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        try range(table, start: start, end: end, keys: { out.append($0.byteArray); return true }, limit: limit)
        return out
    }

    /// The int64 keys of `range(keys:)`.
    func rangeInts(_ table: ValueBoxTable, _ start: Int64, _ end: Int64, limit: Int = 0) throws -> [Int64] {
        var out: [Int64] = []
        try range(table, start: ValueBoxKey(int64: start), end: ValueBoxKey(int64: end), keys: { out.append($0.getInt64(0)); return true }, limit: limit)
        return out
    }

    func bytes(_ table: ValueBoxTable, _ key: ValueBoxKey) throws -> [UInt8]? {
        try get(table, key: key)?.makeArray()
    }
}

import Testing

extension BoxwoodError {
    /// The case name, for matching errors whose payload (paths, offsets) a test does not care about.
    var kind: String {
        // A case with a payload reflects as one child labelled with the case's name.
        if let label = Mirror(reflecting: self).children.first?.label { return label }
        switch self {
        case .noActiveTransaction: return "noActiveTransaction"
        case .transactionAlreadyActive: return "transactionAlreadyActive"
        case .closed: return "closed"
        default: return "unlabelled: \(self)"
        }
    }
}

/// Runs `body`, expecting a `BoxwoodError` of one of the given kinds; returns it.
@discardableResult
func expectError(_ kinds: String..., sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> BoxwoodError? {
    expectError(anyOf: kinds, sourceLocation: sourceLocation, body)
}

/// ``expectError(_:sourceLocation:_:)`` with the kinds as an array (for helpers that pass them on).
@discardableResult
func expectError(anyOf kinds: [String], sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> BoxwoodError? {
    do {
        try body()
        Issue.record("expected a BoxwoodError of kind \(kinds), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as BoxwoodError {
        if !kinds.contains(error.kind) {
            Issue.record("expected a BoxwoodError of kind \(kinds), got \(error.kind): \(error)", sourceLocation: sourceLocation)
        }
        return error
    } catch {
        Issue.record("expected a BoxwoodError of kind \(kinds), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// A box in a fresh temporary directory, removed afterwards.
func withTemporaryBox(_ tag: String, options: ValueBoxOptions = ValueBoxOptions(), _ body: (ValueBox, String) throws -> Void) throws {
    let path = temporaryDatabasePath(tag)
    defer { removeItem(path) }
    let box = try ValueBox(path: path, options: options)
    try body(box, path)
    try box.close()
}

// MARK: Crash tests

/// The seed of a randomized crash test: BOXWOOD_SEED, or a fresh random one.
func crashTestSeed() -> UInt64 {
    if let s = ProcessInfo.processInfo.environment["BOXWOOD_SEED"], let v = UInt64(s) { return v }
    return UInt64.random(in: 0...UInt64.max)
}

/// An integer from the environment, or `fallback`.
func environmentCount(_ name: String, default fallback: Int) -> Int {
    if let s = ProcessInfo.processInfo.environment[name], let v = Int(s), v > 0 { return v }
    return fallback
}

/// Options that make checkpoints (and WAL resets) happen every few dozen commits.
func crashTestOptions(_ durability: Durability) -> ValueBoxOptions {
    var options = ValueBoxOptions(durability: durability)
    options.checkpointWALBytes = 24 << 10
    options.checkpointMemoryBytes = 512 << 10
    return options
}
