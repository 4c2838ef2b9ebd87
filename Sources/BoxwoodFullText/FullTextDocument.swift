import BoxwoodStore
/// The record of one indexed item, the value of `documents[docId]`:
///
///     varint length, collectionId (UTF-8)
///     varint length, itemId (UTF-8)
///     varint count, then per distinct tag token (ascending bytes): varint length, bytes
///     varint count, then per distinct content token (ascending bytes):
///         varint length, bytes, varint count, positions (first absolute, then deltas; ascending)
///
/// It is what removal needs (every key of the document) and what a query checks a candidate against (phrase
/// positions, prefixes, the collection and the tags), so a query reads one record per candidate.
enum FullTextDocument {
    /// Appends a record to `out`.
    static func encode(collection: [UInt8], item: [UInt8],
                       tags: TokenList, distinctTags: [(token: Range<Int>, positions: [Int32])],
                       contents: TokenList, terms: [(token: Range<Int>, positions: [Int32])], into out: ByteBuffer) {
        out.reserve(collection.count + item.count + tags.bytes.count + contents.bytes.count * 2 + 16)
        appendField(collection[...], to: out)
        appendField(item[...], to: out)
        out.appendVarint(UInt64(distinctTags.count))
        for tag in distinctTags { appendField(tags.bytes[tag.token], to: out) }
        out.appendVarint(UInt64(terms.count))
        for term in terms {
            appendField(contents.bytes[term.token], to: out)
            out.appendVarint(UInt64(term.positions.count))
            FullTextPositions.encode(term.positions, into: out)
        }
    }

    /// Appends a varint length, then the bytes.
    private static func appendField(_ bytes: ArraySlice<UInt8>, to out: ByteBuffer) {
        out.appendVarint(UInt64(bytes.count))
        bytes.withUnsafeBytes { out.append($0) }
    }
}

/// A parsed view of a document record's bytes (no copies): valid while the bytes are.
struct FullTextDocumentView {
    let bytes: UnsafeRawBufferPointer
    let collection: UnsafeRawBufferPointer
    let item: UnsafeRawBufferPointer
    /// The distinct tag tokens, ascending (parsed with `needTerms` only).
    private(set) var tags: [UnsafeRawBufferPointer] = []
    /// The distinct content tokens, ascending, with the offset and count of their encoded positions (parsed
    /// with `needTerms` only).
    private(set) var terms: [(token: UnsafeRawBufferPointer, positions: Int, count: Int)] = []

    /// Parses a record (its ids only, unless `needTerms`); nil when it is malformed.
    init?(_ bytes: UnsafeRawBufferPointer, needTerms: Bool) {
        self.bytes = bytes
        do throws(ByteReadError) {
            var reader = ByteReader(bytes)
            collection = try Self.field(&reader)
            item = try Self.field(&reader)
            guard needTerms else { return }
            let tagCount = try Self.count(&reader)
            for _ in 0..<tagCount { tags.append(try Self.field(&reader)) }
            let termCount = try Self.count(&reader)
            terms.reserveCapacity(termCount)
            for _ in 0..<termCount {
                let token = try Self.field(&reader)
                let count = try Self.count(&reader)
                let start = reader.offset
                for _ in 0..<count { _ = try reader.varint() }
                terms.append((token, start, count))
            }
        } catch {
            return nil
        }
    }

    /// A varint length, then that many bytes.
    private static func field(_ reader: inout ByteReader) throws(ByteReadError) -> UnsafeRawBufferPointer {
        let length = try reader.varint()
        guard length <= UInt64(reader.remaining) else { throw .truncated(offset: reader.offset, needed: Int(clamping: length), available: reader.remaining) }
        return try reader.bytes(Int(length))
    }

    /// A varint count of items that take at least a byte each (so never more than the record's length).
    private static func count(_ reader: inout ByteReader) throws(ByteReadError) -> Int {
        let count = try reader.varint()
        guard count <= UInt64(reader.buffer.count) else { throw .truncated(offset: reader.offset, needed: Int(clamping: count), available: reader.buffer.count) }
        return Int(count)
    }

    /// The positions of term `index`, ascending.
    func positions(ofTerm index: Int) -> [Int32] {
        var reader = ByteReader(bytes, offset: terms[index].positions)
        var result: [Int32] = []
        result.reserveCapacity(terms[index].count)
        var position: Int64 = 0
        for _ in 0..<terms[index].count {
            // Every position was read once when the record was parsed (`init`): none of these reads fails.
            position += Int64((try? reader.varint()) ?? 0)
            result.append(Int32(truncatingIfNeeded: position))
        }
        return result
    }

    /// The index of the first term not below `token` (terms are ascending).
    func firstTerm(notBelow token: UnsafeRawBufferPointer) -> Int {
        var low = 0, high = terms.count
        while low < high {
            let mid = (low + high) / 2
            if compareBytes(terms[mid].token, token) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The positions of the terms equal to `token` or, when `prefix`, starting with it; ascending.
    func positions(of token: UnsafeRawBufferPointer, prefix: Bool) -> [Int32] {
        var index = firstTerm(notBelow: token)
        if !prefix {
            return index < terms.count && compareBytes(terms[index].token, token) == 0 ? positions(ofTerm: index) : []
        }
        var result: [Int32] = []
        var runs = 0
        while index < terms.count && hasBytePrefix(terms[index].token, token) {
            result += positions(ofTerm: index)
            runs += 1
            index += 1
        }
        if runs > 1 { result.sort() }
        return result
    }

    /// True when some term equals `token` or, when `prefix`, starts with it.
    func contains(_ token: UnsafeRawBufferPointer, prefix: Bool) -> Bool {
        let index = firstTerm(notBelow: token)
        guard index < terms.count else { return false }
        return prefix ? hasBytePrefix(terms[index].token, token) : compareBytes(terms[index].token, token) == 0
    }

    /// True when the tags include `tag`.
    func hasTag(_ tag: UnsafeRawBufferPointer) -> Bool {
        tags.contains { compareBytes($0, tag) == 0 }
    }
}
