/// One fuzz target: a function that takes arbitrary bytes and must never crash, hang or leak on any of them,
/// plus what `make fuzz` needs to run it (seed inputs, libFuzzer options).
///
/// Every target is deterministic for a given input (up to random salts and ids that do not change which code
/// runs), so a saved crash input reproduces with ``run``.
public struct FuzzTarget: Sendable {
    /// The name used on the command line and as the corpus directory (`Fuzz/Corpus/<name>`).
    public let name: String
    /// What the target feeds the bytes to (one line, for `--list`).
    public let summary: String
    /// Runs one input. Crashes (traps, sanitizer reports) are findings; thrown engine errors are not.
    public let run: @Sendable (UnsafeRawBufferPointer) -> Void
    /// The seed inputs (name and bytes), made with the real encoders so that fuzzing starts from valid input.
    public let seeds: @Sendable () throws -> [(name: String, bytes: [UInt8])]
    /// Extra libFuzzer options this target wants (`-max_len`, `-dict`, ...; a relative path is relative to `Fuzz/`).
    public let libFuzzerOptions: [String]

    /// Runs the target on `bytes`.
    public func fuzzOne(_ bytes: UnsafeRawBufferPointer) { run(bytes) }
}

/// The registry of every fuzz target.
public enum FuzzTargets {
    /// All targets, in the order `make fuzz` runs them.
    public static let all: [FuzzTarget] = [
        OpenDatabaseFuzzer.target,
        WALRecordFuzzer.target,
        PageFuzzer.target,
        PostboxDecoderFuzzer.target,
        SyncWireFuzzer.target,
    ]

    /// The target called `name`, if any.
    public static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }
}

/// Reads an input front to back. Reads past the end yield zeros (and empty byte runs), so every input is usable.
struct FuzzInput {
    let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { offset >= bytes.count }
    var remaining: Int { max(0, bytes.count - offset) }

    mutating func u8() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16() -> Int { Int(u8()) | Int(u8()) << 8 }

    mutating func u32() -> UInt32 { UInt32(u16()) | UInt32(u16()) << 16 }

    mutating func u64() -> UInt64 { UInt64(u32()) | UInt64(u32()) << 32 }

    mutating func i32() -> Int32 { Int32(bitPattern: u32()) }

    /// Up to `count` bytes (fewer at the end of the input).
    mutating func take(_ count: Int) -> [UInt8] {
        let n = max(0, min(count, remaining))
        defer { offset += n }
        return Array(bytes[offset..<offset + n])
    }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] { take(remaining) }
}

/// Little-endian helpers for building inputs and files.
extension Array where Element == UInt8 {
    mutating func appendLE(_ value: UInt16) { append(UInt8(truncatingIfNeeded: value)); append(UInt8(truncatingIfNeeded: value >> 8)) }
    mutating func appendLE(_ value: UInt32) { for i in 0..<4 { append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(i)))) } }
    mutating func appendLE(_ value: UInt64) { for i in 0..<8 { append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) } }

    func loadLE64(_ offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<8 where offset + i < count { value |= UInt64(self[offset + i]) << (8 * UInt64(i)) }
        return value
    }

    func loadLE32(_ offset: Int) -> UInt32 {
        var value: UInt32 = 0
        for i in 0..<4 where offset + i < count { value |= UInt32(self[offset + i]) << (8 * UInt32(i)) }
        return value
    }

    mutating func storeLE64(_ value: UInt64, at offset: Int) {
        for i in 0..<8 where offset + i < count { self[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
    }
}
