import BoxwoodLZ4
import Testing

/// Malformed blocks: every one either throws an `LZ4BlockError` or decodes to what the reference decoder makes of it,
/// and never writes outside its destination (the canaries of `swiftDecompress`).
@Suite("LZ4 block codec: hostile input")
struct LZ4HostileInputTests {
    /// Checks one input against the reference decoder at `capacity`.
    private func check(_ block: [UInt8], capacity: Int, _ context: Comment) {
        let reference = ReferenceDecoder.decode(block, capacity: capacity)
        switch swiftDecompress(block, capacity: capacity) {
        case let .success(bytes): #expect(bytes == reference, context)
        case let .failure(error): #expect(reference == nil, "\(context): threw \(error) on a valid block")
        }
    }

    @Test("Specific malformed blocks throw the specific error")
    func specificErrors() {
        let a = UInt8(ascii: "a")
        // Empty source, and a source that ends where a token should be.
        #expect(swiftDecompress([], capacity: 10) == .failure(.truncatedInput))
        #expect(swiftDecompress([0x14, a, 0x01, 0x00], capacity: 100) == .failure(.truncatedInput))
        // Literals, offsets and length bytes cut short.
        #expect(swiftDecompress([0x40, a, a], capacity: 10) == .failure(.truncatedInput))
        #expect(swiftDecompress([0x14, a, 0x01], capacity: 10) == .failure(.truncatedInput))
        #expect(swiftDecompress([0xF0, 0xFF, 0xFF], capacity: 1_000) == .failure(.truncatedInput))
        #expect(swiftDecompress([0x1F, a, 0x01, 0x00, 0xFF], capacity: 1_000) == .failure(.truncatedInput))
        // Offset 0, and offsets reaching before the start of the output.
        #expect(swiftDecompress([0x10, a, 0x00, 0x00, 0x00], capacity: 100) == .failure(.offsetOutOfRange(offset: 0, position: 1)))
        #expect(swiftDecompress([0x10, a, 0x02, 0x00, 0x00], capacity: 100) == .failure(.offsetOutOfRange(offset: 2, position: 1)))
        #expect(swiftDecompress([0x00, 0x01, 0x00, 0x00], capacity: 100) == .failure(.offsetOutOfRange(offset: 1, position: 0)))
        #expect(swiftDecompress([0x10, a, 0xFF, 0xFF, 0x00], capacity: 100_000) == .failure(.offsetOutOfRange(offset: 65535, position: 1)))
        // Destinations too small for literals and for a match.
        #expect(swiftDecompress([0x40, a, a, a, a], capacity: 3) == .failure(.outputTooSmall))
        #expect(swiftDecompress([0x14, a, 0x01, 0x00, 0x50, a, a, a, a, a], capacity: 13) == .failure(.outputTooSmall))
        #expect(swiftDecompress([0x14, a, 0x01, 0x00, 0x50, a, a, a, a, a], capacity: 14).map(\.count) == .success(14))
    }

    @Test("Lengths of millions made of 255 bytes throw before any sum can overflow")
    func overflowingLengths() {
        let a = UInt8(ascii: "a")
        let ff = [UInt8](repeating: 0xFF, count: 200_000)
        // A literal length of about 51 million with a few bytes of input.
        #expect(swiftDecompress([0xF0] + ff + [0x00, a, a], capacity: 1 << 20) == .failure(.truncatedInput))
        // A match length of about 51 million.
        #expect(swiftDecompress([0x1F, a, 0x01, 0x00] + ff + [0x00, 0x00], capacity: 1 << 20) == .failure(.outputTooSmall))
        // Length bytes that run to the end of the input.
        #expect(swiftDecompress([0x1F, a, 0x01, 0x00] + ff, capacity: 1 << 20) == .failure(.outputTooSmall))
        #expect(swiftDecompress([0x1F, a, 0x01, 0x00] + ff[..<100], capacity: 1 << 20) == .failure(.truncatedInput))
        #expect(swiftDecompress([0xF0] + ff[..<100], capacity: 1 << 20) == .failure(.truncatedInput))
    }

    @Test("Every truncation and every too-small destination of valid blocks fails or agrees with the reference")
    func truncationsAndSmallDestinations() throws {
        var rng = testRandom(201)
        for kind in DataKind.allCases {
            for size in [1, 13, 40, 300, 2_000] {
                let input = makeData(kind, count: size, &rng)
                let block = try #require(swiftCompress(input))
                let context: Comment = "seed \(lz4TestSeed), \(kind.rawValue), \(size) bytes"
                for cut in 0..<block.count { check(Array(block[..<cut]), capacity: size, "\(context), cut at \(cut)") }
                for capacity in [0, 1, size / 2, size - 1] where capacity < size {
                    if case .success = swiftDecompress(block, capacity: capacity) {
                        Issue.record("\(context): decoded \(size) bytes into \(capacity)")
                    }
                }
            }
        }
    }

    @Test("Thousands of random and mutated blocks fail or agree with the reference")
    func garbage() throws {
        var rng = testRandom(301)
        // Random bytes, biased towards the interesting token and length values.
        for n in 0..<4_000 {
            let count = rng.inRange(0...80)
            let block = (0..<count).map { _ in rng.below(4) == 0 ? [0x00, 0x0F, 0xF0, 0xFF, 0x01, 0x10][rng.below(6)] : rng.byte() }
            check(block, capacity: rng.inRange(0...600), "seed \(lz4TestSeed), random block \(n)")
        }
        // Valid blocks with one to three bytes changed, or a piece removed or inserted.
        for n in 0..<2_000 {
            let input = makeData(DataKind.allCases[rng.below(DataKind.allCases.count)], count: rng.inRange(1...1_500), &rng)
            var block = try #require(swiftCompress(input))
            switch rng.below(3) {
            case 0:
                for _ in 0..<rng.inRange(1...3) { block[rng.below(block.count)] = rng.byte() }
            case 1:
                let start = rng.below(block.count)
                block.removeSubrange(start..<min(block.count, start + rng.inRange(1...4)))
            default:
                block.insert(contentsOf: rng.bytes(rng.inRange(1...4)), at: rng.below(block.count + 1))
            }
            check(block, capacity: input.count + rng.inRange(0...20), "seed \(lz4TestSeed), mutated block \(n)")
        }
    }
}
