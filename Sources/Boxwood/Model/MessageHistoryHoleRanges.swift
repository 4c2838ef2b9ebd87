/// A set of message ids stored as sorted, disjoint, non-adjacent closed ranges: the holes of one
/// (peer, namespace, space). Inserting merges overlapping and adjacent ranges; removing splits them.
///
/// Every range is clipped to ``validIds`` (1…Int32.max−1), as Postbox clips holes, so the set never holds
/// id 0, negative ids or Int32.max. Lookups are binary searches; updates are O(log n + ranges touched)
/// plus the array shift.
public struct MessageHistoryHoleRanges: Hashable, Sendable, CustomStringConvertible {
    /// The ids a hole may cover.
    public static let validIds: ClosedRange<Int32> = 1...(Int32.max - 1)

    /// The ranges, ascending, with at least one id between consecutive ranges.
    public private(set) var ranges: [ClosedRange<Int32>]

    /// An empty set.
    public init() {
        ranges = []
    }

    /// The union of `ranges`, clipped to ``validIds``.
    public init(_ ranges: some Sequence<ClosedRange<Int32>>) {
        self.ranges = []
        for range in ranges { insert(range) }
    }

    /// Whether no id is in the set.
    public var isEmpty: Bool { ranges.isEmpty }

    /// The number of ids in the set.
    public var count: Int64 {
        ranges.reduce(0) { $0 + Int64($1.upperBound) - Int64($1.lowerBound) + 1 }
    }

    /// `range` clipped to ``validIds``, or nil when they do not overlap.
    public static func clipped(_ range: ClosedRange<Int32>) -> ClosedRange<Int32>? {
        guard range.overlaps(validIds) else { return nil }
        return range.clamped(to: validIds)
    }

    /// The index of the first range whose upper bound is at least `id` (`ranges.count` if none).
    private func firstIndex(withUpperBoundAtLeast id: Int64) -> Int {
        var low = 0
        var high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if Int64(ranges[mid].upperBound) < id { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The index of the first range whose lower bound is greater than `id` (`ranges.count` if none).
    private func firstIndex(withLowerBoundAbove id: Int64) -> Int {
        var low = 0
        var high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if Int64(ranges[mid].lowerBound) <= id { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Adds the ids of `range` (clipped to ``validIds``), merging it with ranges it overlaps or touches.
    public mutating func insert(_ range: ClosedRange<Int32>) {
        guard let range = Self.clipped(range) else { return }
        let first = firstIndex(withUpperBoundAtLeast: Int64(range.lowerBound) - 1)
        let end = firstIndex(withLowerBoundAbove: Int64(range.upperBound) + 1)
        var merged = range
        if first < end {
            merged = min(range.lowerBound, ranges[first].lowerBound)...max(range.upperBound, ranges[end - 1].upperBound)
        }
        ranges.replaceSubrange(first..<end, with: CollectionOfOne(merged))
    }

    /// Removes the ids of `range`, splitting a range that extends past it on both sides.
    public mutating func remove(_ range: ClosedRange<Int32>) {
        let first = firstIndex(withUpperBoundAtLeast: Int64(range.lowerBound))
        let end = firstIndex(withLowerBoundAbove: Int64(range.upperBound))
        guard first < end else { return }
        var remainders: [ClosedRange<Int32>] = []
        if ranges[first].lowerBound < range.lowerBound {
            remainders.append(ranges[first].lowerBound...(range.lowerBound - 1))
        }
        if ranges[end - 1].upperBound > range.upperBound {
            remainders.append((range.upperBound + 1)...ranges[end - 1].upperBound)
        }
        ranges.replaceSubrange(first..<end, with: remainders)
    }

    /// Whether `id` is in the set.
    public func contains(_ id: Int32) -> Bool {
        rangeContaining(id) != nil
    }

    /// The stored range that contains `id`, if any.
    public func rangeContaining(_ id: Int32) -> ClosedRange<Int32>? {
        let index = firstIndex(withUpperBoundAtLeast: Int64(id))
        guard index < ranges.count, ranges[index].lowerBound <= id else { return nil }
        return ranges[index]
    }

    /// The parts of the set inside `range`, ascending.
    public func intersection(_ range: ClosedRange<Int32>) -> [ClosedRange<Int32>] {
        let first = firstIndex(withUpperBoundAtLeast: Int64(range.lowerBound))
        let end = firstIndex(withLowerBoundAbove: Int64(range.upperBound))
        guard first < end else { return [] }
        return ranges[first..<end].map { $0.clamped(to: range) }
    }

    public var description: String {
        "[" + ranges.map { "\($0.lowerBound)...\($0.upperBound)" }.joined(separator: ", ") + "]"
    }
}
