@_spi(EngineTables) import BoxwoodStore
/// The on-disk layout version of a full-text table, kept in its `meta` engine table (`k` = 5) under the key
/// `layout` as a 4-byte big-endian integer. Layout 1 (before issue 24, goal 5: one key per posting) had no meta
/// table; layout 2 keeps posting lists in blocks (`FullTextPostingBlock`); layout 3 has the same lists and keeps
/// ASCII documents' records as text (`FullTextDocument`). All use the same key shapes, so an
/// index must never be read in the wrong layout: every call checks the layout first and throws
/// `.fullTextLayoutMismatch` for any other (rebuild with `fullTextReset`).
enum FullTextLayout {
    /// The layout this code writes and reads.
    static let current: UInt32 = 3
    /// The layout of an index without a layout entry that has documents.
    static let unversioned: UInt32 = 1
    /// The meta key of the layout entry.
    static let key = ValueBoxKey(Array("layout".utf8))
}

extension ValueBox {
    /// Throws `.fullTextLayoutMismatch` unless the index is in the current layout or empty. With `forWriting`
    /// (inside a write transaction), an empty index without a layout entry gets one.
    func checkFullTextLayout(_ tables: FullTextTables, forWriting: Bool) throws(BoxwoodError) {
        var recorded: UInt32? = nil
        var malformed = false
        _ = try withValue(tables.meta, key: FullTextLayout.key) { bytes in
            if bytes.count == 4 { recorded = UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self)) } else { malformed = true }
        }
        if malformed { throw fullTextCorruption(tables.meta, "the layout entry is not 4 bytes long") }
        if let recorded {
            guard recorded == FullTextLayout.current else {
                throw .fullTextLayoutMismatch(path: path, id: tables.id, found: recorded, supported: FullTextLayout.current)
            }
            return
        }
        var hasDocuments = false
        try withRange(tables.documents, start: ValueBoxKey(length: 0), end: ValueBoxKey([0xFF]), limit: 1) { _, _ in
            hasDocuments = true
            return false
        }
        if hasDocuments {
            throw .fullTextLayoutMismatch(path: path, id: tables.id, found: FullTextLayout.unversioned, supported: FullTextLayout.current)
        }
        if forWriting { try recordFullTextLayout(tables) }
    }

    /// Writes the layout entry of the current layout (for an empty index).
    func recordFullTextLayout(_ tables: FullTextTables) throws(BoxwoodError) {
        var value = [UInt8](repeating: 0, count: 4)
        value.withUnsafeMutableBytes { $0.storeBytes(of: FullTextLayout.current.bigEndian, as: UInt32.self) }
        try withBytes(value) { (bytes) throws(BoxwoodError) in try set(tables.meta, key: FullTextLayout.key, bytes: bytes) }
    }
}
