import BoxwoodStore
/// The document ids of the posting-list blocks under one key prefix of one engine table (a token's postings, a
/// prefix's postings, a collection, a tag), read in rounds of growing size so that a query can stop reading
/// every list once the shortest one is complete.
struct FullTextPostingWalk {
    let table: ValueBoxTable
    /// The last block key read (exclusive start of the next round).
    private var resume: ValueBoxKey
    private let end: ValueBoxKey
    /// True when the prefix is one list (blocks come in document order); false for a prefix search over the
    /// lists of several tokens.
    private let ordered: Bool
    /// True for content postings, whose entries carry positions.
    private let hasPositions: Bool
    /// The ids read so far (with repeats for a prefix walk).
    private(set) var docIds: [UInt64] = []
    /// True once every block under the prefix was read.
    private(set) var isComplete = false
    /// True when the walk keeps each entry's positions (for phrases).
    private let keepsValues: Bool
    /// The positions read, back to back, and where each entry ends (aligned with `docIds`).
    private var valueBytes: [UInt8] = []
    private var valueEnds: [Int] = []
    /// Entry indices in ascending docId order, for a walk whose keys do not come in docId order.
    private var byDocId: [Int]? = nil

    init(table: ValueBoxTable, prefix: [UInt8], ordered: Bool, hasPositions: Bool, keepsValues: Bool = false) {
        self.table = table
        (resume, end) = FullTextKeys.bounds(of: prefix)
        self.ordered = ordered
        self.hasPositions = hasPositions
        self.keepsValues = keepsValues && hasPositions
    }

    /// Reads whole blocks until at least `budget` more entries were read or the prefix ends.
    mutating func advance(_ box: ValueBox, by budget: Int) throws(BoxwoodError) {
        guard !isComplete else { return }
        var read = 0
        var last: ValueBoxKey? = nil
        var malformed = false
        let keepsValues = self.keepsValues, hasPositions = self.hasPositions
        try box.withRange(table, start: resume, end: end, limit: 0) { key, value in
            var reader = FullTextPostingBlock.Reader(firstDocId: FullTextPostingBlock.firstDocId(ofKey: key), value: value, hasPositions: hasPositions)
            do throws(FullTextFormatError) {
                while try reader.next() {
                    docIds.append(reader.docId)
                    if keepsValues {
                        valueBytes.append(contentsOf: reader.positions)
                        valueEnds.append(valueBytes.count)
                    }
                    read += 1
                }
            } catch {
                malformed = true
                return false
            }
            if read >= budget {
                last = ValueBoxKey(bytes: key)
                return false
            }
            return true
        }
        if malformed { throw box.fullTextCorruption(table, "a block of a list is malformed") }
        if let last { resume = last } else { isComplete = true }
    }

    /// Makes `positions(of:)` usable (a complete walk that keeps values).
    mutating func prepareLookup() {
        if !ordered && byDocId == nil {
            byDocId = docIds.indices.sorted { docIds[$0] < docIds[$1] }
        }
    }

    /// Replaces `result` with the positions stored for `docId`, ascending (merged over every token of a prefix
    /// walk); empty when the walk has no entry for it. Needs `prepareLookup()` first.
    func positions(of docId: UInt64, into result: inout [Int32]) {
        result.removeAll(keepingCapacity: true)
        let count = docIds.count
        @inline(__always) func entry(_ i: Int) -> Int { byDocId?[i] ?? i }
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if docIds[entry(mid)] < docId { low = mid + 1 } else { high = mid }
        }
        var entries = 0
        while low < count && docIds[entry(low)] == docId {
            let e = entry(low)
            let start = e == 0 ? 0 : valueEnds[e - 1]
            valueBytes.withUnsafeBytes { all in
                FullTextPositions.decode(UnsafeRawBufferPointer(rebasing: all[start..<valueEnds[e]]), appendingTo: &result)
            }
            entries += 1
            low += 1
        }
        if entries > 1 { result.sort() }
    }

    /// The distinct ids read, descending (complete walks only).
    func descendingDocIds() -> [UInt64] {
        if ordered { return docIds.reversed() }
        var sorted = docIds.sorted(by: >)
        var unique = 0
        for i in sorted.indices where i == 0 || sorted[i] != sorted[unique - 1] {
            sorted[unique] = sorted[i]
            unique += 1
        }
        sorted.removeLast(sorted.count - unique)
        return sorted
    }
}

/// The ids in both descending lists, descending.
func intersectDescending(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
    var result: [UInt64] = []
    result.reserveCapacity(min(a.count, b.count))
    var i = 0, j = 0
    while i < a.count && j < b.count {
        if a[i] == b[j] {
            result.append(a[i]); i += 1; j += 1
        } else if a[i] > b[j] {
            i += 1
        } else {
            j += 1
        }
    }
    return result
}
