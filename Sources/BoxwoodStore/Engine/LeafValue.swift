import BoxwoodLZ4
import BoxwoodPlatform
import SystemPackage

/// A value read out of a leaf: either a pointer into page memory (valid until the next mutation) or a
/// `malloc`ed copy that the holder must free (or hand to a `ReadBuffer`).
struct ValueBytes {
    let pointer: UnsafeRawPointer
    let count: Int
    let owned: UnsafeMutableRawPointer?

    func release() { if let owned { freeBytes(owned) } }

    /// A `ReadBuffer` that owns a copy (or takes over the owned memory). The length came from a page of `path`, so
    /// a copy that cannot be allocated is `.io(malloc, ENOMEM)`, never a trap (`MemoryBuffer`'s own initializers
    /// cannot throw).
    func makeReadBuffer(path: String) throws(BoxwoodError) -> ReadBuffer {
        if let owned { return ReadBuffer(memory: owned, length: count, freeWhenDone: true) }
        guard let copy = allocateBytes(max(count, 1)) else { throw .io(operation: "malloc", path: path, errno: Errno.noMemory.rawValue) }
        if count > 0 { copy.copyMemory(from: pointer, byteCount: count) }
        return ReadBuffer(memory: copy, length: count, freeWhenDone: true)
    }
}

/// Encoding of values inside leaf cells: inline or in overflow pages, raw or LZ4 (see `LeafPage`).
enum LeafValue {
    static let codecShift: UInt8 = 1
    /// No value is longer than this (4 GiB - 1): every value reaches the pages through a WAL record, whose
    /// payload length is a 32-bit field. An overflow reference from disk with a longer stored or raw length
    /// is damage (`LeafPage.overflowReferenceProblem`), so a read never asks for a larger buffer.
    static let maxValueLength = UInt64(UInt32.max)

    /// Builds the leaf cell for `key`/`value` into `buffer` (at least `PageLayout.maxCellWithSlot` bytes);
    /// large values go to a new dirty blob. Returns the cell size. A value of `compressionThreshold` to
    /// `compressionLimit` bytes is stored LZ4-compressed when that saves at least 1/8 (`LZ4Codec.compressIfSmaller`);
    /// the cell's codec field records which (see `ValueBoxOptions.compressionLimit`).
    static func makeCell(_ pager: Pager, into buffer: UnsafeMutableRawPointer, key: UnsafeRawPointer, keyLength: Int,
                         value: UnsafeRawPointer, valueLength: Int, compressionThreshold: Int,
                         compressionLimit: Int = Int.max) -> Int {
        var stored = value
        var storedLength = valueLength
        var codec = ValueCodec.raw
        var compressed: UnsafeMutableRawPointer? = nil
        if valueLength >= compressionThreshold, valueLength <= compressionLimit,
           let (bytes, n) = LZ4Codec.compressIfSmaller(value, valueLength) {
            compressed = bytes
            stored = UnsafeRawPointer(bytes)
            storedLength = n
            codec = .lz4
        }
        defer { compressed?.deallocate() }
        let inlineLength = codec == .lz4 ? 4 + storedLength : storedLength
        store16(buffer, 0, keyLength)
        if keyLength > 0 { (buffer + LeafPage.cellHeader).copyMemory(from: key, byteCount: keyLength) }
        let valueOffset = LeafPage.cellHeader + keyLength
        if LeafPage.cellHeader + keyLength + inlineLength <= PageLayout.maxInlineLeafCell || inlineLength <= LeafPage.overflowReferenceSize {
            buffer.storeBytes(of: codec.rawValue << codecShift, toByteOffset: 2, as: UInt8.self)
            store32(buffer, 3, UInt32(inlineLength))
            if codec == .lz4 {
                store32(buffer, valueOffset, UInt32(valueLength))
                (buffer + valueOffset + 4).copyMemory(from: stored, byteCount: storedLength)
            } else if storedLength > 0 {
                (buffer + valueOffset).copyMemory(from: stored, byteCount: storedLength)
            }
            return valueOffset + inlineLength
        }
        let (blobRef, blob) = pager.allocateBlob(count: storedLength)
        blob.copyMemory(from: stored, byteCount: storedLength)
        return storeOverflowReference(buffer, valueOffset: valueOffset, reference: blobRef, codec: codec.rawValue,
                                      storedLength: UInt64(storedLength), rawLength: UInt64(valueLength))
    }

