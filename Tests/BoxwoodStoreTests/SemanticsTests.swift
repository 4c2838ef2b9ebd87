import Testing
import Foundation
@testable import BoxwoodStore

/// One focused test per operation and edge case of the ValueBox API.
@Suite struct SemanticsTests {
    let bin = ValueBoxTable(id: 1, keyType: .binary)
    let ints = ValueBoxTable(id: 2, keyType: .int64)

    // MARK: Ordering

    @Test func binaryKeysUseMemcmpOrderShorterFirst() throws {
        try withTemporaryBox("order-bin") { box, _ in
            let keys: [[UInt8]] = [[0xFF, 0x00], [], [0x01], [0x00], [0x00, 0x00], [0x80], [0x7F, 0xFF, 0xFF], [0xFF], [0x01, 0x00, 0x00], [0x00, 0xFF]]
            try box.begin()
            for k in keys { try box.set(bin, key: bkey(k), value: mbuf(k)) }
            try box.commit()
            let sorted: [[UInt8]] = [[], [0x00], [0x00, 0x00], [0x00, 0xFF], [0x01], [0x01, 0x00, 0x00], [0x7F, 0xFF, 0xFF], [0x80], [0xFF], [0xFF, 0x00]]
            #expect(try box.allEntries(bin).map(\.0) == sorted)
            #expect(try box.allEntries(bin).allSatisfy { $0.0 == $0.1 })
            // Ascending over everything: the empty key is a bound, so it is excluded.
            #expect(try box.rangeKeys(bin, bkey([]), bkey([0xFF, 0xFF])) == Array(sorted.dropFirst()))
            // Descending from above everything down to the empty key (excluded).
            #expect(try box.rangeKeys(bin, bkey([0xFF, 0xFF]), bkey([])) == Array(sorted.dropFirst().reversed()))
            // ValueBoxKey's Comparable agrees.
            #expect(keys.map(bkey).sorted().map(\.byteArray) == sorted)
        }
    }

    @Test func int64KeysOrderBySignedValue() throws {
        try withTemporaryBox("order-int") { box, _ in
            let values: [Int64] = [5, -1, 0, .min, .max, -300, 300, 1, -2, .min + 1, .max - 1, 256, -256]
            try box.begin()
            for v in values { try box.set(ints, key: ikey(v), value: mbuf("\(v)")) }
            try box.commit()
            let sorted = values.sorted()
            var scanned: [Int64] = []
            try box.scanInt64(ints, keys: { scanned.append($0); return true })
            #expect(scanned == sorted)
            var scannedValues: [Int64] = []
            try box.scanInt64(ints, values: { k, v in
                #expect(String(decoding: v.makeArray(), as: UTF8.self) == "\(k)")
                scannedValues.append(k); return true
            })
            #expect(scannedValues == sorted)
            // scan() returns the public (big-endian, unflipped) key bytes.
            var viaScan: [Int64] = []
            try box.scan(ints, keys: { viaScan.append($0.getInt64(0)); return true })
            #expect(viaScan == sorted)
            // Exclusive bounds at the extremes.
            #expect(try box.rangeInts(ints, .min, .max) == Array(sorted.dropFirst().dropLast()))
            #expect(try box.rangeInts(ints, .max, .min) == Array(sorted.dropFirst().dropLast().reversed()))
            #expect(try box.rangeInts(ints, -2, 2) == [-1, 0, 1])
            #expect(try box.rangeInts(ints, 2, -2) == [1, 0, -1])
            #expect(try box.rangeInts(ints, -1000, -1) == [-300, -256, -2])
            #expect(try box.count(ints, start: ikey(-1000), end: ikey(1000)) == 9)
            #expect(try box.count(ints, start: ikey(1000), end: ikey(-1000)) == 0)
            // removeRange across zero, bounds given high to low.
            try box.begin()
            try box.removeRange(ints, start: ikey(1), end: ikey(-1))
            try box.commit()
            #expect(try box.rangeInts(ints, -3, 3) == [-2])
        }
    }

    @Test func scanOnBinaryTableAsInt64Throws() throws {
        try withTemporaryBox("scanint") { box, _ in
            expectError("keyTypeMismatch") { try box.scanInt64(bin, keys: { _ in true }) }
        }
    }

    // MARK: Ranges

    @Test func rangeDirectionsLimitsAndStops() throws {
        try withTemporaryBox("range") { box, _ in
            try box.begin()
            for i in 0..<100 { try box.set(bin, key: bkey([UInt8(i * 2)]), value: mbuf([UInt8(i)])) }
            try box.commit()
            let all = (0..<100).map { [UInt8($0 * 2)] }
            // Bounds outside any key, between keys and on keys (exclusive).
            #expect(try box.rangeKeys(bin, bkey([]), bkey([0xFF])) == all)
            #expect(try box.rangeKeys(bin, bkey([0xFF]), bkey([])) == all.reversed())
            #expect(try box.rangeKeys(bin, bkey([10]), bkey([20])) == [[12], [14], [16], [18]])
            #expect(try box.rangeKeys(bin, bkey([9]), bkey([21])) == [[10], [12], [14], [16], [18], [20]])
            #expect(try box.rangeKeys(bin, bkey([20]), bkey([10])) == [[18], [16], [14], [12]])
            #expect(try box.rangeKeys(bin, bkey([21]), bkey([9])) == [[20], [18], [16], [14], [12], [10]])
            // Adjacent keys: nothing strictly between.
            #expect(try box.rangeKeys(bin, bkey([10]), bkey([12])) == [])
            #expect(try box.rangeKeys(bin, bkey([12]), bkey([10])) == [])
            // start == end: nothing, whether or not the key exists.
            #expect(try box.rangeKeys(bin, bkey([10]), bkey([10])) == [])
            #expect(try box.rangeKeys(bin, bkey([11]), bkey([11])) == [])
            // Table edges: the first key as an exclusive start, the last as an exclusive end.
            #expect(try box.rangeKeys(bin, bkey([0]), bkey([4])) == [[2]])
            #expect(try box.rangeKeys(bin, bkey([198]), bkey([0])) == Array(all.dropFirst().dropLast().reversed()))
            #expect(try box.rangeKeys(bin, bkey([199]), bkey([0xFF])) == [])
            #expect(try box.rangeKeys(bin, bkey([0]), bkey([]))  == [])
            // A bound that is a prefix/extension of a key.
            #expect(try box.rangeKeys(bin, bkey([10, 0]), bkey([14])) == [[12]])
            #expect(try box.rangeKeys(bin, bkey([14, 0]), bkey([10])) == [[14], [12]])
            // Limits: <= 0 is unlimited.
            #expect(try box.rangeKeys(bin, bkey([]), bkey([0xFF]), limit: 0).count == 100)
            #expect(try box.rangeKeys(bin, bkey([]), bkey([0xFF]), limit: -5).count == 100)
            #expect(try box.rangeKeys(bin, bkey([]), bkey([0xFF]), limit: 1) == [[0]])
            #expect(try box.rangeKeys(bin, bkey([0xFF]), bkey([]), limit: 3) == [[198], [196], [194]])
            #expect(try box.rangeKeys(bin, bkey([]), bkey([0xFF]), limit: 1000).count == 100)
            // The callback stops the scan by returning false (the entry it saw counts as visited).
            var seen: [[UInt8]] = []
            try box.range(bin, start: bkey([]), end: bkey([0xFF]), values: { k, v in
                seen.append(k.byteArray)
                #expect(v.makeArray() == [k.getUInt8(0) / 2])
                return seen.count < 4
            }, limit: 0)
            #expect(seen == [[0], [2], [4], [6]])
            // scan can stop too.
            var n = 0
            try box.scan(bin, keys: { _ in n += 1; return n < 7 })
            #expect(n == 7)
        }
    }

