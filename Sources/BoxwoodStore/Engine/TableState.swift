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

    static func encode(_ state: TableState, into p: UnsafeMutableRawPointer) {
        p.initializeMemory(as: UInt8.self, repeating: 0, count: valueSize)
        store64(p, 0, state.root)
        p.storeBytes(of: UInt8(state.keyType.rawValue), toByteOffset: 8, as: UInt8.self)
        store64(p, 16, UInt64(state.entries))
        store64(p, 24, UInt64(state.bytes))
    }

    static func decode(_ p: UnsafeRawPointer, count: Int) -> TableState? {
        guard count == valueSize, let keyType = ValueBoxKeyType(rawValue: Int32(p.load(fromByteOffset: 8, as: UInt8.self))) else { return nil }
        let entries = load64(p, 16), bytes = load64(p, 24)
        guard entries <= UInt64(Int.max), bytes <= UInt64(Int.max) else { return nil }
        return TableState(keyType: keyType, root: load64(p, 0), entries: Int(entries), bytes: Int(bytes))
    }
}
