/// What the engine knows about one table: its key type, tree root and running totals.
struct TableState: Equatable {
    var keyType: ValueBoxKeyType
    var root: PageRef
    var entries: Int
    var bytes: Int
}

/// The catalog tree maps table ids to `TableState`s on disk. Key: the id as 4 bytes big-endian with the
/// sign bit flipped (signed order). Value, 32 bytes little-endian:
///
///     0   8  root      root page of the table's tree (0 = empty)
///     8   1  keyType   0 binary, 1 int64
///     9   7  reserved  0
///     16  8  entries
///     24  8  bytes     sum of key and uncompressed value lengths
enum Catalog {
    static let valueSize = 32

    static func key(_ id: Int32) -> UInt32 { (UInt32(bitPattern: id) ^ 0x8000_0000).bigEndian }

    static func id(fromKey p: UnsafeRawPointer) -> Int32 {
        Int32(bitPattern: UInt32(bigEndian: p.loadUnaligned(as: UInt32.self)) ^ 0x8000_0000)
    }

    /// Entry and byte totals read from disk are below this (2^62), so the running `+=` of commits cannot
    /// overflow them.
    static let totalLimit: UInt64 = 1 << 62

    static func encode(_ state: TableState, into p: UnsafeMutableRawPointer) {
        p.initializeMemory(as: UInt8.self, repeating: 0, count: valueSize)
        store64(p, 0, state.root)
        p.storeBytes(of: UInt8(state.keyType.rawValue), toByteOffset: 8, as: UInt8.self)
        // Totals only go below zero when a damaged catalog undercounted a table (`check` reports the
        // mismatch); `UInt64(_:)` of a negative Int would trap, and the bit pattern would be refused by
        // `decode`, so they are written as 0.
        store64(p, 16, UInt64(max(0, state.entries)))
        store64(p, 24, UInt64(max(0, state.bytes)))
    }

    /// The table state of a catalog value read from disk, or nil when it is malformed. The root is 0 or a
    /// page number below `MetaPage.pageCountLimit` — so never tagged as an in-memory page; `Pager.diskPage`
    /// checks it against the page count when it is used — and the totals are below `totalLimit`.
    static func decode(_ p: UnsafeRawPointer, count: Int) -> TableState? {
        guard count == valueSize, let keyType = ValueBoxKeyType(rawValue: Int32(p.load(fromByteOffset: 8, as: UInt8.self))) else { return nil }
        let root = load64(p, 0), entries = load64(p, 16), bytes = load64(p, 24)
        guard root == 0 || root.isPageNumber(below: MetaPage.pageCountLimit), entries < totalLimit, bytes < totalLimit else { return nil }
        return TableState(keyType: keyType, root: root, entries: Int(entries), bytes: Int(bytes))
    }
}