    @Test func filteredRangeAcceptSkipStop() throws {
        try withTemporaryBox("filtered") { box, _ in
            try box.begin()
            for i in Int64(-10)...10 { try box.set(ints, key: ikey(i), value: mbuf([UInt8(bitPattern: Int8(i))])) }
            try box.commit()
            // Accept even keys, skip odd ones: the limit counts accepted entries only.
            var visited: [Int64] = []
            try box.filteredRange(ints, start: ikey(-11), end: ikey(11), values: { k, v in
                let x = k.getInt64(0)
                #expect(v.makeArray() == [UInt8(bitPattern: Int8(x))])
                visited.append(x)
                return x % 2 == 0 ? .accept : .skip
            }, limit: 3)
            #expect(visited == [-10, -9, -8, -7, -6])
            // Descending, keys only, stop at 0 (the stopping entry is visited).
            visited = []
            try box.filteredRange(ints, start: ikey(5), end: ikey(-100), keys: { k in
                visited.append(k.getInt64(0))
                return k.getInt64(0) == 0 ? .stop : .skip
            }, limit: 1)
            #expect(visited == [4, 3, 2, 1, 0])
            // Skipping everything with a limit visits everything.
            visited = []
            try box.filteredRange(ints, start: ikey(.min), end: ikey(.max), keys: { k in visited.append(k.getInt64(0)); return .skip }, limit: 1)
            #expect(visited.count == 21)
            // start == end: nothing.
            visited = []
            try box.filteredRange(ints, start: ikey(3), end: ikey(3), keys: { k in visited.append(k.getInt64(0)); return .accept }, limit: 0)
            #expect(visited.isEmpty)
        }
    }

    @Test func countBetweenIsExclusiveAndDirectional() throws {
        try withTemporaryBox("count") { box, _ in
            try box.begin()
            for i in 0..<50 { try box.set(bin, key: bkey([UInt8(i)]), value: mbuf([])) }
            try box.commit()
            #expect(try box.count(bin) == 50)
            #expect(try box.count(bin, start: bkey([]), end: bkey([0xFF])) == 50)
            #expect(try box.count(bin, start: bkey([0]), end: bkey([49])) == 48)
            #expect(try box.count(bin, start: bkey([10]), end: bkey([10])) == 0)
            #expect(try box.count(bin, start: bkey([20]), end: bkey([10])) == 0)
            #expect(try box.count(bin, start: bkey([10, 0]), end: bkey([12])) == 1)
            #expect(try box.count(bin, start: bkey([60]), end: bkey([70])) == 0)
        }
    }

    @Test func missingAndEmptyTables() throws {
        try withTemporaryBox("missing") { box, _ in
            let missing = ValueBoxTable(id: 77, keyType: .binary)
            let missingInt = ValueBoxTable(id: 78, keyType: .int64)
            #expect(try box.get(missing, key: bkey([1])) == nil)
            #expect(try box.exists(missing, key: bkey([1])) == false)
            #expect(try box.count(missing) == 0)
            #expect(try box.count(missing, start: bkey([]), end: bkey([0xFF])) == 0)
            #expect(try box.rangeKeys(missing, bkey([]), bkey([0xFF])) == [])
            #expect(try box.rangeInts(missingInt, .min, .max) == [])
            var called = false
            try box.read(missing, key: bkey([1])) { _, _ in called = true }
            #expect(!called)
            // Mutations of a missing table are no-ops that do not create it.
            let version = box.transactionStateVersion
            try box.begin()
            try box.remove(missing, key: bkey([1]))
            try box.removeRange(missing, start: bkey([]), end: bkey([0xFF]))
            try box.move(missing, from: bkey([1]), to: bkey([2]))
            try box.copy(fromTable: missing, fromKey: bkey([1]), toTable: bin, toKey: bkey([1]))
            try box.removeAllFromTable(missing)
            try box.removeTable(missing)
            try box.renameTable(missing, to: bin)
            try box.readWrite(missing, key: bkey([1])) { _, _, _ in called = true }
            try box.commit()
            #expect(!called)
            #expect(try box.allTables().isEmpty)
            #expect(box.transactionStateVersion == version)

            // An existing table emptied by removals still exists.
            try box.begin()
            try box.set(bin, key: bkey([1]), value: mbuf([1]))
            try box.remove(bin, key: bkey([1]))
            try box.commit()
            #expect(try box.allTables() == [bin])
            #expect(try box.count(bin) == 0)
            #expect(try box.rangeKeys(bin, bkey([]), bkey([0xFF])) == [])
            #expect(try box.get(bin, key: bkey([1])) == nil)
        }
    }

    // MARK: Values and keys

    @Test func zeroLengthValuesAndKeysRoundTrip() throws {
        let path = temporaryDatabasePath("zero")
        defer { removeItem(path) }
        do {
            let box = try ValueBox(path: path)
            try box.begin()
            try box.set(bin, key: bkey([]), value: MemoryBuffer())
            try box.set(bin, key: bkey([1]), value: mbuf([]))
            try box.set(ints, key: ikey(0), value: mbuf([]))
            try box.set(bin, key: bkey([2]), bytes: UnsafeRawBufferPointer(start: nil, count: 0))
            try box.commit()
            #expect(try box.get(bin, key: bkey([]))?.length == 0)
            #expect(try box.get(bin, key: bkey([1]))?.length == 0)
            #expect(try box.get(bin, key: bkey([2]))?.length == 0)
            #expect(try box.exists(bin, key: bkey([])))
            var length = -1
            try box.read(bin, key: bkey([1])) { n, _ in length = n }
            #expect(length == 0)
            try box.close()
        }
        let box = try ValueBox(path: path)
        #expect(try box.get(bin, key: bkey([]))?.length == 0)
        #expect(try box.get(bin, key: bkey([1]))?.length == 0)
        #expect(try box.get(ints, key: ikey(0))?.length == 0)
        #expect(try box.allEntries(bin).map(\.0) == [[], [1], [2]])
        #expect(try box.check().problems == [])
        try box.close()
    }