    /// Builds the leaf cell for `key` whose value lives at `reference` (a dirty blob, or the first page of an
    /// overflow chain or extent) into `buffer`; returns the cell size.
    static func makeOverflowCell(into buffer: UnsafeMutableRawPointer, key: UnsafeRawPointer, keyLength: Int, reference: UInt64,
                                 codec: UInt8, storedLength: UInt64, rawLength: UInt64) -> Int {
        store16(buffer, 0, keyLength)
        if keyLength > 0 { (buffer + LeafPage.cellHeader).copyMemory(from: key, byteCount: keyLength) }
        return storeOverflowReference(buffer, valueOffset: LeafPage.cellHeader + keyLength, reference: reference, codec: codec,
                                      storedLength: storedLength, rawLength: rawLength)
    }

    private static func storeOverflowReference(_ buffer: UnsafeMutableRawPointer, valueOffset: Int, reference: UInt64, codec: UInt8,
                                               storedLength: UInt64, rawLength: UInt64) -> Int {
        buffer.storeBytes(of: LeafPage.flagOverflow | (codec << codecShift), toByteOffset: 2, as: UInt8.self)
        store32(buffer, 3, UInt32(LeafPage.overflowReferenceSize))
        store64(buffer, valueOffset, reference)
        store64(buffer, valueOffset + 8, storedLength)
        store64(buffer, valueOffset + 16, rawLength)
        return valueOffset + LeafPage.overflowReferenceSize
    }

    static func codec(_ p: UnsafeRawPointer, _ off: Int) -> UInt8 { (LeafPage.flags(p, off) >> codecShift) & 0x3 }

    static func isOverflow(_ p: UnsafeRawPointer, _ off: Int) -> Bool { LeafPage.flags(p, off) & LeafPage.flagOverflow != 0 }

    static func valueOffset(_ p: UnsafeRawPointer, _ off: Int) -> Int { off + LeafPage.cellHeader + LeafPage.keyLength(p, off) }

    /// The overflow reference of a cell, if its value lives in overflow pages.
    static func overflowReference(_ p: UnsafeRawPointer, _ off: Int) -> UInt64? {
        isOverflow(p, off) ? load64(p, valueOffset(p, off)) : nil
    }

    /// The uncompressed length of the value in a cell. An overflow reference's lengths were validated with
    /// its page (`LeafPage.overflowReferenceProblem`: below 2^52), or written by the engine, so they fit an `Int`.
    static func rawLength(_ p: UnsafeRawPointer, _ off: Int) -> Int {
        let v = valueOffset(p, off)
        if isOverflow(p, off) { return Int(load64(p, v + 16)) }
        if codec(p, off) == ValueCodec.lz4.rawValue { return Int(load32(p, v)) }
        return LeafPage.valueLength(p, off)
    }

    /// Reads the value of a cell, decompressing and following overflow pages as needed.
    static func read(_ pager: Pager, _ p: UnsafeRawPointer, _ off: Int) throws(BoxwoodError) -> ValueBytes {
        let v = valueOffset(p, off)
        let codecValue = codec(p, off)
        guard let codec = ValueCodec(rawValue: codecValue) else {
            throw .corrupted(file: pager.file.path, page: pager.pageNumber(of: p), reason: "unknown value codec \(codecValue)")
        }
        if !isOverflow(p, off) {
            let length = LeafPage.valueLength(p, off)
            if codec == .raw { return ValueBytes(pointer: p + v, count: length, owned: nil) }
            guard length >= 4 else { throw .corrupted(file: pager.file.path, page: pager.pageNumber(of: p), reason: "short compressed value") }
            return try decompress(pager, p + v + 4, length - 4, rawLength: Int(load32(p, v)), page: p)
        }
        // The reference was validated with its page (`LeafPage.overflowReferenceProblem`) or made by the engine:
        // a tagged `ref` is a blob of this pager, and both lengths are below 2^52.
        let ref = load64(p, v)
        let storedLength = Int(load64(p, v + 8))
        let rawLength = Int(load64(p, v + 16))
        if ref.isDirtyRef {
            let blob = pager.blob(ref)
            if codec == .raw { return ValueBytes(pointer: blob.memory, count: blob.count, owned: nil) }
            return try decompress(pager, blob.memory, blob.count, rawLength: rawLength, page: p)
        }
        let stored = try storedBytes(pager, first: ref, length: storedLength)
        if codec == .raw { return stored }
        defer { stored.release() }
        return try decompress(pager, stored.pointer, storedLength, rawLength: rawLength, page: p)
    }

