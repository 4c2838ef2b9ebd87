import Testing
import Foundation
@testable import BoxwoodStore

/// Overwrites that fit in the old cell are rewritten in place (same size, or shorter with the rest counted as
/// fragmented); these tests check the values, the page accounting `check` verifies, and what reaches the disk.
@Suite struct OverwriteTests {
    @Test func overwritesOfEverySizeKeepValuesAndStructure() throws {
        let dir = temporaryDatabasePath("overwrite")
        defer { removeItem(dir) }
        let t = ValueBoxTable(id: 1, keyType: .binary)
        var model: [Int: [UInt8]] = [:]
        var rng = SplitMix64(seed: 7)
        let box = try ValueBox(path: dir)
        for round in 0..<6 {
            try box.begin()
            for _ in 0..<3000 {
                let i = rng.below(2000)
                // Sizes straddle the old ones: equal, shorter, longer, empty and overflow-sized.
                let previous = model[i]?.count ?? 40
                let choice = rng.below(5)
                let length = choice == 0 ? previous : choice == 1 ? max(0, previous - 1 - rng.below(20))
                    : choice == 2 ? previous + 1 + rng.below(30) : choice == 3 ? 0 : 1500 + rng.below(3000)
                let value = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                var key = ValueBoxKey(length: 4); key.setInt32(0, value: Int32(i))
                try box.set(t, key: key, value: MemoryBuffer(value))
                model[i] = value
            }
            try box.commit()
            if round % 2 == 1 { try box.checkpoint() }
            #expect(try box.check().problems == [])
        }
        for (i, value) in model {
            var key = ValueBoxKey(length: 4); key.setInt32(0, value: Int32(i))
            #expect(try box.get(t, key: key)?.makeArray() == value, "key \(i)")
        }
        try box.close()
        let reopened = try ValueBox(path: dir)
        defer { try? reopened.close() }
        #expect(try reopened.count(t) == model.count)
        for (i, value) in model {
            var key = ValueBoxKey(length: 4); key.setInt32(0, value: Int32(i))
            #expect(try reopened.get(t, key: key)?.makeArray() == value, "key \(i) after reopen")
        }
        #expect(try reopened.check().problems == [])
    }

    @Test func bytesOfAShortenedValueDoNotReachTheDataFile() throws {
        let dir = temporaryDatabasePath("overwrite-shrink")
        defer { removeItem(dir) }
        let t = ValueBoxTable(id: 1, keyType: .binary)
        let marker = Array("SHRUNK-AWAY-MARKER-0123456789".utf8)
        let box = try ValueBox(path: dir)
        try box.begin()
        try box.set(t, key: bkey([1]), value: MemoryBuffer(Array("keep".utf8) + marker))
        try box.commit()
        try box.begin()
        try box.set(t, key: bkey([1]), value: MemoryBuffer(Array("keep".utf8)))
        try box.commit()
        try box.checkpoint()
        try box.close()
        let data = try readFile(dir + "/data")
        #expect(!containsSequence(data, marker))
        let reopened = try ValueBox(path: dir)
        defer { try? reopened.close() }
        #expect(try reopened.get(t, key: bkey([1]))?.makeArray() == Array("keep".utf8))
    }

    @Test func keyComparisonMatchesBytewiseOrder() {
        var rng = SplitMix64(seed: 11)
        func reference(_ a: [UInt8], _ b: [UInt8]) -> Int {
            for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
            return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
        }
        for _ in 0..<20000 {
            // Short alphabets and shared prefixes make equal words and ties at every length common.
            let a = (0..<rng.below(20)).map { _ in UInt8(rng.below(3)) }
            var b = Array(a.prefix(rng.below(a.count + 1)))
            b += (0..<rng.below(12)).map { _ in UInt8(rng.below(3)) }
            let got = a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in
                compareKeys(pa.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, a.count,
                            pb.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, b.count)
            } }
            #expect(got.signum() == reference(a, b), "\(a) vs \(b)")
        }
    }
}

private func containsSequence(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= haystack.count else { return false }
    var i = 0
    while i + needle.count <= haystack.count {
        if haystack[i] == needle[0] && Array(haystack[i..<(i + needle.count)]) == needle { return true }
        i += 1
    }
    return false
}
