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

    /// The positions the walk kept, looked up by docId (a complete walk that keeps values).
    func positionLookup() -> FullTextPositionLookup {
        FullTextPositionLookup(docIds: docIds, valueBytes: valueBytes, valueEnds: valueEnds,
                               byDocId: ordered ? nil : docIds.indices.sorted { docIds[$0] < docIds[$1] })
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

/// The positions a complete posting walk kept, by docId: a class, so that the per-candidate lookups of a phrase
/// check share it instead of copying a walk's arrays.
final class FullTextPositionLookup {
    private let docIds: [UInt64]
    private let valueBytes: [UInt8]
    private let valueEnds: [Int]
    /// Entry indices in ascending docId order, for a walk whose entries do not come in docId order.
    private let byDocId: [Int]?

    init(docIds: [UInt64], valueBytes: [UInt8], valueEnds: [Int], byDocId: [Int]?) {
        self.docIds = docIds
        self.valueBytes = valueBytes
        self.valueEnds = valueEnds
        self.byDocId = byDocId
        hint = docIds.count
    }

    /// Where the previous lookup's search ended: lookups come in descending docId order (the candidates'), so
    /// each one searches below it, galloping down from there instead of over the whole list.
    @exclusivity(unchecked) private var hint: Int

    /// Replaces `result` with the positions stored for `docId`, ascending (merged over every token of a prefix
    /// walk); empty when the walk has no entry for it. Fastest when called with descending docIds (any order
    /// is correct).
    func positions(of docId: UInt64, into result: inout [Int32]) {
        result.removeAll(keepingCapacity: true)
        let count = docIds.count
        docIds.withUnsafeBufferPointer { docIds in
            valueBytes.withUnsafeBytes { all in
                @inline(__always) func entry(_ i: Int) -> Int { byDocId?[i] ?? i }
                @inline(__always) func below(_ i: Int) -> Bool { docIds[entry(i)] < docId }
                // The first index whose docId is not below `docId`, in `low..<high`.
                var high = min(hint, count)
                if high < count && below(high) { high = count }  // not descending: search everything
                var low = 0
                var step = 1
                while high - step > 0 && !below(high - step) {
                    high -= step
                    step *= 2
                }
                low = max(0, high - step)
                while low < high {
                    let mid = (low + high) / 2
                    if below(mid) { low = mid + 1 } else { high = mid }
                }
                hint = low + 1
                var entries = 0
                while low < count && docIds[entry(low)] == docId {
                    let e = entry(low)
                    let start = e == 0 ? 0 : valueEnds[e - 1]
                    FullTextPositions.decode(UnsafeRawBufferPointer(rebasing: all[start..<valueEnds[e]]), appendingTo: &result)
                    entries += 1
                    low += 1
                }
                if entries > 1 { result.sort() }
            }
        }
    }
}
