/// The document ids under one key prefix of one engine table (a token's postings, a prefix's postings, a
/// collection, a tag), read in rounds of growing size so that a query can stop reading every list once the
/// shortest one is complete.
struct FullTextPostingWalk {
    let table: ValueBoxTable
    /// The last key read (exclusive start of the next round).
    private var resume: ValueBoxKey
    private let end: ValueBoxKey
    /// True when the keys end with the document id right after the prefix, so they come in document order.
    private let ordered: Bool
    /// The ids read so far (with repeats for a prefix walk).
    private(set) var docIds: [UInt64] = []
    /// True once every key under the prefix was read.
    private(set) var isComplete = false

    init(table: ValueBoxTable, prefix: [UInt8], ordered: Bool) {
        self.table = table
        (resume, end) = FullTextKeys.bounds(of: prefix)
        self.ordered = ordered
    }

    /// Reads up to `budget` more keys.
    mutating func advance(_ box: ValueBox, by budget: Int) throws(BoxwoodError) {
        guard !isComplete else { return }
        var read = 0
        var last: ValueBoxKey? = nil
        try box.withRange(table, start: resume, end: end, limit: budget) { key, _ in
            docIds.append(FullTextKeys.docId(atEndOf: key))
            read += 1
            if read == budget { last = ValueBoxKey(bytes: key) }
            return true
        }
        if let last { resume = last } else { isComplete = true }
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
