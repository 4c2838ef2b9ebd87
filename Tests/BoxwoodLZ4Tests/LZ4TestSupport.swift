import BoxwoodLZ4
import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The seeded generator of these tests: the engine's SplitMix64, so that a printed seed replays a run exactly.
typealias TestRandom = SplitMix64

extension SplitMix64 {
    /// Uniform in `range`.
    mutating func inRange(_ range: ClosedRange<Int>) -> Int { range.lowerBound + below(range.count) }

    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
}

/// The seed of every randomized test: `BOXWOOD_LZ4_SEED` (decimal or 0x-hex) replays a run, otherwise a fresh one.
/// Printed once, and part of every failure message.
let lz4TestSeed: UInt64 = {
    let seed: UInt64
    if let text = getenv("BOXWOOD_LZ4_SEED").map({ String(cString: $0) }),
       let value = text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text) {
        seed = value
    } else {
        seed = UInt64.random(in: 0...UInt64.max)
    }
    print("BoxwoodLZ4Tests: seed \(seed) (BOXWOOD_LZ4_SEED=\(seed) replays)")
    return seed
}()

/// A generator for one test: the run's seed mixed with a per-test salt, so tests do not share sequences.
func testRandom(_ salt: UInt64) -> TestRandom {
    var mixer = TestRandom(seed: lz4TestSeed ^ (salt &* 0xA24B_AED4_963E_E407))
    return TestRandom(seed: mixer.next())
}

/// The data the round trips compress.
enum DataKind: String, CaseIterable, Sendable {
    case random, zeros, pattern, text, shortOffsets, longLiterals, longMatches, mixed
}

private let vocabulary = """
    the of and to a in is you that it he was for on are as with his they at be this have from or one had by word \
    message chat photo video sticker voice group channel tonight tomorrow meeting thanks sure okay great later
    """.split(separator: " ").map { Array($0.utf8) }

/// `count` bytes of `kind`.
func makeData(_ kind: DataKind, count: Int, _ rng: inout TestRandom) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(count + 64)
    switch kind {
    case .random:
        out = rng.bytes(count)
    case .zeros:
        out = [UInt8](repeating: 0, count: count)
    case .pattern:
        // A short pattern repeated, with a rare mutation.
        let pattern = rng.bytes(rng.inRange(1...12))
        while out.count < count {
            out.append(rng.below(200) == 0 ? rng.byte() : pattern[out.count % pattern.count])
        }
    case .text:
        while out.count < count {
            out += vocabulary[rng.below(vocabulary.count)]
            out.append(rng.below(8) == 0 ? UInt8(ascii: ".") : UInt8(ascii: " "))
        }
    case .shortOffsets:
        // Runs that repeat the previous 1...8 bytes (overlapping matches), between short random pieces.
        while out.count < count {
            out += rng.bytes(rng.inRange(1...8))
            let offset = min(rng.inRange(1...8), out.count)
            let run = rng.inRange(4...300)
            for _ in 0..<run { out.append(out[out.count - offset]) }
        }
    case .longLiterals:
        // Incompressible runs of 270 bytes or more, between repeats.
        while out.count < count {
            out += rng.bytes(rng.inRange(270...2_000))
            if out.count > 64 {
                let start = rng.below(out.count - 32)
                out += out[start..<start + rng.inRange(4...32)]
            }
        }
    case .longMatches:
        // Copies of 270 bytes or more of earlier data, a few bytes apart.
        out = rng.bytes(min(count, rng.inRange(16...300)))
        while out.count < count {
            let start = rng.below(out.count)
            let length = rng.inRange(270...5_000)
            for i in 0..<length { out.append(out[start + i]) }
            out += rng.bytes(rng.inRange(0...3))
        }
    case .mixed:
        while out.count < count {
            let kind = [DataKind.random, .zeros, .pattern, .text, .shortOffsets, .longLiterals, .longMatches][rng.below(7)]
            out += makeData(kind, count: rng.inRange(1...3_000), &rng)
        }
    }
    if out.count > count { out.removeLast(out.count - count) }
    return out
}

/// Compresses with `LZ4Block` into a destination of `capacity` bytes (default: the bound); nil when it does not fit.
func swiftCompress(_ input: [UInt8], capacity: Int? = nil) -> [UInt8]? {
    var out = [UInt8](repeating: 0, count: capacity ?? LZ4Block.compressBound(input.count))
    let written = input.withUnsafeBytes { source in
        out.withUnsafeMutableBytes { LZ4Block.compress(source, into: $0) }
    }
    guard let written else { return nil }
    precondition(written <= out.count)
    out.removeLast(out.count - written)
    return out
}

