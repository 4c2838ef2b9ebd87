#if canImport(CLZ4)
import BoxwoodLZ4
import CLZ4
import Testing

/// liblz4 through its C API: `LZ4_compress_default` and `LZ4_decompress_safe`.
enum LibLZ4 {
    static func compress(_ input: [UInt8]) -> [UInt8] {
        let bound = Int(LZ4_compressBound(Int32(input.count)))
        var out = [UInt8](repeating: 0, count: bound)
        // One spare byte, so that the source pointer is real even for an empty input.
        let padded = input + [0]
        let written = padded.withUnsafeBytes { source in
            out.withUnsafeMutableBytes { target in
                LZ4_compress_default(source.baseAddress!.assumingMemoryBound(to: CChar.self),
                                     target.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(input.count), Int32(bound))
            }
        }
        precondition(written > 0, "LZ4_compress_default failed")
        out.removeLast(out.count - Int(written))
        return out
    }

    /// The decoded bytes, or nil when liblz4 rejects the block at `capacity`.
    static func decompress(_ block: [UInt8], capacity: Int) -> [UInt8]? {
        guard !block.isEmpty else { return nil }
        var out = [UInt8](repeating: 0, count: max(capacity, 1))
        let produced = block.withUnsafeBytes { source in
            out.withUnsafeMutableBytes { target in
                LZ4_decompress_safe(source.baseAddress?.assumingMemoryBound(to: CChar.self),
                                    target.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(block.count), Int32(capacity))
            }
        }
        guard produced >= 0 else { return nil }
        return Array(out[..<Int(produced)])
    }
}

@Suite("LZ4 block codec: compatibility with liblz4")
struct LZ4CompatibilityTests {
    @Test("The bounds equal LZ4_compressBound")
    func bounds() {
        for count in Array(0...600) + [65_535, 65_536, 1 << 20, Int(LZ4_MAX_INPUT_SIZE), Int(LZ4_MAX_INPUT_SIZE) + 1] {
            #expect(LZ4Block.compressBound(count) == Int(LZ4_compressBound(Int32(count))), "\(count)")
        }
        #expect(LZ4Block.maxInputSize == Int(LZ4_MAX_INPUT_SIZE))
    }

    @Test("Each codec reads the other's blocks", arguments: DataKind.allCases)
    func crossDecoding(kind: DataKind) throws {
        var rng = testRandom(401 + UInt64(DataKind.allCases.firstIndex(of: kind)!))
        var sizes = LZ4BlockTests.sizes(kind)
        for _ in 0..<10 { sizes.append(rng.inRange(16...70_000)) }
        // The greedy matchers are alike, not identical: one block can differ by a third when a few long copies are
        // found at different places (seen: 1,048 against 800 bytes), so the sizes are compared over every block of
        // 4 KiB or more of this kind of data.
        var oursTotal = 0
        var theirsTotal = 0
        var sizesCompared: [String] = []
        for size in sizes {
            let input = makeData(kind, count: size, &rng)
            let context: Comment = "seed \(lz4TestSeed), \(kind.rawValue), \(size) bytes"
            // liblz4 checks the end-of-block rules against the destination's end: an exact capacity is the strictest.
            let ours = try #require(swiftCompress(input), context)
            #expect(LibLZ4.decompress(ours, capacity: size) == input, context)
            let theirs = LibLZ4.compress(input)
            #expect(try swiftDecompress(theirs, capacity: size).get() == input, context)
            if size >= 4_096 {
                oursTotal += ours.count
                theirsTotal += theirs.count
                sizesCompared.append("\(size): \(ours.count) vs \(theirs.count)")
            }
        }
        #expect(Double(oursTotal) <= Double(theirsTotal) * 1.10 + 16,
                "seed \(lz4TestSeed), \(kind.rawValue): \(oursTotal) vs liblz4 \(theirsTotal) bytes (\(sizesCompared.joined(separator: ", ")))")
    }

    @Test("Hand-made blocks decode the same in both")
    func handMadeBlocks() throws {
        let blocks: [[UInt8]] = [
            [0x00],
            [0x40, 0x61, 0x62, 0x63, 0x64],
            [0x14, 0x61, 0x01, 0x00, 0x50] + Array("bcdef".utf8),
            [0x3F] + Array("abc".utf8) + [0x03, 0x00, 0x02, 0x50] + Array("xyzzy".utf8),
        ]
        for block in blocks {
            #expect(LibLZ4.decompress(block, capacity: 100) == (try? swiftDecompress(block, capacity: 100).get()), "\(block)")
        }
    }

    /// liblz4 1.9 accepts offset 0 (its match copies the destination's own bytes: zeros here); LZ4Block rejects it,
    /// as the format description says. Otherwise they accept the same blocks and make the same bytes.
    @Test("Mutated blocks: whatever liblz4 accepts, LZ4Block decodes to the same bytes, except offset 0")
    func garbageAgreement() throws {
        var rng = testRandom(501)
        var accepted = 0
        for n in 0..<3_000 {
            let input = makeData(DataKind.allCases[rng.below(DataKind.allCases.count)], count: rng.inRange(1...800), &rng)
            var block = LibLZ4.compress(input)
            for _ in 0..<rng.inRange(1...2) { block[rng.below(block.count)] = rng.byte() }
            let capacity = input.count + rng.inRange(0...64)
            let context: Comment = "seed \(lz4TestSeed), block \(n): \(block), capacity \(capacity)"
            guard let theirs = LibLZ4.decompress(block, capacity: capacity) else { continue }
            accepted += 1
            #expect(ReferenceDecoder.decode(block, capacity: capacity, zeroOffsetCopiesZeros: true) == theirs, context)
            let ours = try? swiftDecompress(block, capacity: capacity).get()
            #expect(ours == ReferenceDecoder.decode(block, capacity: capacity), context)
            if let ours { #expect(ours == theirs, context) }
        }
        #expect(accepted > 100)
    }
}
#endif
