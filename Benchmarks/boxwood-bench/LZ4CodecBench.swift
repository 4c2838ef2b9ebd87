import BoxwoodLZ4
import BoxwoodStore
import CLZ4
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `boxwood-bench --lz4-codec`: the pure-Swift LZ4 block codec (BoxwoodLZ4) against liblz4 on text values of 100 B,
/// 4 KiB and 64 KiB (the value pool of the value-size workloads). Each row is the best pass of several over every
/// value, the two codecs' passes alternating (MB/s of uncompressed bytes, MB = 10^6 B). Both decoders decode the same blocks, liblz4's. Every timed
/// pass is checked afterwards: each codec's blocks decode with the other codec to the input, and each decoder's
/// output equals the input byte for byte.
enum LZ4CodecBench {
    /// The value sizes and how many values of each a pass covers.
    private static func cases(_ profile: Profile) -> [(name: String, length: Int, count: Int)] {
        switch profile {
        case .full: return [("100", 100, 40_000), ("4k", 4 << 10, 2_000), ("64k", 64 << 10, 128)]
        case .quick: return [("100", 100, 10_000), ("4k", 4 << 10, 500), ("64k", 64 << 10, 32)]
        case .smoke: return [("100", 100, 200), ("4k", 4 << 10, 20), ("64k", 64 << 10, 4)]
        }
    }

    /// Passes per row (the best counts) and the least time a row runs, by profile.
    private static func rounds(_ profile: Profile) -> (passes: Int, seconds: Double) {
        switch profile {
        case .full: return (10, 2)
        case .quick: return (3, 0.2)
        case .smoke: return (1, 0)
        }
    }

    static func run(profile: Profile, seed: UInt64) throws(BenchError) {
        let pool = ValuePool(.text, seed: SplitMix64.mix(seed ^ 0x4C5A_3443_4F44_4543))
        let (passes, seconds) = rounds(profile)
        #if DEBUG
        let build = "debug (numbers are not meaningful)"
        #else
        let build = "release"
        #endif
        print("boxwood-bench --lz4-codec (\(profile.rawValue) profile, seed \(seed), \(build) build)")
        print("text values; MB/s of uncompressed bytes, best of \(passes) or more alternating passes; decompression of the same (liblz4's) blocks")
        print("box/lz4 = BoxwoodLZ4 MB/s ÷ liblz4 MB/s, above 1 = BoxwoodLZ4 faster")
        print(pad("row", 17) + leftPad("values", 9) + leftPad("liblz4", 11) + leftPad("boxwood", 11) + leftPad("box/lz4", 10))
        var sizeLines: [String] = []
        for (name, length, count) in cases(profile) {
            let corpus = CodecCorpus(pool, length: length, count: count)
            let mb = Double(corpus.rawBytes) / 1e6

            let (compressLib, compressBox) = best(passes, seconds, { corpus.compressWithLibLZ4() }, { corpus.compressWithBoxwood() })
            try corpus.verifyBlocks(row: "compress-" + name)
            let (decompressLib, decompressBox) = best(passes, seconds, { corpus.decompressWithLibLZ4() }, { corpus.decompressWithBoxwood() })
            try corpus.verifyOutputs(row: "decompress-" + name)

            for (row, lib, box) in [("compress-" + name, compressLib, compressBox), ("decompress-" + name, decompressLib, decompressBox)] {
                print(pad(row, 17) + leftPad(grouped(count), 9) + leftPad(fixed(mb / lib, 1), 11) + leftPad(fixed(mb / box, 1), 11)
                    + leftPad(fixed(lib / box, 2) + "x", 10))
            }
            fflushStdout()
            let raw = Double(corpus.rawBytes)
            sizeLines.append(pad(name, 6) + "liblz4 " + fixed(100 * Double(corpus.libCompressedBytes) / raw, 1)
                + "%, boxwood " + fixed(100 * Double(corpus.boxCompressedBytes) / raw, 1) + "%")
        }
        print("")
        print("compressed size (percent of the raw bytes):")
        for line in sizeLines { print("  " + line) }
    }

    /// The least seconds of `passes` or more runs each of `a` and `b`, alternating (so that a busy moment of the
    /// machine costs both alike), running on until `seconds` have passed.
    private static func best(_ passes: Int, _ seconds: Double, _ a: () -> Void, _ b: () -> Void) -> (Double, Double) {
        var bestA = Double.infinity
        var bestB = Double.infinity
        let total = Stopwatch()
        var done = 0
        while done < passes || total.seconds < seconds {
            let watchA = Stopwatch()
            a()
            bestA = min(bestA, watchA.seconds)
            let watchB = Stopwatch()
            b()
            bestB = min(bestB, watchB.seconds)
            done += 1
        }
        return (bestA, bestB)
    }
}

/// The values of one row laid out end to end, each codec's blocks in slots of `compressBound` bytes, and each
/// decoder's output laid out like the input.
private final class CodecCorpus {
    let length: Int
    let count: Int
    let rawBytes: Int
    private let slot: Int
    private let raw: UnsafeMutableRawPointer
    private let libBlocks: UnsafeMutableRawPointer
    private let boxBlocks: UnsafeMutableRawPointer
    private var libSizes: [Int]
    private var boxSizes: [Int]
    private let libOutput: UnsafeMutableRawPointer
    private let boxOutput: UnsafeMutableRawPointer
    /// The sum of the decoded lengths of each decoder's last pass.
    private var libProduced = 0
    private var boxProduced = 0

