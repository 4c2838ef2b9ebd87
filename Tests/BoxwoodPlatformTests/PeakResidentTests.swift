import BoxwoodPlatform
import Testing

/// `CurrentProcess.peakResidentBytes` is in bytes on every system (Linux reports kilobytes, Darwin bytes).
@Suite("Peak resident set size")
struct PeakResidentTests {
    @Test("the peak grows by what the process touches, counted in bytes")
    func peakCountsTouchedMemoryInBytes() throws {
        let before = try CurrentProcess.peakResidentBytes()
        // More than any test process has resident: touching every page makes the peak pass it.
        let size = Int(before) + (64 << 20)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 4096)
        defer { buffer.deallocate() }
        for offset in stride(from: 0, to: size, by: 4096) { buffer[offset] = 1 }
        let after = try CurrentProcess.peakResidentBytes()
        #expect(before > 1 << 20, "a running test process has more than a megabyte resident (kilobytes not converted?)")
        #expect(after >= UInt64(size), "the peak \(after) is below the \(size) bytes just touched")
        #expect(after < UInt64(size) * 4, "the peak \(after) is far above what was touched (bytes counted as kilobytes?)")
    }
}
