import BoxwoodLZ4
import Testing

@Suite("LZ4 block codec")
struct LZ4BlockTests {
    // MARK: Known encodings

    @Test("Hand-made blocks decode to the bytes the format defines")
    func knownBlocks() throws {
        let abcd: [UInt8] = Array("abcd".utf8)
        // One literal run of 4 bytes.
        #expect(try swiftDecompress([0x40] + abcd, capacity: 4).get() == abcd)
        // The empty block.
        #expect(try swiftDecompress([0x00], capacity: 0).get() == [])
        #expect(try swiftDecompress([0x00], capacity: 10).get() == [])
        // 'a', then a match at offset 1 of 4 + 4 bytes (overlapping: the byte repeats), then 5 literals.
        let runBlock: [UInt8] = [0x14, 0x61, 0x01, 0x00, 0x50] + Array("bcdef".utf8)
        #expect(try swiftDecompress(runBlock, capacity: 100).get() == Array("aaaaaaaaabcdef".utf8))
        // "abc", a match at offset 3 of 15 + 2 + 4 = 21 bytes (extra length byte 2), then "xyzzy".
        let patternBlock: [UInt8] = [0x3F] + Array("abc".utf8) + [0x03, 0x00, 0x02, 0x50] + Array("xyzzy".utf8)
        #expect(try swiftDecompress(patternBlock, capacity: 29).get() == Array((String(repeating: "abc", count: 8) + "xyzzy").utf8))
        // A block ending in fewer than 5 literals breaks a writer rule, but the reader does not need it.
        #expect(try swiftDecompress([0x14, 0x61, 0x01, 0x00, 0x10, 0x62], capacity: 10).get() == Array("aaaaaaaaab".utf8))
        // A 15 + 255 + 10 = 280-byte literal run.
        let long = (0..<280).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        #expect(try swiftDecompress([0xF0, 0xFF, 0x0A] + long, capacity: 280).get() == long)
        // A literal run of exactly 15: nibble 15 and an extra byte of 0.
        let fifteen = Array("fifteen bytes!!".utf8)
        #expect(try swiftDecompress([0xF0, 0x00] + fifteen, capacity: 15).get() == fifteen)
    }

    @Test("Known inputs compress to the expected bytes")
    func knownCompressions() {
        #expect(swiftCompress([]) == [0x00])
        #expect(swiftCompress(Array("abcd".utf8)) == [0x40] + Array("abcd".utf8))
        // 12 bytes: under the 13-byte minimum, so literals only, even though they repeat.
        #expect(swiftCompress([UInt8](repeating: 7, count: 12)) == [0xC0] + [UInt8](repeating: 7, count: 12))
        // 32 zeros: one literal, a match at offset 1 of 26 bytes (nibble 15, extra 7), the last 5 bytes as literals.
        #expect(swiftCompress([UInt8](repeating: 0, count: 32)) == [0x1F, 0x00, 0x01, 0x00, 0x07, 0x50, 0, 0, 0, 0, 0])
        // 15 literals need the extra byte 0.
        let fifteen = Array("abcdefghijklmno".utf8)
        #expect(swiftCompress(fifteen) == [0xF0, 0x00] + fifteen)
    }

    @Test("compressBound is count + count / 255 + 16, and 0 past the maximum input")
    func bounds() {
        #expect(LZ4Block.compressBound(0) == 16)
        #expect(LZ4Block.compressBound(255) == 272)
        #expect(LZ4Block.compressBound(1 << 20) == (1 << 20) + (1 << 20) / 255 + 16)
        #expect(LZ4Block.compressBound(LZ4Block.maxInputSize + 1) == 0)
        #expect(LZ4Block.compressBound(-1) == 0)
    }

    // MARK: Round trips

    /// The sizes of the round trips: empty, every size under the 13-byte minimum and around it, both sides of the
    /// token and length thresholds, of the 5-byte hash (1536) and of the 16-bit table limit (65547), and, for the
    /// kinds that mix all the others or make the longest matches, up to 1 MiB (debug builds are slow).
    static func sizes(_ kind: DataKind) -> [Int] {
        let common = Array(0...40) + [63, 64, 65, 100, 254, 255, 256, 269, 270, 271, 1_000, 1_535, 1_536, 4_096, 10_000,
                                      65_535, 65_536, 65_546, 65_547, 65_548, 65_549, 100_000]
        return kind == .mixed || kind == .zeros ? common + [300_000, 1 << 20] : common
    }

    @Test("Round trips of every data kind and size agree with the reference decoder and keep the writer rules",
          arguments: DataKind.allCases)
    func roundTrips(kind: DataKind) throws {
        var rng = testRandom(UInt64(DataKind.allCases.firstIndex(of: kind)!) + 1)
        var sizes = LZ4BlockTests.sizes(kind)
        for _ in 0..<20 { sizes.append(rng.inRange(16...70_000)) }
        for size in sizes {
            let input = makeData(kind, count: size, &rng)
            let context: Comment = "seed \(lz4TestSeed), \(kind.rawValue), \(size) bytes"
            let block = try #require(swiftCompress(input), context)
            #expect(block.count <= LZ4Block.compressBound(size), context)
            #expect(ReferenceDecoder.writerRuleViolation(block, decodedCount: size) == nil, context)
            #expect(ReferenceDecoder.decode(block, capacity: size) == input, context)
            // Exactly the size, and with room to spare (the wild copies take other paths then).
            #expect(try swiftDecompress(block, capacity: size).get() == input, context)
            #expect(try swiftDecompress(block, capacity: size + 100).get() == input, context)
            // The codec must also compress: short repeats to under a quarter, words and long copies after a random start
            // to under three quarters.
            if size >= 1_000 {
                switch kind {
                case .zeros, .pattern, .shortOffsets: #expect(block.count < size / 4, context)
                case .text, .longMatches: #expect(block.count < size * 3 / 4, context)
                case .random, .longLiterals, .mixed: break
                }
            }
        }
    }

    @Test("compress returns nil when the destination is too small, and fits exactly its own size")
    func compressIntoSmallDestinations() throws {
        var rng = testRandom(101)
        for kind in DataKind.allCases {
            for size in [0, 1, 12, 13, 20, 100, 300, 5_000] {
                let input = makeData(kind, count: size, &rng)
                let context: Comment = "seed \(lz4TestSeed), \(kind.rawValue), \(size) bytes"
                let block = try #require(swiftCompress(input), context)
                #expect(swiftCompress(input, capacity: block.count) == block, context)
                #expect(swiftCompress(input, capacity: 0) == nil, context)
                let shorter = block.count <= 64 ? Array(0..<block.count) : Array(0..<8) + Array(block.count - 40..<block.count) + [block.count / 2]
                for capacity in shorter {
                    #expect(swiftCompress(input, capacity: capacity) == nil, "\(context), capacity \(capacity)")
                }
            }
        }
    }
}
