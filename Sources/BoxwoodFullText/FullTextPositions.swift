import BoxwoodStore
/// Token positions: how they are encoded (in posting values and document records) and how a phrase is matched
/// against them.
enum FullTextPositions {
    /// Appends ascending positions: the first as is, then the differences, as varints.
    static func encode(_ positions: [Int32], into bytes: ByteBuffer) {
        var previous: Int32 = 0
        for (i, position) in positions.enumerated() {
            bytes.appendVarint(UInt64(i == 0 ? position : position - previous))
            previous = position
        }
    }

    /// Decodes positions encoded by `encode` (as many as the bytes hold; a malformed tail ends them).
    static func decode(_ bytes: UnsafeRawBufferPointer, appendingTo positions: inout [Int32]) {
        var reader = ByteReader(bytes)
        var position: Int64 = 0
        var first = true
        while !reader.isAtEnd, let delta = try? reader.varint() {
            position = first ? Int64(delta) : position + Int64(delta)
            first = false
            positions.append(Int32(truncatingIfNeeded: position))
        }
    }

    /// True when some `p` has `p + i` in `lists[i]` for every `i < count` (each list ascending).
    static func phraseMatches(_ lists: [[Int32]], count: Int) -> Bool {
        guard count > 0 else { return false }
        if count == 1 { return !lists[0].isEmpty }
        for i in 1..<count where lists[i].isEmpty { return false }
        return lists[0].contains { start in
            (1..<count).allSatisfy { i in lists[i].containsSorted(start + Int32(i)) }
        }
    }
}

extension Array where Element == Int32 {
    /// Binary search in an ascending array.
    func containsSorted(_ value: Int32) -> Bool {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low < count && self[low] == value
    }
}
