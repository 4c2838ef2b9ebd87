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
    /// Encodes a record.
    static func encode(collection: [UInt8], item: [UInt8],
                       tags: TokenList, distinctTags: [(token: Range<Int>, positions: [Int32])],
                       contents: TokenList, terms: [(token: Range<Int>, positions: [Int32])]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(collection.count + item.count + tags.bytes.count + contents.bytes.count * 2 + 16)
        Varint.append(UInt64(collection.count), to: &out)
        out += collection
        Varint.append(UInt64(item.count), to: &out)
        out += item
        Varint.append(UInt64(distinctTags.count), to: &out)
        for tag in distinctTags {
            Varint.append(UInt64(tag.token.count), to: &out)
            out += tags.bytes[tag.token]
        }
        Varint.append(UInt64(terms.count), to: &out)
        for term in terms {
            Varint.append(UInt64(term.token.count), to: &out)
            out += contents.bytes[term.token]
            Varint.append(UInt64(term.positions.count), to: &out)
            FullTextPositions.encode(term.positions, to: &out)
        }
        return out
    }
}

/// A parsed view of a document record's bytes (no copies): valid while the bytes are.
struct FullTextDocumentView {
    let bytes: UnsafeRawBufferPointer
    let collection: UnsafeRawBufferPointer
    let item: UnsafeRawBufferPointer
    /// The distinct tag tokens, ascending.
    private(set) var tags: [UnsafeRawBufferPointer] = []
    /// The distinct content tokens, ascending, with the offset and count of their encoded positions.
    private(set) var terms: [(token: UnsafeRawBufferPointer, positions: Int, count: Int)] = []

    /// Parses a record; nil when it is malformed.
    init?(_ bytes: UnsafeRawBufferPointer, needTerms: Bool) {
        self.bytes = bytes
        var offset = 0
        func slice() -> UnsafeRawBufferPointer? {
            guard let n = Varint.read(bytes, &offset), n <= UInt64(bytes.count - offset) else { return nil }
            let s = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Int(n)])
            offset += Int(n)
            return s
        }
        guard let collection = slice(), let item = slice() else { return nil }
        self.collection = collection
        self.item = item
        guard let tagCount = Varint.read(bytes, &offset), tagCount <= UInt64(bytes.count) else { return nil }
        for _ in 0..<Int(tagCount) {
            guard let tag = slice() else { return nil }
            tags.append(tag)
        }
        guard needTerms else { return }
        guard let termCount = Varint.read(bytes, &offset), termCount <= UInt64(bytes.count) else { return nil }
        terms.reserveCapacity(Int(termCount))
        for _ in 0..<Int(termCount) {
            guard let token = slice(), let count = Varint.read(bytes, &offset), count <= UInt64(bytes.count) else { return nil }
            let start = offset
            for _ in 0..<Int(count) { guard Varint.read(bytes, &offset) != nil else { return nil } }
            terms.append((token, start, Int(count)))
        }
    }

    /// The positions of term `index`, ascending.
    func positions(ofTerm index: Int) -> [Int32] {
        var offset = terms[index].positions
        var result: [Int32] = []
        result.reserveCapacity(terms[index].count)
        var position: Int64 = 0
        for _ in 0..<terms[index].count {
            position += Int64(Varint.read(bytes, &offset) ?? 0)
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