/// Decompresses with `LZ4Block` into `capacity` bytes guarded by canary bytes on both sides; a write outside the
/// destination fails the precondition (`#expect` cannot continue after memory corruption anyway).
func swiftDecompress(_ block: [UInt8], capacity: Int) -> Result<[UInt8], LZ4BlockError> {
    let guardBytes = 32
    var buffer = [UInt8](repeating: 0xA5, count: capacity + 2 * guardBytes)
    // An exactly sized copy of the source, so that nothing past it belongs to the same allocation.
    let source = UnsafeMutableRawBufferPointer.allocate(byteCount: block.count, alignment: 1)
    defer { source.deallocate() }
    block.withUnsafeBytes { if !$0.isEmpty { source.copyMemory(from: $0) } }
    let result: Result<Int, LZ4BlockError> = buffer.withUnsafeMutableBytes { whole in
        let destination = UnsafeMutableRawBufferPointer(rebasing: whole[guardBytes..<guardBytes + capacity])
        do throws(LZ4BlockError) {
            return .success(try LZ4Block.decompress(UnsafeRawBufferPointer(source), into: destination))
        } catch {
            return .failure(error)
        }
    }
    precondition(buffer[..<guardBytes].allSatisfy { $0 == 0xA5 } && buffer[(guardBytes + capacity)...].allSatisfy { $0 == 0xA5 },
                 "LZ4Block.decompress wrote outside its destination")
    return result.map { Array(buffer[guardBytes..<guardBytes + $0]) }
}

/// A plain decoder written from the format description with arrays and bounds-checked indexing: the model the
/// fast decoder must agree with on every input (the same bytes, or both an error).
enum ReferenceDecoder {
    struct Failure: Error {}

    /// The decoded bytes, or nil when the block is malformed or needs more than `capacity` bytes. With
    /// `zeroOffsetCopiesZeros`, a match at offset 0 (invalid) makes zeros, as liblz4 1.9 does in a zeroed buffer.
    static func decode(_ block: [UInt8], capacity: Int, zeroOffsetCopiesZeros: Bool = false) -> [UInt8]? {
        var out: [UInt8] = []
        var i = 0
        func length(_ nibble: Int) -> Int? {
            var total = nibble
            guard nibble == 15 else { return total }
            while true {
                guard i < block.count else { return nil }
                let b = Int(block[i])
                i += 1
                total += b
                if b != 255 { return total }
            }
        }
        while true {
            guard i < block.count else { return nil }
            let token = Int(block[i])
            i += 1
            guard let literals = length(token >> 4), literals <= block.count - i, out.count + literals <= capacity else { return nil }
            out += block[i..<i + literals]
            i += literals
            if i == block.count { return out }
            guard block.count - i >= 2 else { return nil }
            let offset = Int(block[i]) | Int(block[i + 1]) << 8
            i += 2
            guard offset > 0 || zeroOffsetCopiesZeros, offset <= out.count, let extra = length(token & 15) else { return nil }
            let match = extra + 4
            guard out.count + match <= capacity else { return nil }
            for _ in 0..<match { out.append(offset == 0 ? 0 : out[out.count - offset]) }
        }
    }

    /// The rules a writer keeps (the reader does not need them): matches of 4 or more at offsets 1...65535, the last
    /// sequence literals only, no match starting in the last 12 bytes, the last 5 bytes literals. nil when kept,
    /// otherwise what broke.
    static func writerRuleViolation(_ block: [UInt8], decodedCount n: Int) -> String? {
        var i = 0
        var produced = 0
        func length(_ nibble: Int) -> Int {
            var total = nibble
            guard nibble == 15 else { return total }
            while true {
                let b = Int(block[i])
                i += 1
                total += b
                if b != 255 { return total }
            }
        }
        while true {
            let token = Int(block[i])
            i += 1
            let literals = length(token >> 4)
            i += literals
            produced += literals
            if i == block.count {
                return n >= 13 || produced == literals ? nil : "a block under 13 bytes has a match"
            }
            let offset = Int(block[i]) | Int(block[i + 1]) << 8
            i += 2
            let match = length(token & 15) + 4
            if offset == 0 { return "offset 0" }
            if produced > n - 12 { return "a match starts at \(produced), in the last 12 bytes of \(n)" }
            if produced + match > n - 5 { return "a match ends at \(produced + match), in the last 5 bytes of \(n)" }
            produced += match
        }
    }
}