    @Test func valueSizesAroundInlineCompressionAndOverflowLimits() throws {
        let path = temporaryDatabasePath("sizes")
        defer { removeItem(path) }
        var rng = SplitMix64(seed: 42)
        let sizes = [0, 1, 23, 24, 25, 255, 256, 257, 300, 900, 980, 993, 994, 1000, 1024, 4063, 4064, 4065, 8128, 8129, 20000, 100_000]
        var expected: [[UInt8]: [UInt8]] = [:]
        do {
            let box = try ValueBox(path: path)
            try box.begin()
            for (i, n) in sizes.enumerated() {
                for compressible in [false, true] {
                    let v = compressible ? [UInt8](repeating: UInt8(i), count: n) : rng.bytes(n)
                    let k: [UInt8] = [UInt8(i), compressible ? 1 : 0]
                    try box.set(bin, key: bkey(k), value: mbuf(v))
                    expected[k] = v
                    #expect(try box.bytes(bin, bkey(k)) == v, "uncommitted value of \(n) bytes")
                }
            }
            try box.commit()
            for (k, v) in expected { #expect(try box.bytes(bin, bkey(k)) == v, "committed value of \(v.count) bytes") }
            try box.checkpoint()
            for (k, v) in expected { #expect(try box.bytes(bin, bkey(k)) == v, "checkpointed value of \(v.count) bytes") }
            #expect(try box.check().problems == [])
            try box.close()
        }
        let box = try ValueBox(path: path)
        for (k, v) in expected { #expect(try box.bytes(bin, bkey(k)) == v, "reopened value of \(v.count) bytes") }
        let stats = try box.tableStatistics()
        #expect(stats.first?.bytes == expected.reduce(0) { $0 + $1.key.count + $1.value.count })
        #expect(try box.check().problems == [])
        try box.close()
    }

    @Test func sixtyFourMebibyteValue() throws {
        let path = temporaryDatabasePath("64mib")
        defer { removeItem(path) }
        let size = 64 << 20
        var big = [UInt8](repeating: 0, count: size)
        var rng = SplitMix64(seed: 64)
        big.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt64.self)
            for i in 0..<words.count { words[i] = rng.next() }
        }
        let key = bkey(Array("big".utf8))
        let zeros = bkey(Array("zeros".utf8))
        // No compression limit: the zeros are stored as one LZ4 block (a 64 MiB raw length), the random value raw.
        var options = ValueBoxOptions()
        options.compressionLimit = Int.max
        do {
            let box = try ValueBox(path: path, options: options)
            try box.begin()
            try box.set(bin, key: key, value: mbuf(big))
            try box.set(bin, key: zeros, value: mbuf([UInt8](repeating: 0, count: size)))
            try box.set(bin, key: bkey([1]), value: mbuf([1]))
            try box.commit()
            #expect(try box.get(bin, key: key)?.makeArray() == big)
            try box.close()
        }
        do {
            let box = try ValueBox(path: path, options: options)
            let value = try box.get(bin, key: key)
            #expect(value?.length == size)
            #expect(value?.makeArray() == big)
            var zeroLength = -1
            var allZero = false
            _ = try box.withValue(bin, key: zeros) { bytes in zeroLength = bytes.count; allZero = !bytes.contains { $0 != 0 } }
            #expect(zeroLength == size && allZero)
            var tail = [UInt8](repeating: 0, count: 16)
            try box.read(bin, key: key) { n, read in
                #expect(n == size)
                tail.withUnsafeMutableBytes { read($0.baseAddress!, size - 16, 16) }
            }
            #expect(tail == Array(big.suffix(16)))
            #expect(try box.check().problems == [])
            let pagesBefore = try box.statistics().pagesTotal
            try box.begin()
            try box.remove(bin, key: key)
            try box.remove(bin, key: zeros)
            try box.commit()
            #expect(try box.get(bin, key: key) == nil)
            try box.checkpoint()
            let stats = try box.statistics()
            #expect(stats.pagesFree >= UInt64(size / PageLayout.pageSize), "the overflow pages were freed")
            // The file may grow by the pages of the (now long) freelist, no more.
            #expect(stats.pagesTotal <= pagesBefore + 64)
            #expect(try box.check().problems == [])
            // Freed pages are reused: writing the value again does not grow the file.
            try box.begin()
            try box.set(bin, key: key, value: mbuf(big))
            try box.commit()
            try box.checkpoint()
            #expect(try box.statistics().pagesTotal <= pagesBefore + 64)
            try box.close()
        }
        let box = try ValueBox(path: path)
        #expect(try box.get(bin, key: key)?.makeArray() == big)
        #expect(try box.get(bin, key: zeros) == nil)
        #expect(try box.check().problems == [])
        try box.close()
    }

    @Test func maximumKeySize() throws {
        let path = temporaryDatabasePath("maxkey")
        defer { removeItem(path) }
        #expect(ValueBox.maxKeySize == 1280)
        var rng = SplitMix64(seed: 1280)
        var expected: [[UInt8]: [UInt8]] = [:]
        do {
            let box = try ValueBox(path: path)
            try box.begin()
            // Many maximal keys sharing long prefixes force splits with maximal separators in branch pages.
            for i in 0..<300 {
                var k = [UInt8](repeating: 0xAB, count: ValueBox.maxKeySize)
                k[ValueBox.maxKeySize - 1] = UInt8(i % 256)
                k[ValueBox.maxKeySize - 2] = UInt8(i / 256)
                if i % 3 == 0 { k[700] = 0x01 }
                let v = rng.bytes([0, 24, 25, 300, 5000][i % 5])
                try box.set(bin, key: bkey(k), value: mbuf(v))
                expected[k] = v
            }
            try box.commit()
            try box.begin()
            let tooLong = bkey([UInt8](repeating: 1, count: ValueBox.maxKeySize + 1))
            let e = expectError("keyTooLarge") { try box.set(bin, key: tooLong, value: mbuf([1])) }
            #expect(e == .keyTooLarge(length: 1281, limit: 1280))
            expectError("keyTooLarge") { _ = try box.get(bin, key: tooLong) }
            expectError("keyTooLarge") { try box.remove(bin, key: tooLong) }
            expectError("keyTooLarge") { _ = try box.rangeKeys(bin, tooLong, bkey([])) }
            box.abort()
            #expect(try box.check().problems == [])
            try box.close()
        }
        let box = try ValueBox(path: path)
        let entries = try box.allEntries(bin)
        #expect(entries.count == expected.count)
        for (k, v) in entries { #expect(expected[k] == v) }
        #expect(try box.check().problems == [])
        // Remove them all again through ranges (merges of pages holding maximal keys).
        try box.begin()
        try box.removeRange(bin, start: bkey([]), end: bkey([0xFF]))
        try box.commit()
        #expect(try box.count(bin) == 0)
        #expect(try box.check().problems == [])
        try box.close()
    }

    @Test func int64KeysMustBeEightBytes() throws {
        try withTemporaryBox("int64len") { box, _ in
            try box.begin()
            let e = expectError("invalidInt64Key") { try box.set(ints, key: bkey([1, 2, 3]), value: mbuf([1])) }
            #expect(e == .invalidInt64Key(length: 3))
            expectError("invalidInt64Key") { try box.set(ints, key: bkey([UInt8](repeating: 0, count: 9)), value: mbuf([1])) }
            expectError("invalidInt64Key") { try box.set(ints, key: bkey([]), value: mbuf([1])) }
            try box.set(ints, key: ikey(1), value: mbuf([1]))
            expectError("invalidInt64Key") { _ = try box.get(ints, key: bkey([1])) }
            expectError("invalidInt64Key") { try box.remove(ints, key: bkey([1])) }
            expectError("invalidInt64Key") { try box.removeRange(ints, start: bkey([1]), end: ikey(5)) }
            expectError("invalidInt64Key") { _ = try box.count(ints, start: ikey(0), end: bkey([1])) }
            try box.commit()
            #expect(try box.count(ints) == 1)
        }
    }

    @Test func keyTypeMismatchThrows() throws {
        try withTemporaryBox("mismatch") { box, _ in
            try box.begin()
            try box.set(bin, key: bkey([1]), value: mbuf([1]))
            let asInt = ValueBoxTable(id: bin.id, keyType: .int64)
            let e = expectError("keyTypeMismatch") { try box.set(asInt, key: ikey(1), value: mbuf([1])) }
            #expect(e == .keyTypeMismatch(table: 1, existing: "binary", requested: "int64"))
            expectError("keyTypeMismatch") { _ = try box.get(asInt, key: ikey(1)) }
            expectError("keyTypeMismatch") { _ = try box.exists(asInt, key: ikey(1)) }
            expectError("keyTypeMismatch") { _ = try box.count(asInt) }
            expectError("keyTypeMismatch") { _ = try box.rangeInts(asInt, .min, .max) }
            expectError("keyTypeMismatch") { try box.remove(asInt, key: ikey(1)) }
            expectError("keyTypeMismatch") { try box.removeAllFromTable(asInt) }
            try box.commit()
            // After removeAllFromTable the key type remains; after removeTable the id is free again.
            try box.begin()
            try box.removeAllFromTable(bin)
            try box.commit()
            expectError("keyTypeMismatch") { _ = try box.get(asInt, key: ikey(1)) }
            try box.begin()
            try box.removeTable(bin)
            try box.set(asInt, key: ikey(-5), value: mbuf([5]))
            try box.commit()
            #expect(try box.rangeInts(asInt, .min, .max) == [-5])
            #expect(try box.allTables() == [asInt])
        }
    }

    @Test func valueBoxKeySuccessorPredecessorAndSetters() {
        #expect(bkey([0x01, 0x02]).successor == bkey([0x01, 0x03]))
        #expect(bkey([0x01, 0xFF]).successor == bkey([0x02, 0x00]))
        #expect(bkey([0x01, 0xFF, 0xFF]).successor == bkey([0x02, 0x00, 0x00]))
        #expect(bkey([0xFF, 0xFF]).successor == bkey([0x00, 0x00]), "all-0xFF wraps, same length")
        #expect(bkey([]).successor == bkey([]))
        #expect(bkey([0x01, 0x03]).predecessor == bkey([0x01, 0x02]))
        #expect(bkey([0x02, 0x00]).predecessor == bkey([0x01, 0xFF]))
        #expect(bkey([0x02, 0x00, 0x00]).predecessor == bkey([0x01, 0xFF, 0xFF]))
        #expect(bkey([0x00, 0x00]).predecessor == bkey([0x00]), "borrow past the first byte truncates")
        #expect(bkey([0x00]).predecessor == bkey([]))
        #expect(bkey([0x00, 0x05]).predecessor == bkey([0x00, 0x04]))
        // successor/predecessor do not modify the original (value semantics).
        let k = bkey([0x10, 0xFF])
        let s = k.successor
        #expect(k == bkey([0x10, 0xFF]) && s == bkey([0x11, 0x00]))
        let copy = k
        var m = copy
        m.setUInt8(0, value: 0x99)
        #expect(copy == bkey([0x10, 0xFF]) && m == bkey([0x99, 0xFF]))
        // Order relations used by Postbox with successor/predecessor.
        #expect(bkey([0x01]) < bkey([0x01]).successor)
        #expect(bkey([0x01, 0x00]).predecessor < bkey([0x01, 0x00]))
        // Setters are big-endian with no sign flip (setUInt16 is native order, as in Postbox).
        var key = ValueBoxKey(length: 15)
        key.setInt32(0, value: -2)
        key.setInt64(4, value: 0x0102_0304_0506_0708)
        key.setUInt16(12, value: 0x0A0B)
        key.setInt8(14, value: -1)
        #expect(key.byteArray == [0xFF, 0xFF, 0xFF, 0xFE, 1, 2, 3, 4, 5, 6, 7, 8, 0x0B, 0x0A, 0xFF])
        #expect(key.getInt32(0) == -2 && key.getInt64(4) == 0x0102_0304_0506_0708 && key.getUInt16(12) == 0x0A0B && key.getInt8(14) == -1)
        #expect(ikey(-1).byteArray == [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(ikey(1).byteArray == [0, 0, 0, 0, 0, 0, 0, 1])
        #expect(bkey([1, 2]) + bkey([3]) == bkey([1, 2, 3]))
        #expect(bkey([1, 2]).isPrefix(to: bkey([1, 2, 3])) && !bkey([1, 3]).isPrefix(to: bkey([1, 2, 3])))
        #expect(bkey([1, 2, 3]).prefix(2) == bkey([1, 2]))
        #expect(bkey([1, 2, 3]).reversed == bkey([3, 2, 1]))
    }

    // MARK: Mutations

    @Test func removeRangeIsInclusiveAndOrderInsensitive() throws {
        try withTemporaryBox("rmrange") { box, _ in
            try box.begin()
            for i in 0..<20 { try box.set(bin, key: bkey([UInt8(i)]), value: mbuf([UInt8(i)])) }
            try box.removeRange(bin, start: bkey([5]), end: bkey([8]))
            #expect(try box.rangeKeys(bin, bkey([3]), bkey([10])) == [[4], [9]])
            try box.removeRange(bin, start: bkey([15]), end: bkey([12]))
            #expect(try box.rangeKeys(bin, bkey([10]), bkey([17])) == [[11], [16]])
            // Equal bounds remove exactly that key.
            try box.removeRange(bin, start: bkey([0]), end: bkey([0]))
            #expect(try box.exists(bin, key: bkey([0])) == false)
            // Bounds between keys.
            try box.removeRange(bin, start: bkey([1, 0]), end: bkey([3, 0]))
            #expect(try box.allEntries(bin).map(\.0) == [[1], [4], [9], [10], [11], [16], [17], [18], [19]])
            try box.commit()
            let version = box.transactionStateVersion
            // A range with nothing in it changes nothing.
            try box.begin()
            try box.removeRange(bin, start: bkey([5]), end: bkey([8]))
            try box.commit()
            #expect(box.transactionStateVersion == version)
        }
    }

    @Test func moveReplacesDestinationAndIgnoresMissingSource() throws {
        try withTemporaryBox("move") { box, _ in
            try box.begin()
            try box.set(bin, key: bkey([1]), value: mbuf("one"))
            try box.set(bin, key: bkey([2]), value: mbuf("two"))
            try box.move(bin, from: bkey([1]), to: bkey([2]))
            #expect(try box.get(bin, key: bkey([1])) == nil)
            #expect(try box.bytes(bin, bkey([2])) == Array("one".utf8))
            try box.move(bin, from: bkey([9]), to: bkey([2]))
            #expect(try box.bytes(bin, bkey([2])) == Array("one".utf8))
            try box.move(bin, from: bkey([2]), to: bkey([2]))
            #expect(try box.bytes(bin, bkey([2])) == Array("one".utf8))
            try box.move(bin, from: bkey([2]), to: bkey([3]))
            try box.commit()
            #expect(try box.allEntries(bin).map(\.0) == [[3]])
            try box.begin()
            try box.set(ints, key: ikey(-1), value: mbuf([0xAA]))
            try box.move(ints, from: ikey(-1), to: ikey(.max))
            try box.commit()
            #expect(try box.rangeInts(ints, .min, .max) == [])
            #expect(try box.bytes(ints, ikey(.max)) == [0xAA])
        }
    }

    @Test func copyKeepsExistingDestination() throws {
        try withTemporaryBox("copy") { box, _ in
            let other = ValueBoxTable(id: 9, keyType: .binary)
            try box.begin()
            try box.set(bin, key: bkey([1]), value: mbuf("one"))
            try box.set(bin, key: bkey([2]), value: mbuf("two"))
            try box.copy(fromTable: bin, fromKey: bkey([1]), toTable: bin, toKey: bkey([2]))
            #expect(try box.bytes(bin, bkey([2])) == Array("two".utf8), "existing destination unchanged")
            try box.copy(fromTable: bin, fromKey: bkey([1]), toTable: other, toKey: bkey([5]))
            try box.copy(fromTable: bin, fromKey: bkey([1]), toTable: ints, toKey: ikey(-7))
            try box.copy(fromTable: bin, fromKey: bkey([8]), toTable: other, toKey: bkey([6]))
            try box.commit()
            #expect(try box.bytes(bin, bkey([1])) == Array("one".utf8), "source kept")
            #expect(try box.bytes(other, bkey([5])) == Array("one".utf8))
            #expect(try box.bytes(ints, ikey(-7)) == Array("one".utf8))
            #expect(try box.exists(other, key: bkey([6])) == false)
            #expect(try box.allTables().map(\.id) == [1, 2, 9])
        }
    }

    @Test func removeAllRemoveTableAndRename() throws {
        let path = temporaryDatabasePath("tables")
        defer { removeItem(path) }
        let a = ValueBoxTable(id: 10, keyType: .binary)
        let b = ValueBoxTable(id: 11, keyType: .binary)
        let c = ValueBoxTable(id: 30, keyType: .binary)
        do {
            let box = try ValueBox(path: path)
            try box.begin()
            for i in 0..<500 {
                try box.set(a, key: bkey([UInt8(i % 256), UInt8(i / 256)]), value: mbuf([UInt8](repeating: 1, count: i)))
                try box.set(b, key: bkey([UInt8(i % 7)]), value: mbuf([2]))
            }
            try box.commit()
            try box.checkpoint()
            try box.begin()
            try box.renameTable(a, to: b)       // replaces b
            #expect(try box.count(b) == 500)
            #expect(try box.count(a) == 0)
            #expect(try box.allTables().map(\.id) == [11])
            try box.renameTable(b, to: b)       // no-op
            try box.renameTable(b, to: c)
            try box.commit()
            #expect(try box.allTables().map(\.id) == [30])
            #expect(try box.check().problems == [])
            try box.close()
        }
        do {
            let box = try ValueBox(path: path)
            #expect(try box.allTables().map(\.id) == [30])
            #expect(try box.count(c) == 500)
            #expect(try box.bytes(c, bkey([3, 1]))?.count == 259)
            #expect(try box.check().problems == [])
            try box.begin()
            try box.removeAllFromTable(c)
            try box.commit()
            #expect(try box.allTables().map(\.id) == [30])
            #expect(try box.count(c) == 0)
            try box.begin()
            try box.removeTable(c)
            try box.commit()
            #expect(try box.allTables().isEmpty)
            try box.checkpoint()
            let stats = try box.statistics()
            // Everything but the two metas and the freelist's own page is free.
            #expect(stats.pagesFree + 3 == stats.pagesTotal, "\(stats)")
            #expect(try box.check().problems == [])
            try box.close()
        }
        let box = try ValueBox(path: path)
        #expect(try box.allTables().isEmpty)
        #expect(try box.check().problems == [])
        try box.close()
    }

    @Test func renameKeepsTheSourceKeyType() throws {
        try withTemporaryBox("rename-type") { box, _ in
            try box.begin()
            try box.set(ints, key: ikey(-1), value: mbuf([1]))
            try box.renameTable(ints, to: ValueBoxTable(id: 50, keyType: .binary))
            try box.commit()
            #expect(try box.allTables() == [ValueBoxTable(id: 50, keyType: .int64)])
            #expect(try box.rangeInts(ValueBoxTable(id: 50, keyType: .int64), .min, .max) == [-1])
        }
    }

    @Test func partialReadAndReadWrite() throws {
        try withTemporaryBox("rw") { box, _ in
            let bigValue = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
            try box.begin()
            try box.set(bin, key: bkey([1]), value: mbuf(Array("hello world".utf8)))
            try box.set(bin, key: bkey([2]), value: mbuf(bigValue))
            try box.commit()
            try box.checkpoint()
            var part = [UInt8](repeating: 0, count: 5)
            var length = 0
            try box.read(bin, key: bkey([1])) { n, read in
                length = n
                part.withUnsafeMutableBytes { read($0.baseAddress!, 6, 5) }
            }
            #expect(length == 11 && part == Array("world".utf8))
            expectError("outOfBounds") {
                try box.read(bin, key: bkey([1])) { _, read in part.withUnsafeMutableBytes { read($0.baseAddress!, 8, 5) } }
            }
            try box.begin()
            try box.readWrite(bin, key: bkey([1])) { n, read, write in
                #expect(n == 11)
                var first = [UInt8](repeating: 0, count: 5)
                first.withUnsafeMutableBytes { read($0.baseAddress!, 0, 5) }
                #expect(first == Array("hello".utf8))
                Array("WORLD".utf8).withUnsafeBytes { write($0.baseAddress!, 6, 5) }
            }
            try box.readWrite(bin, key: bkey([2])) { n, _, write in
                #expect(n == 10_000)
                [UInt8](repeating: 0xEE, count: 100).withUnsafeBytes { write($0.baseAddress!, 9_900, 100) }
            }
            let e = expectError("outOfBounds") {
                try box.readWrite(bin, key: bkey([1])) { _, _, write in [UInt8](repeating: 0, count: 2).withUnsafeBytes { write($0.baseAddress!, 10, 2) } }
            }
            #expect(e == .outOfBounds(offset: 10, length: 2, valueLength: 11))
            try box.commit()
            #expect(try box.bytes(bin, bkey([1])) == Array("hello WORLD".utf8), "the out-of-bounds write changed nothing")
            #expect(try box.bytes(bin, bkey([2])) == Array(bigValue.prefix(9_900)) + [UInt8](repeating: 0xEE, count: 100))
            // readWrite on a missing key does not call back and creates nothing.
            try box.begin()
            var called = false
            try box.readWrite(bin, key: bkey([3])) { _, _, _ in called = true }
            try box.commit()
            #expect(!called)
            #expect(try box.exists(bin, key: bkey([3])) == false)
        }
    }

    @Test func mutatingInsideRangeCallback() throws {
        try withTemporaryBox("mutate-in-range") { box, _ in
            try box.begin()
            for i in 0..<2000 { try box.set(ints, key: ikey(Int64(i)), value: mbuf([UInt8](repeating: 3, count: 40))) }
            try box.commit()
            try box.checkpoint()
            try box.begin()
            var visited: [Int64] = []
            var failure: BoxwoodError? = nil
            try box.range(ints, start: ikey(-1), end: ikey(5000), keys: { k in
                visited.append(k.getInt64(0))
                do throws(BoxwoodError) { try box.remove(ints, key: k) } catch { failure = error }
                return true
            }, limit: 0)
            #expect(failure == nil)
            #expect(visited == (0..<2000).map { Int64($0) })
            #expect(try box.count(ints) == 0)
            try box.commit()
            #expect(try box.check().problems == [])
        }
    }

    // MARK: Transactions

    @Test func abortDiscardsEverything() throws {
        try withTemporaryBox("abort") { box, _ in
            let other = ValueBoxTable(id: 3, keyType: .binary)
            try box.begin()
            for i in 0..<300 { try box.set(bin, key: bkey([UInt8(i % 256), UInt8(i / 256)]), value: mbuf([UInt8](repeating: 9, count: 3000))) }
            try box.set(ints, key: ikey(1), value: mbuf([1]))
            try box.commit()
            try box.checkpoint()
            let before = try box.allEntries(bin)
            let version = box.transactionStateVersion
            try box.begin()
            try box.set(bin, key: bkey([0xFF]), value: mbuf([1]))
            try box.remove(bin, key: bkey([0, 0]))
            try box.removeRange(bin, start: bkey([10]), end: bkey([20]))
            try box.set(other, key: bkey([1]), value: mbuf([1]))
            try box.removeTable(ints)
            try box.renameTable(bin, to: ValueBoxTable(id: 4, keyType: .binary))
            try box.set(ValueBoxTable(id: 4, keyType: .binary), key: bkey([0, 0, 0]), value: mbuf([UInt8](repeating: 1, count: 300_000)))
            box.abort()
            #expect(!box.isInTransaction)
            #expect(box.transactionStateVersion == version)
            #expect(try box.allEntries(bin).map(\.0) == before.map(\.0))
            #expect(try box.allEntries(bin).map(\.1) == before.map(\.1))
            #expect(try box.allTables().map(\.id) == [1, 2])
            #expect(try box.bytes(ints, ikey(1)) == [1])
            #expect(try box.check().problems == [])
            // Abort outside a transaction is a no-op.
            box.abort()
        }
    }

    @Test func writesOutsideATransactionThrow() throws {
        try withTemporaryBox("notxn") { box, _ in
            expectError("noActiveTransaction") { try box.set(bin, key: bkey([1]), value: mbuf([1])) }
            expectError("noActiveTransaction") { try box.remove(bin, key: bkey([1])) }
            expectError("noActiveTransaction") { try box.removeRange(bin, start: bkey([1]), end: bkey([2])) }
            expectError("noActiveTransaction") { try box.move(bin, from: bkey([1]), to: bkey([2])) }
            expectError("noActiveTransaction") { try box.copy(fromTable: bin, fromKey: bkey([1]), toTable: bin, toKey: bkey([2])) }
            expectError("noActiveTransaction") { try box.removeAllFromTable(bin) }
            expectError("noActiveTransaction") { try box.removeTable(bin) }
            expectError("noActiveTransaction") { try box.renameTable(bin, to: ints) }
            expectError("noActiveTransaction") { try box.readWrite(bin, key: bkey([1])) { _, _, _ in } }
            expectError("noActiveTransaction") { try box.commit() }
            try box.begin()
            let twice = expectError("transactionAlreadyActive") { try box.begin() }
            #expect(twice == .transactionAlreadyActive)
            expectError("transactionAlreadyActive") { try box.checkpoint() }
            try box.set(bin, key: bkey([1]), value: mbuf([1]))
            try box.commit()
            #expect(try box.bytes(bin, bkey([1])) == [1])
            // Reads work outside transactions; inside, they see the transaction's own writes.
            try box.begin()
            try box.set(bin, key: bkey([2]), value: mbuf([2]))
            #expect(try box.bytes(bin, bkey([2])) == [2])
            #expect(try box.count(bin) == 2)
            box.abort()
            #expect(try box.bytes(bin, bkey([2])) == nil)
        }
    }

    @Test func transactionStateVersionCountsNonEmptyCommits() throws {
        let path = temporaryDatabasePath("version")
        defer { removeItem(path) }
        do {
            let box = try ValueBox(path: path)
            #expect(box.transactionStateVersion == 0)
            try box.begin(); try box.commit()
            #expect(box.transactionStateVersion == 0, "empty commit")
            try box.begin(); try box.remove(bin, key: bkey([1])); try box.commit()
            #expect(box.transactionStateVersion == 0, "removing a missing key changes nothing")
            try box.begin(); try box.set(bin, key: bkey([1]), value: mbuf([1])); try box.commit()
            #expect(box.transactionStateVersion == 1)
            try box.begin(); try box.set(bin, key: bkey([2]), value: mbuf([2])); box.abort()
            #expect(box.transactionStateVersion == 1, "aborted")
            try box.begin(); try box.remove(bin, key: bkey([1])); try box.set(bin, key: bkey([3]), value: mbuf([3])); try box.commit()
            #expect(box.transactionStateVersion == 2)
            try box.begin(); try box.commit()
            #expect(box.transactionStateVersion == 2)
            #expect(try box.statistics().transactionStateVersion == 2)
            try box.close()
        }
        do {
            let box = try ValueBox(path: path)
            #expect(box.transactionStateVersion == 2, "survives a checkpointed reopen")
            try box.begin(); try box.set(bin, key: bkey([4]), value: mbuf([4])); try box.commit()
            #expect(box.transactionStateVersion == 3)
            // Survives recovery from the WAL too (files copied while open, not checkpointed).
            let copy = temporaryDatabasePath("version-copy")
            defer { removeItem(copy) }
            try copyDatabaseFiles(from: path, to: copy)
            let recovered = try ValueBox(path: copy)
            #expect(recovered.transactionStateVersion == 3)
            #expect(try recovered.bytes(bin, bkey([4])) == [4])
            try recovered.close()
            try box.close()
        }
    }

    @Test func abortedAndUncommittedDataIsNotVisibleAfterReopen() throws {
        let path = temporaryDatabasePath("aborted")
        defer { removeItem(path) }
        do {
            let box = try ValueBox(path: path)
            try box.begin()
            try box.set(bin, key: bkey([1]), value: mbuf([1]))
            try box.commit()
            try box.begin()
            try box.set(bin, key: bkey([2]), value: mbuf([2]))
            try box.remove(bin, key: bkey([1]))
            box.abort()
            try box.begin()
            try box.set(bin, key: bkey([3]), value: mbuf([3]))
            // Copy while the transaction is open: the WAL holds nothing of it.
            let copy = temporaryDatabasePath("aborted-copy")
            defer { removeItem(copy) }
            try copyDatabaseFiles(from: path, to: copy)
            let recovered = try ValueBox(path: copy)
            #expect(try recovered.allEntries(bin).map(\.0) == [[1]])
            try recovered.close()
            // close() with an open transaction aborts it.
            try box.close()
            #expect(!box.isInTransaction)
        }
        let box = try ValueBox(path: path)
        #expect(try box.allEntries(bin).map(\.0) == [[1]])
        #expect(box.transactionStateVersion == 1)
        try box.close()
    }

    // MARK: Recovery

    /// Commits without a checkpoint, then a "crash": the files are copied while the box is open.
    @Test func walReplayRecoversUncheckpointedCommits() throws {
        for durability in Durability.allCases {
            let path = temporaryDatabasePath("replay")
            let copy = temporaryDatabasePath("replay-copy")
            defer { removeItem(path); removeItem(copy) }
            var expected: [([UInt8], [UInt8])] = []
            let box = try ValueBox(path: path, options: ValueBoxOptions(durability: durability))
            try box.begin()
            for i in 0..<100 { try box.set(bin, key: bkey([UInt8(i)]), value: mbuf([UInt8(i)])) }
            try box.commit()
            try box.checkpoint()
            // After the checkpoint: more commits, only in the WAL.
            for t in 0..<20 {
                try box.begin()
                try box.set(bin, key: bkey([UInt8(t), 0xFF]), value: mbuf([UInt8](repeating: UInt8(t), count: t * 300)))
                try box.remove(bin, key: bkey([UInt8(50 + t)]))
                try box.set(ints, key: ikey(Int64(-t)), value: mbuf([UInt8(t)]))
                try box.commit()
            }
            try box.begin()
            try box.renameTable(ints, to: ValueBoxTable(id: 7, keyType: .int64))
            try box.removeRange(bin, start: bkey([90]), end: bkey([95]))
            try box.commit()
            #expect(try box.statistics().walBytes > 32)
            expected = try box.allEntries(bin)
            let expectedInts = try box.allEntries(ValueBoxTable(id: 7, keyType: .int64))
            try copyDatabaseFiles(from: path, to: copy)
            let recovered = try ValueBox(path: copy, options: ValueBoxOptions(durability: durability))
            #expect(recovered.transactionStateVersion == 22)
            #expect(try recovered.allEntries(bin).map(\.0) == expected.map(\.0))
            #expect(try recovered.allEntries(bin).map(\.1) == expected.map(\.1))
            #expect(try recovered.allEntries(ValueBoxTable(id: 7, keyType: .int64)).map(\.0) == expectedInts.map(\.0))
            #expect(try recovered.allTables().map(\.id) == [1, 7])
            #expect(try recovered.check().problems == [])
            try recovered.close()
            // And once more after the recovered box checkpointed and closed.
            let again = try ValueBox(path: copy)
            #expect(try again.allEntries(bin).map(\.1) == expected.map(\.1))
            #expect(again.transactionStateVersion == 22)
            try again.close()
            try box.close()
        }
    }

    /// Builds a database with `commits` single-key commits after a checkpoint and returns the WAL size after
    /// each commit (index 0: before the first).
    private func walWithCommits(_ path: String, commits: Int) throws -> (ValueBox, [UInt64]) {
        let box = try ValueBox(path: path)
        try box.begin()
        try box.set(bin, key: bkey([0]), value: mbuf([0]))
        try box.commit()
        try box.checkpoint()
        var sizes = [try box.statistics().walBytes]
        for i in 1...commits {
            try box.begin()
            try box.set(bin, key: bkey([UInt8(i)]), value: mbuf([UInt8](repeating: UInt8(i), count: 100 * i)))
            try box.commit()
            sizes.append(try box.statistics().walBytes)
        }
        return (box, sizes)
    }

    @Test func tornWALTailIsIgnoredAndTruncated() throws {
        let path = temporaryDatabasePath("torn")
        defer { removeItem(path) }
        let (box, sizes) = try walWithCommits(path, commits: 5)
        defer { try? box.close() }
        // The last record ends where its end marker starts; preallocated zeros follow the marker.
        let walFileSize = try FileManager.default.attributesOfItem(atPath: path + "/wal")[.size] as? UInt64 ?? 0
        #expect(walFileSize >= sizes.last! + UInt64(WriteAheadLog.recordHeaderSize))
        var rng = SplitMix64(seed: 7)

        // 1. What a torn append leaves after the last record (over its end marker): a header cut short by the end
        //    of the file, or sectors that never reached the disk (zeros).
        for garbage in [rng.bytes(1), rng.bytes(31), [UInt8](repeating: 0, count: 32), [UInt8](repeating: 0, count: 5000)] {
            let copy = temporaryDatabasePath("torn-garbage")
            defer { removeItem(copy) }
            try copyDatabaseFiles(from: path, to: copy)
            try writeFile(copy + "/wal", Array(try readFile(copy + "/wal").prefix(Int(sizes.last!))) + garbage)
            let recovered = try ValueBox(path: copy)
            #expect(recovered.transactionStateVersion == 6)
            #expect(try recovered.count(bin) == 6)
            #expect(try recovered.check().problems == [])
            #expect(try recovered.statistics().walBytes == sizes.last, "the torn tail was cut off")
            // New commits after recovery are found by the next recovery (they are not hidden behind garbage).
            try recovered.begin()
            try recovered.set(bin, key: bkey([200]), value: mbuf([200]))
            try recovered.commit()
            let copy2 = temporaryDatabasePath("torn-garbage2")
            defer { removeItem(copy2) }
            try copyDatabaseFiles(from: copy, to: copy2)
            let again = try ValueBox(path: copy2)
            #expect(again.transactionStateVersion == 7)
            #expect(try again.bytes(bin, bkey([200])) == [200])
            try again.close()
            try recovered.close()
        }

        // 2. The last record cut short at various points: the earlier commits survive.
        let lastStart = sizes[4], lastEnd = sizes[5]
        for cut in [lastStart + 1, lastStart + 16, lastStart + 31, lastStart + 32, lastStart + 33, (lastStart + lastEnd) / 2, lastEnd - 1] {
            let copy = temporaryDatabasePath("torn-cut")
            defer { removeItem(copy) }
            try copyDatabaseFiles(from: path, to: copy)
            try writeFile(copy + "/wal", Array(try readFile(copy + "/wal").prefix(Int(cut))))
            let recovered = try ValueBox(path: copy)
            #expect(recovered.transactionStateVersion == 5, "cut at \(cut)")
            #expect(try recovered.count(bin) == 5)
            #expect(try recovered.exists(bin, key: bkey([5])) == false)
            #expect(try recovered.bytes(bin, bkey([4])) == [UInt8](repeating: 4, count: 400))
            #expect(try recovered.check().problems == [])
            try recovered.close()
        }

        // 3. Damage in the middle of the log — a flipped bit inside the third record, with intact records after
        //    it written in this boot (the shared header says so) — is refused with the offset of the record,
        //    never silently dropped: the commits after it were acknowledged.
        for damageAt in [Int(sizes[2]) + 40, Int(sizes[2]) + 3] {
            let copy = temporaryDatabasePath("torn-flip")
            defer { removeItem(copy) }
            try copyDatabaseFiles(from: path, to: copy)
            try writeFile(copy + "/header", try readFile(path + "/header"))
            var wal = try readFile(copy + "/wal")
            wal[damageAt] ^= 0x01
            try writeFile(copy + "/wal", wal)
            let error = expectError("corrupted") { _ = try ValueBox(path: copy) }
            #expect(error?.description.contains("WAL record at offset \(sizes[2]) is damaged, but an intact record") == true)
            #expect(try readFile(copy + "/wal") == wal, "a refused open leaves the files alone")
        }
        // Random bytes after the last record: nothing intact follows the damage, so it is a torn tail.
        do {
            let copy = temporaryDatabasePath("torn-random-tail")
            defer { removeItem(copy) }
            try copyDatabaseFiles(from: path, to: copy)
            try writeFile(copy + "/header", try readFile(path + "/header"))
            try writeFile(copy + "/wal", Array(try readFile(copy + "/wal").prefix(Int(sizes.last!))) + rng.bytes(5000))
            let recovered = try ValueBox(path: copy)
            #expect(recovered.transactionStateVersion == 6)
            #expect(recovered.lastRecovery?.tornTailOffset == sizes[5])
            #expect(try recovered.statistics().walBytes == sizes.last, "the torn tail was cut off")
            try recovered.close()
        }

        // 4. A WAL cut inside its header, or missing entirely: the checkpointed state opens.
        for walBytes in [0, 10, -1] {
            let copy = temporaryDatabasePath("torn-header")
            defer { removeItem(copy) }
            try copyDatabaseFiles(from: path, to: copy)
            if walBytes < 0 { removeItem(copy + "/wal") } else { try writeFile(copy + "/wal", Array(try readFile(copy + "/wal").prefix(walBytes))) }
            let recovered = try ValueBox(path: copy)
            #expect(recovered.transactionStateVersion == 1)
            #expect(try recovered.allEntries(bin).map(\.0) == [[0]])
            #expect(try recovered.check().problems == [])
            try recovered.begin()
            try recovered.set(bin, key: bkey([9]), value: mbuf([9]))
            try recovered.commit()
            try recovered.close()
            let reopened = try ValueBox(path: copy)
            #expect(try reopened.allEntries(bin).map(\.0) == [[0], [9]])
            try reopened.close()
        }
    }

    @Test func readOnlyOpenReplaysWithoutWriting() throws {
        let path = temporaryDatabasePath("readonly")
        let copy = temporaryDatabasePath("readonly-copy")
        defer { removeItem(path); removeItem(copy) }
        expectError("notABoxwoodDatabase") { _ = try ValueBox(path: path, options: ValueBoxOptions(readOnly: true)) }
        #expect(!FileManager.default.fileExists(atPath: path), "a read-only open creates nothing")
        let (box, _) = try walWithCommits(path, commits: 3)
        try copyDatabaseFiles(from: path, to: copy)
        try box.close()
        let dataBefore = try readFile(copy + "/data"), walBefore = try readFile(copy + "/wal")
        let ro = try ValueBox(path: copy, options: ValueBoxOptions(readOnly: true))
        #expect(ro.transactionStateVersion == 4)
        #expect(try ro.count(bin) == 4)
        #expect(try ro.check().problems == [])
        expectError("readOnly") { try ro.begin(); try ro.set(bin, key: bkey([1]), value: mbuf([1])) }
        ro.abort()
        expectError("readOnly") { try ro.checkpoint() }
        expectError("readOnly") { try ro.drop() }
        // Two read-only openers may share the database.
        let ro2 = try ValueBox(path: copy, options: ValueBoxOptions(readOnly: true))
        #expect(try ro2.count(bin) == 4)
        try ro2.close()
        try ro.close()
        #expect(try readFile(copy + "/data") == dataBefore)
        #expect(try readFile(copy + "/wal") == walBefore)
    }

    @Test func twoValueBoxesShareOneDatabase() throws {
        try withTemporaryBox("share") { box, path in
            var options = ValueBoxOptions()
            options.lockTimeout = 0.2
            let other = try ValueBox(path: path, options: options)
            let reader = try ValueBox(path: path, options: ValueBoxOptions(readOnly: true))
            try box.begin()
            try box.set(bin, key: bkey([1]), value: mbuf([1]))
            // The writer lock is taken: a second writer times out with a typed error, readers go on.
            expectError("lockTimeout") { try other.begin() }
            #expect(try other.get(bin, key: bkey([1])) == nil)
            #expect(try reader.count(bin) == 0)
            try box.commit()
            // Every value box sees the commit at its next call, and the version without any I/O.
            #expect(other.transactionStateVersion == 1 && reader.transactionStateVersion == 1)
            #expect(try other.bytes(bin, bkey([1])) == [1])
            #expect(try reader.bytes(bin, bkey([1])) == [1])
            try other.begin()
            #expect(other.lastBeginSawExternalCommits)
            try other.set(bin, key: bkey([2]), value: mbuf([2]))
            try other.commit()
            try other.checkpoint()
            #expect(try box.bytes(bin, bkey([2])) == [2])
            #expect(try reader.count(bin) == 2)
            #expect(try box.check().problems == [])
            try reader.close()
            try other.close()
        }
    }

    @Test func closeAndDrop() throws {
        let path = temporaryDatabasePath("drop")
        defer { removeItem(path) }
        let box = try ValueBox(path: path)
        try box.begin()
        for i in 0..<1000 { try box.set(ints, key: ikey(Int64(i)), value: mbuf([UInt8](repeating: 1, count: 100))) }
        try box.commit()
        try box.drop()
        #expect(try box.allTables().isEmpty)
        #expect(box.transactionStateVersion == 2)
        #expect(try box.check().problems == [])
        try box.begin()
        try box.set(bin, key: bkey([1]), value: mbuf([1]))
        try box.commit()
        try box.close()
        try box.close()   // closing twice is fine
        expectError("closed") { _ = try box.get(bin, key: bkey([1])) }
        expectError("closed") { try box.begin() }
        expectError("closed") { _ = try box.check() }
        let reopened = try ValueBox(path: path)
        #expect(try reopened.allTables() == [bin])
        #expect(reopened.transactionStateVersion == 3)
        try reopened.close()
    }

    @Test func frequentCheckpointsAndReopensKeepLargeTreesIntact() throws {
        let path = temporaryDatabasePath("many")
        defer { removeItem(path) }
        var options = ValueBoxOptions(durability: .off)
        options.checkpointWALBytes = 16 << 10
        var rng = SplitMix64(seed: 99)
        var expected: [Int64: Int] = [:]
        for round in 0..<6 {
            let box = try ValueBox(path: path, options: options)
            try box.begin()
            for _ in 0..<3000 {
                let k = Int64(rng.below(20_000)) - 10_000
                let n = rng.below(60)
                try box.set(ints, key: ikey(k), value: mbuf([UInt8](repeating: UInt8(n), count: n)))
                expected[k] = n
            }
            try box.commit()
            try box.begin()
            let low = Int64(rng.below(20_000)) - 10_000
            try box.removeRange(ints, start: ikey(low + 1500), end: ikey(low))
            for k in expected.keys where k >= low && k <= low + 1500 { expected[k] = nil }
            try box.commit()
            #expect(try box.count(ints) == expected.count, "round \(round)")
            #expect(try box.check().problems == [], "round \(round)")
            try box.close()
        }
        let box = try ValueBox(path: path)
        var keys: [Int64] = []
        try box.scanInt64(ints, values: { k, v in
            keys.append(k)
            #expect(v.length == expected[k])
            return true
        })
        #expect(keys == expected.keys.sorted())
        try box.close()
    }
}

@Suite struct LentRangeTests {
    /// `withRange` lends the same entries, in the same order, with the same bounds and limits as `range`:
    /// both key types, both directions, inline, compressed and overflow values.
    @Test func withRangeMatchesRange() throws {
        try withTemporaryBox("lent") { box, _ in
            var rng = SplitMix64(seed: 0x1E47)
            let binary = ValueBoxTable(id: 1, keyType: .binary)
            let integers = ValueBoxTable(id: 2, keyType: .int64)
            try box.begin()
            for i in 0..<600 {
                let value: [UInt8] = i % 50 == 0 ? [UInt8](repeating: UInt8(i % 7), count: 9000)       // overflow, LZ4
                    : i % 13 == 0 ? Array(String(repeating: "text \(i) ", count: 60).utf8) : rng.bytes(1 + rng.below(200))
                try box.set(binary, key: bkey(rng.bytes(1 + rng.below(6))), value: mbuf(value))
                try box.set(integers, key: ikey(Int64(rng.below(2000)) - 1000), value: mbuf(value))
            }
            try box.commit()
            for trial in 0..<300 {
                let table = trial % 2 == 0 ? binary : integers
                let start = table.keyType == .int64 ? ikey(Int64(rng.below(2400)) - 1200) : bkey(rng.bytes(rng.below(4)))
                let end = table.keyType == .int64 ? ikey(Int64(rng.below(2400)) - 1200) : bkey(rng.bytes(rng.below(4)))
                let limit = rng.below(4) == 0 ? 0 : rng.below(40)
                var copied: [([UInt8], [UInt8])] = []
                try box.range(table, start: start, end: end, values: { k, v in copied.append((k.byteArray, v.makeArray())); return true }, limit: limit)
                var lent: [([UInt8], [UInt8])] = []
                try box.withRange(table, start: start, end: end, limit: limit) { k, v in lent.append((Array(k), Array(v))); return true }
                #expect(lent.count == copied.count, "trial \(trial)")
                #expect(zip(lent, copied).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }, "trial \(trial)")
            }
            // Stopping early.
            var seen = 0
            try box.withRange(binary, start: bkey([]), end: bkey([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]), limit: 0) { _, _ in seen += 1; return seen < 5 }
            #expect(seen == 5)
        }
    }
}