    /// The `length` stored bytes of the checkpointed overflow value whose first page `first` names: in place when
    /// they are contiguous — one overflow page (in the mapping of a plain file, the decrypted copy in an encrypted
    /// one) or an extent (`ExtentPage`: in the mapping, verified whole when its head was first touched) — else
    /// (a chain of several overflow pages, each with its header: an encrypted file, or a file written before
    /// extents) joined in one buffer the caller frees.
    static func storedBytes(_ pager: Pager, first: UInt64, length: Int) throws(BoxwoodError) -> ValueBytes {
        if length > 0 && length <= PageLayout.overflowPayload {
            return ValueBytes(pointer: try singleOverflowPage(pager, first, length: length), count: length, owned: nil)
        }
        let head = try pager.diskPage(first)
        if PageType.raw(of: head) == PageType.extent.rawValue {
            guard ExtentPage.storedLength(head) == length else {
                throw .corrupted(file: pager.file.path, page: first.diskPageNumber, reason: "extent does not match its \(length)-byte value")
            }
            return ValueBytes(pointer: ExtentPage.bytes(head), count: length, owned: nil)
        }
        let joined = try readOverflowChain(pager, first: first, length: length)
        return ValueBytes(pointer: joined, count: length, owned: joined)
    }

    /// Decompresses an LZ4 value of the leaf at `page`. A raw length that no LZ4 block of `count` bytes can
    /// produce (more than 255 bytes per byte, or more than LZ4 compresses) is refused before allocating.
    private static func decompress(_ pager: Pager, _ source: UnsafeRawPointer, _ count: Int, rawLength: Int,
                                   page: UnsafeRawPointer) throws(BoxwoodError) -> ValueBytes {
        guard rawLength <= LZ4Block.maxInputSize, rawLength / 255 <= count else {
            throw .corrupted(file: pager.file.path, page: pager.pageNumber(of: page),
                             reason: "LZ4 value of \(rawLength) bytes cannot come from \(count) compressed bytes")
        }
        guard let out = allocateBytes(max(rawLength, 1)) else { throw .io(operation: "malloc", path: pager.file.path, errno: Errno.noMemory.rawValue) }
        if !LZ4Codec.decompress(source, count, into: out, rawCount: rawLength) {
            freeBytes(out)
            throw .corrupted(file: pager.file.path, page: pager.pageNumber(of: page), reason: "LZ4 value does not decompress to \(rawLength) bytes")
        }
        return ValueBytes(pointer: out, count: rawLength, owned: out)
    }

    /// The payload of the overflow page `ref` when it alone holds a value of `length` stored bytes (0 < `length` ≤
    /// `PageLayout.overflowPayload`): the page must hold exactly `length` bytes and end its chain, as
    /// `readOverflowChain` requires of a one-page chain.
    private static func singleOverflowPage(_ pager: Pager, _ ref: UInt64, length: Int) throws(BoxwoodError) -> UnsafeRawPointer {
        let p = try pager.diskPage(ref)
        guard let overflow = OverflowPage(p), overflow.payloadLength == length, overflow.next == 0 else {
            throw .corrupted(file: pager.file.path, page: ref.diskPageNumber, reason: "overflow chain does not match its \(length)-byte value")
        }
        return overflow.payload
    }

    /// Copies a chain of overflow pages into a new `malloc`ed buffer of `length` bytes.
    static func readOverflowChain(_ pager: Pager, first: UInt64, length: Int) throws(BoxwoodError) -> UnsafeMutableRawPointer {
        guard let out = allocateBytes(max(length, 1)) else { throw .io(operation: "malloc", path: pager.file.path, errno: Errno.noMemory.rawValue) }
        var page = first
        var previous: UInt64? = nil
        var copied = 0
        while copied < length {
            if page == 0 {
                freeBytes(out)
                throw .corrupted(file: pager.file.path, page: previous ?? first, reason: "overflow chain ends after \(copied) of \(length) bytes")
            }
            let p: UnsafeRawPointer
            do { p = try pager.diskPage(page) } catch { freeBytes(out); throw error }
            // The payload length of an overflow page was validated with the page: at most `overflowPayload`.
            guard let overflow = OverflowPage(p), case let n = overflow.payloadLength, n > 0, copied + n <= length else {
                freeBytes(out)
                throw .corrupted(file: pager.file.path, page: page, reason: "bad overflow page in a \(length)-byte value")
            }
            (out + copied).copyMemory(from: overflow.payload, byteCount: n)
            copied += n
            previous = page
            page = overflow.next
            // Every page but the last is full, and the last ends the chain: a loop or a spliced chain
            // can never satisfy both, so it is reported instead of returning repeated bytes.
            if (copied < length && n != PageLayout.overflowPayload) || (copied == length && page != 0) {
                freeBytes(out)
                throw .corrupted(file: pager.file.path, page: page, reason: "overflow chain does not match its \(length)-byte value")
            }
        }
        return out
    }
}