    init(_ pool: ValuePool, length: Int, count: Int) {
        self.length = length
        self.count = count
        rawBytes = length * count
        slot = LZ4Block.compressBound(length)
        raw = .allocate(byteCount: rawBytes, alignment: 16)
        for i in 0..<count {
            raw.advanced(by: i * length).copyMemory(from: pool.value(i, version: 1, length: length).baseAddress!, byteCount: length)
        }
        libBlocks = .allocate(byteCount: slot * count, alignment: 16)
        boxBlocks = .allocate(byteCount: slot * count, alignment: 16)
        libSizes = [Int](repeating: 0, count: count)
        boxSizes = [Int](repeating: 0, count: count)
        libOutput = .allocate(byteCount: rawBytes, alignment: 16)
        boxOutput = .allocate(byteCount: rawBytes, alignment: 16)
        libOutput.initializeMemory(as: UInt8.self, repeating: 0, count: rawBytes)
        boxOutput.initializeMemory(as: UInt8.self, repeating: 0, count: rawBytes)
    }

    deinit {
        for pointer in [raw, libBlocks, boxBlocks, libOutput, boxOutput] { pointer.deallocate() }
    }

    var libCompressedBytes: Int { libSizes.reduce(0, +) }
    var boxCompressedBytes: Int { boxSizes.reduce(0, +) }

    func compressWithLibLZ4() {
        let (raw, blocks, length, slot) = (self.raw, libBlocks, self.length, self.slot)
        libSizes.withUnsafeMutableBufferPointer { sizes in
            for i in 0..<count {
                sizes[i] = Int(LZ4_compress_default(
                    (raw + i * length).assumingMemoryBound(to: CChar.self), (blocks + i * slot).assumingMemoryBound(to: CChar.self),
                    Int32(length), Int32(slot)))
            }
        }
    }

    func compressWithBoxwood() {
        let (raw, blocks, length, slot) = (self.raw, boxBlocks, self.length, self.slot)
        boxSizes.withUnsafeMutableBufferPointer { sizes in
            for i in 0..<count {
                sizes[i] = LZ4Block.compress(UnsafeRawBufferPointer(start: raw + i * length, count: length),
                                             into: UnsafeMutableRawBufferPointer(start: blocks + i * slot, count: slot)) ?? -1
            }
        }
    }

    func decompressWithLibLZ4() {
        let (blocks, output, length, slot) = (libBlocks, libOutput, self.length, self.slot)
        var produced = 0
        libSizes.withUnsafeBufferPointer { sizes in
            for i in 0..<count {
                produced += Int(LZ4_decompress_safe(
                    (blocks + i * slot).assumingMemoryBound(to: CChar.self), (output + i * length).assumingMemoryBound(to: CChar.self),
                    Int32(sizes[i]), Int32(length)))
            }
        }
        libProduced = produced
    }

    func decompressWithBoxwood() {
        let (blocks, output, length, slot) = (libBlocks, boxOutput, self.length, self.slot)
        var produced = 0
        libSizes.withUnsafeBufferPointer { sizes in
            for i in 0..<count {
                do {
                    produced += try LZ4Block.decompress(UnsafeRawBufferPointer(start: blocks + i * slot, count: sizes[i]),
                                                        into: UnsafeMutableRawBufferPointer(start: output + i * length, count: length))
                } catch {
                    produced -= 1 << 40
                }
            }
        }
        boxProduced = produced
    }

    /// Each codec's blocks decode with the other codec to the input.
    func verifyBlocks(row: String) throws(BenchError) {
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 16)
        defer { scratch.deallocate() }
        for i in 0..<count {
            let input = UnsafeRawBufferPointer(start: raw + i * length, count: length)
            guard libSizes[i] > 0, boxSizes[i] > 0 else {
                throw .mismatch(workload: "lz4-codec " + row, detail: "value \(i) did not compress (liblz4 \(libSizes[i]), boxwood \(boxSizes[i]))")
            }
            scratch.initializeMemory(as: UInt8.self, repeating: 0, count: length)
            let produced = Int(LZ4_decompress_safe(
                (boxBlocks + i * slot).assumingMemoryBound(to: CChar.self), scratch.assumingMemoryBound(to: CChar.self),
                Int32(boxSizes[i]), Int32(length)))
            guard produced == length, bytesEqual(UnsafeRawBufferPointer(start: scratch, count: length), input) else {
                throw .mismatch(workload: "lz4-codec " + row, detail: "liblz4 does not decode BoxwoodLZ4's block of value \(i) to the input")
            }
            scratch.initializeMemory(as: UInt8.self, repeating: 0, count: length)
            let decoded = try? LZ4Block.decompress(UnsafeRawBufferPointer(start: libBlocks + i * slot, count: libSizes[i]),
                                                   into: UnsafeMutableRawBufferPointer(start: scratch, count: length))
            guard decoded == length, bytesEqual(UnsafeRawBufferPointer(start: scratch, count: length), input) else {
                throw .mismatch(workload: "lz4-codec " + row, detail: "BoxwoodLZ4 does not decode liblz4's block of value \(i) to the input")
            }
        }
    }

    /// Each decoder's last pass produced every value, byte for byte.
    func verifyOutputs(row: String) throws(BenchError) {
        let input = UnsafeRawBufferPointer(start: raw, count: rawBytes)
        for (name, output, produced) in [("liblz4", libOutput, libProduced), ("BoxwoodLZ4", boxOutput, boxProduced)] {
            guard produced == rawBytes, bytesEqual(UnsafeRawBufferPointer(start: output, count: rawBytes), input) else {
                throw .mismatch(workload: "lz4-codec " + row, detail: "\(name) decoded \(produced) bytes, expected \(rawBytes) equal to the input")
            }
        }
    }
}
