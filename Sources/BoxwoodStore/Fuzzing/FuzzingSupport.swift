/// Hooks for the fuzzers in `Fuzz/` (issue 22): the checksum, whitening and page-layout functions a harness
/// needs to forge files that pass the engine's integrity checks, so that fuzzed bytes reach the decoders behind
/// them, and direct entry points into the page decoders. Every member forwards to the engine's own internal
/// function; nothing here is used by the engine itself.
///
/// Import with `@_spi(Fuzzing) import BoxwoodStore`. Not a stable API.
@_spi(Fuzzing)
public enum FuzzingSupport {
    // MARK: Geometry

    /// Bytes per page of the data file.
    public static var pageSize: Int { PageLayout.pageSize }
    /// Bytes of the common page header.
    public static var pageHeaderSize: Int { PageLayout.headerSize }
    /// Bytes of the WAL file header, and of each WAL record header.
    public static var walHeaderSize: Int { WriteAheadLog.headerSize }
    /// The WAL version this build writes.
    public static var walVersion: UInt32 { WriteAheadLog.version }
    /// The WAL magic ("BXWDWAL\0").
    public static var walMagic: [UInt8] { WriteAheadLog.magic }
    /// Bytes of the shared header file.
    public static var sharedHeaderSize: Int { SharedHeader.size }

    // MARK: Checksums

    /// XXH64 of `count` bytes at `data` (the engine's implementation).
    public static func xxh64(_ data: UnsafeRawPointer, _ count: Int, seed: UInt64) -> UInt64 {
        XXH64.hash(data, count, seed: seed)
    }

    /// Stores the checksum of the page at `page` (bytes 8..<pageSize, seeded with `pageNumber`) into its header.
    public static func sealPage(_ page: UnsafeMutableRawPointer, pageNumber: UInt64) {
        BoxwoodStore.sealPage(page, pageNumber: pageNumber)
    }

    /// XORs `count` bytes at `bytes` with the whitening keystream of the WAL record at file offset
    /// `recordOffset` of a log with `salt`, starting `streamStart` bytes into the record (a multiple of 8).
    /// Applying it twice restores the input.
    public static func whitenWALRecord(_ bytes: UnsafeMutableRawPointer, count: Int, salt: UInt64, recordOffset: UInt64,
                                       streamStart: Int = 0) {
        RecordWhitening.apply(bytes, count: count, key: RecordWhitening.key(salt: salt, offset: recordOffset), start: streamStart)
    }

    /// The checksum word (offset 64) of a shared header publishing these five words.
    public static func sharedHeaderChecksum(generation: UInt64, walSalt: UInt64, version: UInt64, walEnd: UInt64,
                                            masterClientId: UInt64) -> UInt64 {
        SharedHeader.checksum(generation, walSalt, version, walEnd, masterClientId)
    }

    // MARK: Building files

    /// Writes a sealed meta page with these fields into the 4096-byte buffer at `page` (slot = generation % 2).
    public static func encodeMeta(into page: UnsafeMutableRawPointer, generation: UInt64, pageCount: UInt64, catalogRoot: UInt64,
                                  freelistHead: UInt64, freeCount: UInt64, lastSequence: UInt64, walSalt: UInt64,
                                  masterClientId: Int64 = 0, flags: UInt64 = 0) {
        MetaPage(generation: generation, pageCount: pageCount, catalogRoot: catalogRoot, freelistHead: freelistHead,
                 freeCount: freeCount, lastSequence: lastSequence, walSalt: walSalt, masterClientId: masterClientId,
                 flags: flags).encode(into: page)
    }

    /// The meta page at `page` as open reads it from `slot`: its WAL salt and last sequence when it is valid.
    public static func decodeMeta(_ page: UnsafeRawPointer, slot: UInt64) -> (generation: UInt64, walSalt: UInt64, lastSequence: UInt64)? {
        guard case let .valid(meta) = MetaPage.decode(page, slot: slot) else { return nil }
        return (meta.generation, meta.walSalt, meta.lastSequence)
    }

    /// The 4-byte catalog key of table `id`.
    public static func catalogKey(_ id: Int32) -> [UInt8] {
        withUnsafeBytes(of: Catalog.key(id)) { Array($0) }
    }

    /// The 32-byte catalog value of a table.
    public static func catalogValue(root: UInt64, keyType: ValueBoxKeyType, entries: Int, bytes: Int) -> [UInt8] {
        var value = [UInt8](repeating: 0, count: Catalog.valueSize)
        value.withUnsafeMutableBytes {  // `Catalog.valueSize` bytes: never empty, so `baseAddress` is set
            Catalog.encode(TableState(keyType: keyType, root: root, entries: entries, bytes: bytes), into: $0.baseAddress!)
        }
        return value
    }

    /// Initializes the page at `page` as an empty leaf (`leaf`) or branch page.
    public static func initializeTreePage(_ page: UnsafeMutableRawPointer, leaf: Bool) {
        page.initializeMemory(as: UInt8.self, repeating: 0, count: PageLayout.pageSize)
        if leaf { LeafPage.initialize(page) } else { BranchPage.initialize(page) }
    }

    /// Appends a raw inline leaf cell (`key`, `value`) as the last cell of the leaf at `page`; false when it
    /// does not fit.
    public static func appendLeafCell(_ page: UnsafeMutableRawPointer, key: [UInt8], value: [UInt8]) -> Bool {
        var cell = [UInt8](repeating: 0, count: LeafPage.cellHeader + key.count + value.count)
        // `cell` holds at least the cell header: never empty, so `baseAddress` is set (here and below).
        cell.withUnsafeMutableBytes { c in
            store16(c.baseAddress!, 0, key.count)
            store32(c.baseAddress!, 3, UInt32(value.count))
            for (i, b) in key.enumerated() { c[LeafPage.cellHeader + i] = b }
            for (i, b) in value.enumerated() { c[LeafPage.cellHeader + key.count + i] = b }
        }
        return cell.withUnsafeBytes { LeafPage.appendCell(page, $0.baseAddress!, $0.count) }
    }

