import Foundation
@testable import BoxwoodStore

// The database that BadFileTests damages and HostileFileTests forges, and the page rewrite both use on it.

/// The 4-byte big-endian key of `i`: the keys sort in the order of `i`.
func uint32Key(_ i: UInt32) -> ValueBoxKey {
    var k = ValueBoxKey(length: 4)
    k.setUInt32(0, value: i)
    return k
}

/// Creates a checkpointed database in a fresh temporary directory named after `tag` and returns its path, closed.
/// `tree` is more than one level deep: 3,000 entries keyed `uint32Key(0..<3000)` with values of 20 to 69 bytes,
/// of which keys 1000 through 1999 are removed after a checkpoint (so the freelist is not empty). `big` holds a
/// 100 KB incompressible value (key -1, bytes of `SplitMix64(seed:)`) in overflow pages and a one-byte value
/// (key 1). `settle` runs on the open box last, before it is closed.
func makeMultiLevelDatabase(_ tag: String, tree: ValueBoxTable, big: ValueBoxTable, seed: UInt64,
                            settle: (ValueBox) throws -> Void) throws -> String {
    let path = temporaryDatabasePath(tag)
    let box = try ValueBox(path: path)
    try box.begin()
    for i in 0..<3000 {
        try box.set(tree, key: uint32Key(UInt32(i)), value: mbuf([UInt8](repeating: UInt8(i % 251), count: 20 + i % 50)))
    }
    var rng = SplitMix64(seed: seed)
    try box.set(big, key: ikey(-1), value: mbuf(rng.bytes(100_000)))
    try box.set(big, key: ikey(1), value: mbuf([1]))
    try box.commit()
    try box.checkpoint()
    try box.begin()
    try box.removeRange(tree, start: uint32Key(1000), end: uint32Key(1999))
    try box.commit()
    try settle(box)
    try box.close()
    return path
}

/// Rewrites page `page` of the data file of the closed database at `path` through `edit` and reseals its
/// checksum: whatever the edit did to the page's structure, its checksum is valid.
func rewritePage(_ path: String, page: UInt64, _ edit: (UnsafeMutableRawPointer) -> Void) throws {
    var data = try readFile(path + "/data")
    data.withUnsafeMutableBytes { raw in
        let p = raw.baseAddress! + Int(page) * PageLayout.pageSize
        edit(p)
        sealPage(p, pageNumber: page)
    }
    try writeFile(path + "/data", data)
}
