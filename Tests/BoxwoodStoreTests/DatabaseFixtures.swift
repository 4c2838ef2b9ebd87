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

/// Rewrites the extent whose head is page `head` of the data file of the closed database at `path` through `edit`
/// (given the head and the extent's page count as it was) and reseals its checksum over `pages` pages (the page
/// count before the edit unless given): whatever the edit did, the checksum is valid.
func rewriteExtent(_ path: String, head: UInt64, pages: Int? = nil, _ edit: (UnsafeMutableRawPointer) -> Void) throws {
    var data = try readFile(path + "/data")
    data.withUnsafeMutableBytes { raw in
        let p = raw.baseAddress! + Int(head) * PageLayout.pageSize
        let count = pages ?? ExtentPage.pageCount(forStored: ExtentPage.storedLength(p))
        edit(p)
        store64(p, PageLayout.checksumOffset, ExtentPage.checksum(p, pages: count, head: head))
    }
    try writeFile(path + "/data", data)
}

/// True when page `page` of the data file of the closed database at `path` is the head of an extent.
func isExtentHead(_ path: String, page: UInt64) throws -> Bool {
    try readFile(path + "/data")[Int(page) * PageLayout.pageSize + PageLayout.typeOffset] == PageType.extent.rawValue
}

/// Turns the database at `path` (closed) into one as a build before extents wrote it: every extent the trees
/// name in `heads` becomes an overflow chain in the same pages (each page its header, `link` to the next), and
/// both meta pages say format version 1. Requires that each value's chain takes as many pages as its extent (true
/// of a 100,000-byte value: 25 pages either way), so no other page moves.
func rewriteExtentsAsChains(_ path: String, heads: [UInt64]) throws {
    var data = try readFile(path + "/data")
    data.withUnsafeMutableBytes { raw in
        let base = raw.baseAddress!
        for head in heads {
            let p = base + Int(head) * PageLayout.pageSize
            precondition(PageType.raw(of: p) == PageType.extent.rawValue, "page \(head) is not an extent head")
            let stored = ExtentPage.storedLength(p)
            let pages = ExtentPage.pageCount(forStored: stored)
            precondition(OverflowPage.pagesNeeded(for: stored) == pages, "a \(stored)-byte value takes another page count as a chain")
            let value = Array(UnsafeRawBufferPointer(start: ExtentPage.bytes(p), count: stored))
            value.withUnsafeBytes { v in
                for i in 0..<pages {
                    let page = head + UInt64(i)
                    let q = base + Int(page) * PageLayout.pageSize
                    let start = i * PageLayout.overflowPayload
                    OverflowPage.write(q, next: i + 1 < pages ? page + 1 : 0, payload: v.baseAddress! + start,
                                       count: min(PageLayout.overflowPayload, stored - start))
                    sealPage(q, pageNumber: page)
                }
            }
        }
        for slot in 0..<2 {
            let m = base + slot * PageLayout.pageSize
            guard load32(m, 40) == MetaPage.formatVersion else { continue }
            store32(m, 40, 1)
            sealPage(m, pageNumber: UInt64(slot))
        }
    }
    try writeFile(path + "/data", data)
}