    // MARK: Page decoders

    /// `PageType.problem`, the pager's page validator: why the page at `page` is malformed, or nil. `pageCount`
    /// is the page count of the file it came from (nil: a page made in memory).
    public static func validatePage(_ page: UnsafeRawPointer, pageCount: UInt64?) -> String? {
        PageType.problem(page, pageCount: pageCount)
    }

    /// The page type byte.
    public static func pageType(_ page: UnsafeRawPointer) -> UInt8 { PageType.raw(of: page) }

    private static func isLeaf(_ page: UnsafeRawPointer) -> Bool { PageType.raw(of: page) == PageType.leaf.rawValue }

    /// The cells of a validated branch or leaf page, in slot order: key bytes, and for a leaf the value's
    /// codec, whether it is an overflow reference, and its raw (uncompressed) length.
    public static func cells(_ page: UnsafeRawPointer) -> [(key: [UInt8], codec: UInt8, overflow: Bool, rawLength: Int)] {
        var result: [(key: [UInt8], codec: UInt8, overflow: Bool, rawLength: Int)] = []
        if isLeaf(page) {
            let leaf = LeafPage(page)
            for i in 0..<leaf.count {
                let (key, length) = leaf.key(i)
                let off = leaf.slot(i)
                result.append((Array(UnsafeRawBufferPointer(start: key, count: length)),
                               LeafValue.codec(page, off), LeafValue.isOverflow(page, off), LeafValue.rawLength(page, off)))
            }
        } else {
            let branch = BranchPage(page)
            for i in 0..<branch.count {
                let (key, length) = branch.key(i)
                result.append((Array(UnsafeRawBufferPointer(start: key, count: length)), 0, false, 0))
            }
        }
        return result
    }

    /// `SlottedPage.lowerBound` on a validated branch or leaf page: the first cell whose key is >= `key`, and
    /// whether it is equal.
    public static func lowerBound(_ page: UnsafeRawPointer, key: [UInt8]) -> (index: Int, found: Bool) {
        key.withUnsafeBytes { k in
            // An empty key has no address: any non-null pointer stands in, as no byte of it is read.
            let base = k.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
            let (i, found) = isLeaf(page) ? LeafPage(page).lowerBound(base, k.count) : BranchPage(page).lowerBound(base, k.count)
            return (i, found)
        }
    }

    /// Bytes used by slots and live cells of a validated branch or leaf page.
    public static func usedBytes(_ page: UnsafeRawPointer) -> Int { isLeaf(page) ? LeafPage(page).usedBytes : BranchPage(page).usedBytes }

    /// What a checkpoint does to a validated branch or leaf page before writing it (`SlottedPage.clearUnusedSpace`:
    /// compaction and zeroing of the unused bytes), applied in place.
    public static func clearUnusedSpace(_ page: UnsafeMutableRawPointer) {
        if isLeaf(page) { LeafPage.clearUnusedSpace(page) } else { BranchPage.clearUnusedSpace(page) }
    }

    /// `SlottedPage.compact` on a validated branch or leaf page, in place.
    public static func compact(_ page: UnsafeMutableRawPointer) {
        if isLeaf(page) { LeafPage.compact(page) } else { BranchPage.compact(page) }
    }

    /// `SlottedPage.removeCell` of cell `index` of a validated branch or leaf page, in place.
    public static func removeCell(_ page: UnsafeMutableRawPointer, at index: Int) {
        if isLeaf(page) { LeafPage.removeCell(page, at: index) } else { BranchPage.removeCell(page, at: index) }
    }

    // MARK: WAL decoders

    /// A decoder broke its contract on fuzzed bytes: the harness reports it as a finding.
    public struct Violation: Error, CustomStringConvertible {
        public let description: String
    }

    /// Decodes the operations of a WAL record payload as replay does (`ByteReader.operation()`): the number of
    /// operations, or nil when the payload is malformed (the fuzz target's contract: a malformed payload is an
    /// expected outcome, not a finding). Throws when a decoded operation lends bytes from outside
    /// the payload (`ByteReader` bounds every slice by what is left, so this never happens unless it regresses).
    public static func decodeWALPayload(_ payload: UnsafeRawBufferPointer) throws(Violation) -> Int? {
        guard let base = payload.baseAddress else { return 0 }
        func inside(_ slice: UnsafeRawBufferPointer) -> Bool {
            guard let start = slice.baseAddress else { return slice.isEmpty }
            return start >= base && slice.count <= payload.count - (start - base)
        }
        var reader = ByteReader(payload)
        var count = 0
        while !reader.isAtEnd {
            let operation: WALOperation
            do throws(ByteReadError) { operation = try reader.operation() } catch { return nil }
            let lent: [UnsafeRawBufferPointer]
            switch operation {
            case let .set(_, _, key, value): lent = [key, value]
            case let .remove(_, key, _): lent = [key]
            case let .setExtent(_, _, key, _): lent = [key]
            case let .removeRange(_, low, high): lent = [low, high]
            case .removeAll, .removeTable, .renameTable, .setMasterClientId: lent = []
            }
            guard lent.allSatisfy(inside) else {
                throw Violation(description: "WAL operation \(count) lends bytes outside its \(payload.count)-byte payload")
            }
            count += 1
        }
        return count
    }
}
